"""Recording: the tool registry, the ``tool`` decorator and the contextvar recorder.

A decorated tool stays the plain function it was (``functools.wraps``); outside
``solve()`` the wrapper costs one context-variable lookup. Inside ``solve()``
every call is appended to the active ``Run``.

An ``async def`` tool stays a coroutine function (its wrapper is one too): an async agent
awaits it inside ``forge.asolve()``, and outside it returns its coroutine like the plain
function. Skills are plain synchronous code, so ``asolve()`` runs a skill that calls async
tools in a worker thread, where each call goes through the tool's *bridge*: the call is
submitted to the solve's event loop (``asyncio.run_coroutine_threadsafe``) and the thread
waits for its result. The loop is the one ``asolve()`` runs on (the ``_loop`` context
variable, copied into the worker thread).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import threading
import time
from collections.abc import Awaitable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ._exceptions import BudgetExceeded, NotSerializableError, ToolDefinitionError, UserError
from ._schema import FunctionSchema, function_schema, import_problem
from ._trajectory import ToolRef, canonical_json, json_snapshot
from ._values import scalars as _scalars

if TYPE_CHECKING:
    from ._usage import Usage

__all__ = ["Check", "Run", "Tool", "ToolRegistry", "current_run", "spend_built"]

logger = logging.getLogger(__name__)

# What one skill run may do besides its tool calls. Measured on every skill run of the test suite and
# of tau-bench retail (seed 0, 100 learned, 200 served): at most 448 loop iterations and 856 characters
# built in one run, and no integer made by + or * at all. A million counted iterations of a trivial loop
# take ~0.05 s in the sandbox; 16 million characters or list items take 16-128 MB (1 to 8 bytes each).
# An integer of 4,096 bits has 1,234 digits, far past any count, price or id (the policy caps integer
# constants at 10**15, 50 bits).
MAX_ITERATIONS = 1_000_000  # loop iterations: ``for`` statements and comprehensions, all loops together
MAX_BUILT = 16_000_000  # characters or items built by +, *, %, f-strings, str(), repr(), format(), join(), sum()
MAX_INT_BITS = 4096  # the largest integer + and * may make

_current: ContextVar[Run | None] = ContextVar("skillforge_run", default=None)
# the event loop of the asolve() running in this context (None in solve()): async tools called from
# a skill's worker thread run on it
_loop: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar("skillforge_loop", default=None)
# set when the asolve() that started a worker thread was cancelled: the skill makes no further async call
_stopped: ContextVar[threading.Event | None] = ContextVar("skillforge_stopped", default=None)


def current_run() -> Run | None:
    """The run being recorded in this context, or None outside ``solve()``."""
    return _current.get()


def is_async_callable(obj: Any) -> bool:
    """Whether calling ``obj`` makes a coroutine: an ``async def`` function, or an object whose
    ``__call__`` is one."""
    return inspect.iscoroutinefunction(obj) or inspect.iscoroutinefunction(getattr(obj, "__call__", None))


def use_asolve(what: str) -> UserError:
    """The error for async parts met by the synchronous ``solve()``."""
    return UserError(
        f"{what}: use `await forge.asolve(task)` (or `await skillforge.asolve(task)`) from async code, "
        "or `asyncio.run(forge.asolve(task))` from a script; solve() runs without an event loop"
    )


def wait_on_loop(awaitable: Awaitable[Any]) -> Any:
    """Run ``awaitable`` on the event loop of the running ``asolve()`` and wait for its result.

    For synchronous code ``asolve()`` runs in a worker thread (a skill, a synchronous agent such
    as ``OpenAIAgent``) that calls an async tool. The awaitable runs in a copy of this thread's
    context, so the calls it makes are recorded in this thread's run.
    """
    loop = _loop.get()
    if loop is None:
        if inspect.iscoroutine(awaitable):
            awaitable.close()  # never awaited: close it so Python does not warn about it
        raise use_asolve("an async tool was called by synchronous code outside forge.asolve()")
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:  # waiting here would block the loop the call needs: a deadlock
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise UserError("an async tool was called synchronously on the event loop's own thread: await it instead")
    stopped = _stopped.get()
    if stopped is not None and stopped.is_set():
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise BudgetExceeded("the asolve() running this skill was cancelled")

    if not inspect.iscoroutine(awaitable):
        async def call() -> Any:
            return await awaitable

        awaitable = call()
    return asyncio.run_coroutine_threadsafe(awaitable, loop).result()


@dataclass(frozen=True, slots=True)
class Check:
    """A tool's own pre-check, like muscle-mem's: what to capture before a call, and how to compare.

    When the agent calls the tool, ``capture(**args)`` is recorded with the call (it
    must return a JSON value). Before a skill replays the call, ``capture(**args)`` is
    taken again and ``compare(current, learned)`` must be true, or the skill stops.

    Example:
        >>> import time
        >>> fresh = Check(capture=lambda **args: time.time(), compare=lambda now, then: now - then < 3600)
    """

    capture: Callable[..., Any]
    compare: Callable[[Any, Any], bool]


@dataclass(slots=True, eq=False)
class Tool:
    """A registered tool: the original function, its wrapper and its schema."""

    name: str
    func: Callable[..., Any]
    read: bool
    schema: FunctionSchema
    module: str
    qualname: str
    wrapper: Callable[..., Any] | None = None
    guard: Check | None = None
    post_guard: Check | None = None  # checked after the call (muscle-mem's post_check)
    asynchronous: bool = False  # an ``async def`` tool
    bridge: Callable[..., Any] | None = None  # what skills call for an async tool (see the module docstring)

    @property
    def for_skills(self) -> Callable[..., Any]:
        """The callable a skill file imports for this tool: its wrapper, or the bridge of an async tool."""
        return self.bridge if self.bridge is not None else self.wrapper  # type: ignore[return-value]

    @property
    def is_method(self) -> bool:
        return self.schema.is_method

    @property
    def owner(self) -> str | None:
        """For a method, the qualified name of its class."""
        return self.qualname.rsplit(".", 1)[0] if self.is_method else None

    def ref(self) -> ToolRef:
        return ToolRef(
            module=self.module,
            qualname=self.qualname,
            read=self.read,
            method=self.is_method,
            fingerprint=self.schema.fingerprint,
            params=self.schema.param_names,
            check=self.guard is not None,
            post_check=self.post_guard is not None,
        )

    def openai_spec(self) -> dict[str, Any]:
        """The chat-completions ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.schema.description or self.name,
                "parameters": self.schema.parameters,
            },
        }


