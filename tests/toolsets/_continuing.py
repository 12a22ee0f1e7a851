"""How the test agents continue after a skill stopped: calls already made come from the transcript."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


def continuing(transcript: Sequence[Any] | None, tools: Mapping[str, Callable[..., Any]]) -> Callable[..., Any]:
    """``call(tool, **args)``: the result of the same call in ``transcript`` (each taken once; a write
    is never made twice), else the tool called now."""
    done = [(c.tool, c.args, c.result) for c in transcript or () if c.error is None]

    def call(tool: str, **args: Any) -> Any:
        for i, (t, a, r) in enumerate(done):
            if t == tool and a == args:
                del done[i]
                return r
        return tools[tool](**args)

    return call
