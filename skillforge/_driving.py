"""One body for ``solve()`` and ``asolve()``: the steps of a solve that wait, and two ways to take them.

What a solve does after its first skill (the other variants, the agent, learning, a message of
several requests) is written once, as a generator that *yields* each step that calls out: a
skill run, the agent, a blocking piece of skillforge's own work (learning, a lookup that reads
the disk or the semantic index). ``drive`` takes each step in place (``solve()``); ``adrive``
takes it on the event loop (``asolve()``):

- a skill whose tools are all synchronous runs inline, as in ``solve()``; one that calls an
  ``async def`` tool runs in a worker thread, whose calls to async tools run on the loop
  (``_tools.wait_on_loop``);
- an async agent is awaited on the loop; a synchronous agent (``OpenAIAgent``) runs in a worker
  thread, so that it does not block the loop;
- blocking work runs in a worker thread.

An exception a step raises is thrown into the generator at its ``yield``, so the body handles
it exactly as if the step had been a plain call. Worker threads are skillforge's own (not the
loop's default executor, which tools may need while a skill waits on them), and run with a
copy of the solve's context: its run, its usage count and its loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ._tools import _stopped, is_async_callable, use_asolve

__all__ = ["AgentCall", "Step", "Steps", "adrive", "drive", "is_async_callable"]

WORKERS = 32  # worker threads for asolve(): skills of async tools, synchronous agents, learning


class Step:
    """``fn(*args)``; ``asolve()`` runs it in a worker thread if ``threaded``."""

    __slots__ = ("fn", "args", "threaded")

    def __init__(self, fn: Callable[..., Any], *args: Any, threaded: bool = True) -> None:
        self.fn = fn
        self.args = args
        self.threaded = threaded


class AgentCall:
    """``agent(*args, **kwargs)``: awaited if the agent is async (``asolve()`` only)."""

    __slots__ = ("agent", "args", "kwargs")

    def __init__(self, agent: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.agent = agent
        self.args = args
        self.kwargs = kwargs


Steps = Generator["Step | AgentCall", Any, Any]


def drive(steps: Steps) -> Any:
    """Take every step in place; the generator's return value."""
    try:
        step = next(steps)
        while True:
            try:
                if type(step) is Step:
                    value = step.fn(*step.args)
                else:
                    value = step.agent(*step.args, **step.kwargs)
                    if inspect.isawaitable(value):
                        if inspect.iscoroutine(value):
                            value.close()  # never awaited: close it so Python does not warn about it
                        raise use_asolve("the agent returned an awaitable (it is async)")
            except BaseException as e:  # the body decides, as it would for a plain call
                step = steps.throw(e)
            else:
                step = steps.send(value)
    except StopIteration as stop:
        return stop.value


async def adrive(steps: Steps) -> Any:
    """Take every step on the running event loop; the generator's return value."""
    try:
        step = next(steps)
        while True:
            try:
                value = await _take(step)
            except BaseException as e:  # cancelled too: the body logs what was done, then it goes on up
                step = steps.throw(e)
            else:
                step = steps.send(value)
    except StopIteration as stop:
        return stop.value


async def _take(step: Step | AgentCall) -> Any:
    if type(step) is Step:
        return await offload(step.fn, *step.args) if step.threaded else step.fn(*step.args)
    agent = step.agent
    if is_async_callable(agent):
        return await agent(*step.args, **step.kwargs)
    value = await offload(agent, *step.args, **step.kwargs)
    return await value if inspect.isawaitable(value) else value


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _workers() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="skillforge-asolve")
    return _pool


async def offload(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a worker thread, in a copy of this context.

    Cancelled, it tells the thread to make no further async tool call (``wait_on_loop`` refuses
    them) and waits for the thread to end before passing the cancellation on: a thread cannot be
    interrupted, and a skill or agent must not go on making calls nobody sees.
    """
    loop = asyncio.get_running_loop()
    stopped = threading.Event()
    ctx = contextvars.copy_context()
    ctx.run(_stopped.set, stopped)
    future = asyncio.wrap_future(_workers().submit(ctx.run, fn, *args, **kwargs), loop=loop)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stopped.set()
        while not future.done():
            try:
                await asyncio.wait([future])
            except asyncio.CancelledError:  # cancelled again: still wait for the thread
                continue
        if not future.cancelled():
            future.exception()  # retrieved: the cancellation is what goes on up
        raise