class Run:
    """The calls made in one ``solve()`` by one skill or agent, in order, and the solve's model usage
    (one ``Usage`` shared by every run of the solve).

    ``snapshot=True`` (agent runs) deep-copies arguments and results as JSON values
    so the trajectory is faithful; a non-JSON value marks the run unlearnable with a
    clear reason instead of being mangled. Skill runs keep plain references.
    """

    __slots__ = (
        "calls",
        "snapshot",
        "instances",
        "tools",
        "unlearnable",
        "budget",
        "deadline",
        "captures",
        "post_captures",
        "unrecorded",
        "iterations",
        "built",
        "usage",
        "rereads",
        "read_again",
        "stand_in",
    )

    def __init__(
        self,
        *,
        snapshot: bool,
        instances: dict[str, Any],
        tools: dict[str, Tool] | None = None,
        budget: int | None = None,
        seconds: float | None = None,
        usage: Usage | None = None,
        read_again: bool = False,
        stand_in: Callable[[Tool, dict[str, Any]], Any] | None = None,
    ) -> None:
        # a probe's run: every call is answered by ``stand_in(tool, args)``, and no tool's own code runs
        # (nor its pre- or post-check, nor a read made again): see ``_prober``
        self.stand_in = stand_in
        self.read_again = read_again  # make reads again after each write (agent runs of a Forge that wants it)
        self.usage = usage  # the model usage of the solve this run is part of (``report_usage``)
        self.calls: list[tuple[str, dict[str, Any], Any, str | None]] = []
        self.captures: dict[int, Any] = {}  # call index → what the tool's pre-check captured (agent runs)
        self.post_captures: dict[int, Any] = {}  # call index → what its post-check captured after the call
        self.budget = budget if budget is not None else 1 << 62  # tool calls a skill may make
        self.deadline = time.monotonic() + seconds if seconds is not None else None
        self.iterations = MAX_ITERATIONS  # loop iterations left (counted by the sandbox)
        self.built = MAX_BUILT  # characters or items the skill may still build (charged by the sandbox)
        self.snapshot = snapshot
        self.instances = instances
        self.tools = tools
        self.unlearnable: NotSerializableError | str | None = None  # why nothing can be learned from this run
        self.unrecorded: set[str] = set()  # tools called while this run was recording, but outside its context
        self.rereads: dict[int, list[tuple[int, Any]]] = {}  # write index → reads made again right after it (agent runs)

    def check_budget(self) -> None:
        """Stop a skill that has used its tool calls, or (checked every 8 calls) its time."""
        n = len(self.calls)
        if n >= self.budget:
            raise BudgetExceeded(f"the skill used its budget of {self.budget} tool calls")
        if n & 7 == 7 and self.deadline is not None and time.monotonic() > self.deadline:
            raise BudgetExceeded("the skill ran out of its time budget")

    def out_of_time(self) -> None:
        """Stop a skill past its deadline (the sandbox asks every 32 loop iterations)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise BudgetExceeded("the skill ran out of its time budget")

    def call(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        named = self._begin(tool, args, kwargs)
        try:
            result = tool.func(*args, **kwargs) if self.stand_in is None else self.stand_in(tool, named)
        except BaseException as e:  # a skill's GuardFailed raised through the tool too: it may have written
            self.calls.append((tool.name, named, None, error_text(e)))
            raise
        return self._done(tool, named, result)

    async def acall(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``call`` for an ``async def`` tool: recorded the same way, the tool awaited."""
        named = self._begin(tool, args, kwargs)
        try:
            result = await tool.func(*args, **kwargs) if self.stand_in is None else self.stand_in(tool, named)
        except BaseException as e:  # cancelled too: the call may have taken effect
            self.calls.append((tool.name, named, None, error_text(e)))
            raise
        return self._done(tool, named, result)

    def _begin(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Before a call: the budget, the instance of a method, the arguments by name (and the pre-check)."""
        if not self.snapshot:
            self.check_budget()
        if tool.schema.is_method:
            if not args:
                raise TypeError(f"{tool.qualname}() called without its instance")
            self.instances[tool.owner] = args[0]  # type: ignore[index]
            named_args = args[1:]
        else:
            named_args = args
        if named_args:
            named = dict(zip(tool.schema.param_names, named_args))
            named.update(kwargs)
        else:
            named = kwargs
        if self.snapshot:
            named = self._snap(named, tool.name, "arguments")
            if tool.guard is not None and self.stand_in is None:
                captured = self._capture(tool.guard, named, tool.name, "pre-check")
                if captured is not _FAILED:
                    self.captures[len(self.calls)] = captured
        return named

    def _done(self, tool: Tool, named: dict[str, Any], result: Any) -> Any:
        """After a call that returned: record it. The call has happened: from here on nothing may raise,
        or the caller would take a call that took effect for one that failed (and perhaps make it again)."""
        self.calls.append((tool.name, named, self._snap(result, tool.name, "result") if self.snapshot else result, None))
        if self.snapshot and tool.post_guard is not None and self.stand_in is None:
            captured = self._capture(tool.post_guard, named, tool.name, "post-check")
            if captured is not _FAILED:
                self.post_captures[len(self.calls) - 1] = captured
        if self.read_again and self.snapshot and not tool.read and self.tools is not None:
            self._read_again(len(self.calls) - 1)
        return result

    def _read_again(self, w: int) -> None:
        """After write ``w`` of an agent run, make again the earlier reads that took a value it took (the
        account it changed), unrecorded, and keep what they return now (``rereads``): what a later
        request of the same message acted on, which the agent may only have inferred. Only plain
        functions declared reads; a read that fails or returns what cannot be recorded is left out.
        Never raises: the write has happened."""
        given = _scalars(self.calls[w][1])
        seen: set[str] = set()
        found: list[tuple[int, Any]] = []
        for k, (name, args, _result, error) in enumerate(self.calls[:w]):
            tool = self.tools.get(name) if self.tools is not None else None
            if tool is None or not tool.read or tool.is_method or tool.asynchronous or error is not None:
                continue
            key = canonical_json([name, args])
            if key in seen or not given & _scalars(args) or len(found) >= _MAX_REREADS:
                continue
            seen.add(key)
            try:
                found.append((k, json_snapshot(tool.func(**args), name, "result")))
            except Exception as e:  # a read that fails now tells nothing of the world after the write
                logger.debug("reading %s again after a write failed: %s", name, error_text(e))
        if found:
            self.rereads[w] = found

    def _capture(self, check: Check, named: dict[str, Any], tool: str, which: str) -> Any:
        """What ``check`` captures for a call (a JSON value); ``_FAILED`` (and the run marked unlearnable)
        if the capture raises: a check of the recording never changes what the tool call does."""
        try:
            captured = check.capture(**named)
        except Exception as e:
            self._unlearnable(
                f"tool {tool!r}: its {which} capture raised {error_text(e)}; a check that cannot be taken cannot be learned"
            )
            return _FAILED
        return self._snap(captured, tool, f"{which} capture")

    def _snap(self, value: Any, tool: str, where: str) -> Any:
        """``value`` as a recorded JSON value; a value that is not one marks the run unlearnable and is
        kept as it was. Never raises: it runs after the tool call, whose effect has happened."""
        try:
            return json_snapshot(value, tool, where)
        except NotSerializableError as e:
            self._unlearnable(e)
        except Exception as e:  # a key whose repr raises, a container changed while copied, ...
            self._unlearnable(
                f"tool {tool!r}: its {where} could not be copied ({error_text(e)}); nothing is learned from this run"
            )
        return value  # kept as it was; the run is marked unlearnable, never compiled

    def _unlearnable(self, why: NotSerializableError | str) -> None:
        if self.unlearnable is None:
            self.unlearnable = why
        logger.warning("not learnable: %s", why)


_FAILED = object()  # a capture that raised
_MAX_REREADS = 8  # reads made again after one write of an agent run


def error_text(e: BaseException) -> str:
    """``"Type: message"`` for a recorded error, even when the exception's ``str`` raises."""
    try:
        return f"{type(e).__name__}: {e}"
    except Exception:
        return f"{type(e).__name__}: <its message could not be shown>"


def spend_built(n: int) -> None:
    """Charge ``n`` characters or items built to the running skill; ``BudgetExceeded`` past its budget.

    Called *before* a value of that size is made, so a skill never allocates past it. Outside a
    skill run (a skill imported as a plain function, calling the ``join`` helper) each value alone
    is held to the budget.
    """
    run = _current.get()
    if run is None:
        left = MAX_BUILT - n
    else:
        run.built -= n
        left = run.built
    if left < 0:
        raise BudgetExceeded(f"the skill would build more than its budget of {MAX_BUILT:,} characters or items")


# Agent runs being recorded, in any thread: a tool called outside every recording context
# while one is active (from a thread the agent started, which does not inherit the context
# variable) makes those records incomplete, so nothing is learned from them.
_recording: dict[int, Run] = {}
_recording_lock = threading.Lock()


def activate(run: Run) -> Any:
    """Make ``run`` the current run; returns the token for ``deactivate``."""
    if run.snapshot:
        with _recording_lock:
            _recording[id(run)] = run
    return _current.set(run)


def deactivate(token: Any) -> None:
    run = _current.get()
    _current.reset(token)
    if run is not None and run.snapshot:
        with _recording_lock:
            _recording.pop(id(run), None)


def _unrecorded(name: str) -> None:
    with _recording_lock:
        for run in _recording.values():
            run.unrecorded.add(name)


@dataclass
class ToolRegistry:
    """The tools a Forge knows, by name."""

    tools: dict[str, Tool] = field(default_factory=dict)
    importable: bool = True  # skill files import the tools by name: refuse tools they could not import
    asynchronous: set[str] = field(default_factory=set)  # names of the ``async def`` tools
    _async_methods: dict[str, dict[str, Tool]] = field(default_factory=dict)  # class → method name → async tool

    def register(
        self,
        func: Callable[..., Any],
        *,
        read: bool | None = None,
        name: str | None = None,
        guard: Check | None = None,
        post_guard: Check | None = None,
    ) -> Callable[..., Any]:
        if not callable(func):
            raise ToolDefinitionError(f"@tool needs a function, got {type(func).__name__}")
        existing_tool = getattr(func, "__skillforge_tool__", None)
        if existing_tool is not None:  # already a tool (of this or another forge): register its original
            func = existing_tool.func
            if read is None:
                read = existing_tool.read
            name = name or existing_tool.name
            guard = guard if guard is not None else existing_tool.guard
            post_guard = post_guard if post_guard is not None else existing_tool.post_guard
        for given in (guard, post_guard):
            if given is not None and not (callable(getattr(given, "capture", None)) and callable(getattr(given, "compare", None))):
                raise ToolDefinitionError(f"guard= takes skillforge.Check(capture, compare), got {type(given).__name__}")
            if given is not None and (is_async_callable(given.capture) or is_async_callable(given.compare)):
                raise ToolDefinitionError(
                    "a Check's capture and compare are plain functions (skills call them synchronously, also for "
                    "async tools): make them `def`, not `async def`"
                )
        read = bool(read)
        if inspect.isasyncgenfunction(func):
            raise ToolDefinitionError(
                f"{getattr(func, '__qualname__', func)!r} is an async generator: a tool returns one result; "
                "collect the items into a list and return it"
            )
        schema = function_schema(func, name)
        tool_name = schema.name
        if self.importable:
            problem = import_problem(tool_name, getattr(func, "__qualname__", tool_name), schema.is_method)
            if problem is not None:  # refused now, not after the agent's writes when a skill is generated
                raise ToolDefinitionError(problem)
        prior = self.tools.get(tool_name)
        if prior is not None and prior.func is not func:
            raise ToolDefinitionError(
                f"a tool named {tool_name!r} is already registered (from {prior.module}.{prior.qualname}); "
                f"tool names must be unique: pass name='...' to @tool to rename one"
            )
        tool = Tool(
            name=tool_name,
            func=func,
            read=read,
            schema=schema,
            module=getattr(func, "__module__", "") or "",
            qualname=getattr(func, "__qualname__", tool_name),
            guard=guard,
            post_guard=post_guard,
            asynchronous=inspect.iscoroutinefunction(func),
        )
        if tool.asynchronous:
            return self._add(tool, self._async_wrapper(tool))
        get = _current.get
        name = tool_name

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            run = get()
            if run is None:
                if _recording:
                    _unrecorded(name)
                return func(*args, **kwargs)
            if args or run.snapshot:
                return run.call(tool, args, kwargs)
            # the skill hot path, inlined: keyword calls, plain references, a budget
            calls = run.calls
            if len(calls) >= run.budget or len(calls) & 7 == 7:
                run.check_budget()
            try:
                result = func(**kwargs)
            except BaseException as e:  # a nested skill's GuardFailed too: the call may have written
                calls.append((name, kwargs, None, error_text(e)))
                raise
            calls.append((name, kwargs, result, None))
            return result

        return self._add(tool, wrapper)

    def _add(self, tool: Tool, wrapper: Callable[..., Any]) -> Callable[..., Any]:
        wrapper.__skillforge_tool__ = tool  # type: ignore[attr-defined]
        tool.wrapper = wrapper
        self.tools[tool.name] = tool
        if tool.asynchronous:
            self.asynchronous.add(tool.name)
            if tool.owner is not None:
                self._async_methods.setdefault(tool.owner, {})[tool.qualname.rsplit(".", 1)[-1]] = tool
        else:
            self.asynchronous.discard(tool.name)
        return wrapper

    @staticmethod
    def _async_wrapper(tool: Tool) -> Callable[..., Any]:
        """The coroutine function an ``async def`` tool is replaced by, and (on ``tool``) its bridge."""
        func = tool.func
        name = tool.name
        get = _current.get

        @functools.wraps(func)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            run = get()
            if run is None:
                if _recording:
                    _unrecorded(name)
                return await func(*args, **kwargs)
            return await run.acall(tool, args, kwargs)

        def bridge(*args: Any, **kwargs: Any) -> Any:
            run = get()
            if run is None:  # never imported outside the sandbox; called so, it is the plain tool
                return wait_on_loop(func(*args, **kwargs))
            return wait_on_loop(run.acall(tool, args, kwargs))

        functools.update_wrapper(bridge, func)
        bridge.__skillforge_tool__ = tool  # type: ignore[attr-defined]
        tool.bridge = bridge
        return wrapper

    def for_skill(self, owner: str, instance: Any) -> Any:
        """What a skill is given for an instance of class ``owner``: the instance, or, when some of its
        tool methods are async, a stand-in whose methods call them through their bridges."""
        methods = self._async_methods.get(owner)
        return instance if not methods else _BridgedInstance(instance, methods)

    def __getitem__(self, name: str) -> Tool:
        return self.tools[name]

    def uses_async(self, tool_names: Any) -> bool:
        """Whether any of the named tools is an ``async def`` tool."""
        return bool(self.asynchronous) and any(n in self.asynchronous for n in tool_names)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.tools.values())

    def __len__(self) -> int:
        return len(self.tools)


class _BridgedInstance:
    """An instance as a skill sees it when some of its tool methods are async: those are called
    through their bridges (on the solve's event loop), everything else is the instance's own."""

    __slots__ = ("_instance", "_methods")

    def __init__(self, instance: Any, methods: dict[str, Tool]) -> None:
        self._instance = instance
        self._methods = methods

    def __getattr__(self, attr: str) -> Any:
        tool = self._methods.get(attr)
        if tool is None:
            return getattr(self._instance, attr)
        bridge, instance = tool.bridge, self._instance

        def method(*args: Any, **kwargs: Any) -> Any:
            return bridge(instance, *args, **kwargs)  # type: ignore[misc]

        method.__skillforge_tool__ = tool  # type: ignore[attr-defined]  # for check() of its pre-check
        return method
