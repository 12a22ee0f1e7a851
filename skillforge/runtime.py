"""Helpers that generated skills import: ``from skillforge.runtime import require``.

They work the same inside the sandbox and when a skill is imported as a plain
function.
"""

from __future__ import annotations

from ._exceptions import GuardFailed

__all__ = ["require"]


def require(condition: object, why: str) -> None:
    """Stop the skill unless ``condition`` holds; the agent takes over from here.

    Example:
        >>> require(True, "order is not refunded yet")
        >>> require(False, "order is not refunded yet")
        Traceback (most recent call last):
        ...
        skillforge._exceptions.GuardFailed: order is not refunded yet
    """
    if not condition:
        raise GuardFailed(why)
