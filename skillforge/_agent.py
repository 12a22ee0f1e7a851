"""Agents: the protocol, and ``OpenAIAgent``, a chat-completions tool-calling loop.

An agent is any callable ``agent(task)`` that calls the forge's decorated
tools (``async def`` agents too, in ``forge.asolve()``). If it also accepts
``transcript=``, it is handed the calls already made when it takes over from a
skill mid-run, and must not repeat them. It reports its model usage with
``skillforge.report_usage()``, as ``OpenAIAgent`` does.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ._exceptions import AgentError
from ._tools import Tool, current_run, wait_on_loop
from ._usage import report_usage
from ._trajectory import Call

__all__ = ["Agent", "OpenAIAgent", "accepts_transcript"]

logger = logging.getLogger(__name__)

DEFAULT_SYSTEM = (
    "You are a careful back-office assistant. Use the tools to complete the user's task. "
    "Call tools one step at a time, only with values from the task or from earlier tool results. "
    "When the task is done, reply with a short final answer and no tool calls."
)


@runtime_checkable
class Agent(Protocol):
    """Anything callable with the task; it solves it by calling the forge's tools."""

    def __call__(self, task: str) -> Any: ...


def accepts_transcript(agent: Any) -> bool:
    """Whether ``agent`` takes ``transcript=`` (and so can resume a stopped skill)."""
    try:
        params = inspect.signature(agent).parameters
    except (TypeError, ValueError):
        return False
    return "transcript" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


class OpenAIAgent:
    """A chat-completions tool-calling loop over the forge's tools, with the official ``openai`` client.

    Args:
        model: the model name; default ``SKILLFORGE_MODEL`` or ``gpt-4o-mini``.
        client: a configured ``openai.OpenAI``; if None, one is built on first use
            from ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
        system: the system prompt.
        max_turns: model requests allowed per task before giving up.

    Example:
        >>> agent = OpenAIAgent(model="gpt-4o-mini")   # no client is built until it runs
        >>> agent.model
        'gpt-4o-mini'
    """

    def __init__(
        self,
        model: str | None = None,
        client: Any = None,
        system: str | None = None,
        *,
        max_turns: int = 16,
        temperature: float | None = 0.0,
    ) -> None:
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.model = model or os.environ.get("SKILLFORGE_MODEL") or "gpt-4o-mini"
        self._client = client
        self.system = system or DEFAULT_SYSTEM
        self.max_turns = max_turns
        self.temperature = temperature

    @property
    def client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(max_retries=1)
        return self._client

    def __call__(self, task: str, transcript: Sequence[Call] | None = None) -> Any:
        run = current_run()
        if run is None or run.tools is None:
            raise AgentError("OpenAIAgent runs inside forge.solve(): pass it as Forge(agent=...) and call solve()")
        tools: dict[str, Tool] = run.tools
        specs = [t.openai_spec() for t in sorted(tools.values(), key=lambda t: t.name)]
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system}, {"role": "user", "content": task}]
        if transcript:
            messages.extend(_transcript_messages(transcript))
        for _turn in range(self.max_turns):
            kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
            if specs:
                kwargs["tools"] = specs
            if self.temperature is not None:
                kwargs["temperature"] = self.temperature
            try:
                response = self.client.chat.completions.create(**kwargs)
            except Exception as e:  # openai.APIError and transport errors alike
                raise AgentError(f"model request to {self.model!r} failed: {type(e).__name__}: {e}") from e
            usage = getattr(response, "usage", None)
            report_usage(
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            )
            if not response.choices:
                raise AgentError(f"model {self.model!r} returned no choices")
            msg = response.choices[0].message
            calls = list(msg.tool_calls or [])
            if not calls:
                return msg.content
            messages.append(
                {
                    "role": "assistant",
                    "content": msg.content,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.function.name, "arguments": c.function.arguments},
                        }
                        for c in calls
                    ],
                }
            )
            for c in calls:
                messages.append({"role": "tool", "tool_call_id": c.id, "content": self._run_tool(tools, run, c)})
        raise AgentError(f"no final answer after {self.max_turns} model requests (max_turns)")

    @staticmethod
    def _run_tool(tools: dict[str, Tool], run: Any, call: Any) -> str:
        name = call.function.name
        tool = tools.get(name)
        if tool is None:
            return f"error: there is no tool named {name!r}; available: {', '.join(sorted(tools))}"
        try:
            args = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError as e:
            return f"error: arguments are not valid JSON ({e})"
        if not isinstance(args, dict):
            return "error: arguments must be a JSON object"
        target = tool.wrapper
        if tool.is_method:
            instance = run.instances.get(tool.owner)
            if instance is None:
                return f"error: no {tool.owner} instance is available; call forge.provide(instance) first"
            target = getattr(instance, tool.qualname.rsplit(".", 1)[-1])
        try:
            result = target(**args)
            if inspect.isawaitable(result):  # an async tool: asolve() runs this agent in a worker thread
                result = wait_on_loop(result)
        except Exception as e:  # reported to the model; the run is then not learned
            logger.info("tool %s raised %s: %s", name, type(e).__name__, e)
            return f"error: {type(e).__name__}: {e}"
        try:
            return json.dumps(result, ensure_ascii=False)
        except (TypeError, ValueError):
            return str(result)


def _transcript_messages(transcript: Sequence[Call]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, call in enumerate(transcript):
        cid = f"skill_{i + 1}"
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": call.tool, "arguments": json.dumps(call.args, ensure_ascii=False)},
                    }
                ],
            }
        )
        content = f"error: {call.error}" if call.error else json.dumps(call.result, ensure_ascii=False, default=str)
        out.append({"role": "tool", "tool_call_id": cid, "content": content})
    out.append(
        {
            "role": "user",
            "content": "The tool calls above were already made by a learned skill, which stopped there. "
            "Continue the task from this point; do not repeat calls that changed something.",
        }
    )
    return out
