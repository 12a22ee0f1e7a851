"""Model usage: what the agent of one ``solve()`` spent, reported by the agent itself.

``report_usage()`` is the one way usage is counted, for any agent: ``OpenAIAgent`` calls it
after each model request, and so may any agent (or a tool that calls a model). The count is
scoped to the solve that is running: each solve makes one ``Usage`` and gives it to every run it
makes (a skill's, the agent's that takes over from it), and a run is found through the context
variable that records tool calls (``_tools.current_run``), so a report reaches its solve from
the agent's thread, from an awaited coroutine, or from a thread started with a copy of the
context. ``solve()`` puts the count into the ``Result`` and the run log. (A hit pays for one
small object, not for a context variable of its own.)

Usage is not read from the agent's return value: what an agent returns is its answer, which
is recorded and becomes the skill's return value; folding usage into it would make one value
mean two things. An agent that learns its usage only at the end (a framework's run result)
reports the totals once, just before it returns.
"""

from __future__ import annotations

import threading

from ._tools import current_run

__all__ = ["Usage", "report_usage"]


class Usage:
    """Model requests and tokens counted for one solve (safe to add to from several threads)."""

    __slots__ = ("requests", "prompt_tokens", "completion_tokens")

    def __init__(self) -> None:  # one per solve, hits included: kept to three ints
        self.requests = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def add(self, requests: int, prompt_tokens: int, completion_tokens: int) -> None:
        with _adding:
            self.requests += requests
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens


_adding = threading.Lock()  # reports are rare next to solves: one lock for all counts



def report_usage(*, requests: int = 1, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
    """Count model usage into the ``solve()`` (or ``asolve()``) that is running.

    Call it from your agent once per model request, or once with the totals; a tool that
    calls a model may call it too (its usage is then counted on skill hits as well). The
    counts go into ``result.llm_calls``, ``result.prompt_tokens`` and
    ``result.completion_tokens``, the run log, ``forge.stats()`` and ``skillforge stats``.

    Args:
        requests: model requests made (default 1: one call per request).
        prompt_tokens: tokens sent to the model.
        completion_tokens: tokens the model returned.

    Raises:
        UserError: a count is not a whole number >= 0, or no solve is running in this context.

    Example:
        >>> import skillforge
        >>> def my_agent(task):
        ...     reply = client.responses.create(...)   # doctest: +SKIP
        ...     skillforge.report_usage(prompt_tokens=reply.usage.input_tokens,
        ...                             completion_tokens=reply.usage.output_tokens)
        ...     return reply.output_text
    """
    from ._exceptions import UserError

    for name, value in (("requests", requests), ("prompt_tokens", prompt_tokens), ("completion_tokens", completion_tokens)):
        if type(value) is not int or value < 0:
            raise UserError(f"report_usage({name}=...) takes a whole number >= 0, got {value!r}")
    run = current_run()
    usage = run.usage if run is not None else None
    if usage is None:
        raise UserError(
            "report_usage() was called outside forge.solve(): call it from your agent (or a tool) while "
            "solve() or asolve() runs it; a thread the agent starts does not see the solve unless it runs "
            "with contextvars.copy_context().run (asyncio.to_thread copies it for you)"
        )
    usage.add(requests, prompt_tokens, completion_tokens)
