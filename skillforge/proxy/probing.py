"""Probes through the upstream: the model asked again, with one tool result of a conversation changed.

A namespace's skills were learned from conversations between a client and the upstream model. To
probe one (``skillforge._prober``), the proxy plays the client: it sends the namespace's system
messages, the conversation's task and its tool schemas to the upstream, and answers each tool call
the model makes from the recorded conversation, in a world with one fact changed (the probe's
stand-ins: no client tool runs, and the client never sees a probe). The model's calls and answer are
then compared with what the skill does there, as for any agent.

Probes are opt-in (``Proxy(probes=N)``, ``skillforge proxy --probes N``) and run in the proxy's
learning threads after a conversation is learned, never on a request's path. They cost model
requests on the client's API key, the latest the namespace's client sent (kept in memory only, never
written), and are counted in ``/skillforge/stats`` (``probe_runs``, ``probe_requests``).
"""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import httpx

from .._agent import OpenAIAgent
from .._exceptions import AgentError
from .._tools import current_run
from .._usage import report_usage

__all__ = ["UpstreamAgent"]


class UpstreamAgent:
    """The upstream model as an agent over a namespace's tools: its system messages and tool
    schemas, the task as the user's message, each tool call answered by the current run's tools.

    Args:
        upstream: the API the proxy forwards to (``https://api.openai.com/v1``).
        model: the namespace's model.
        system: its system messages, in order.
        tools: its tool schemas, as the client sent them.
        timeout: seconds to wait for each reply.
        max_turns: model requests allowed per task.
    """

    def __init__(
        self, upstream: str, model: str, system: tuple[str, ...], tools: tuple[dict[str, Any], ...], *,
        timeout: float = 300.0, max_turns: int = 16,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.model = model
        self.system = system
        self.tools = tools
        self.timeout = timeout
        self.max_turns = max_turns
        self._authorization: str | None = None
        self._lock = threading.Lock()

    def use_key(self, authorization: str | None) -> None:
        """The ``Authorization`` header probes are sent with: the namespace's client's latest."""
        if authorization:
            with self._lock:
                self._authorization = authorization

    def __call__(self, task: str, transcript: Any = None) -> Any:
        run = current_run()
        if run is None or run.tools is None:
            raise AgentError("UpstreamAgent answers tool calls from a run's tools: it runs inside a probe")
        with self._lock:
            authorization = self._authorization
        if authorization is None:
            raise AgentError("no client has sent an API key to this namespace yet: nothing to probe with")
        messages: list[dict[str, Any]] = [{"role": "system", "content": s} for s in self.system]
        messages.append({"role": "user", "content": task})
        headers = {"authorization": authorization}
        with httpx.Client(timeout=self.timeout, trust_env=False) as client:
            for _turn in range(self.max_turns):
                body: dict[str, Any] = {"model": self.model, "messages": messages}
                if self.tools:
                    body["tools"] = list(self.tools)
                try:
                    reply = client.post(f"{self.upstream}/chat/completions", json=body, headers=headers)
                except httpx.HTTPError as e:
                    raise AgentError(f"the upstream ({self.upstream}) cannot be reached: {type(e).__name__}: {e}") from e
                try:
                    data = reply.json()
                except ValueError:
                    data = None
                usage = (data.get("usage") if isinstance(data, dict) else None) or {}
                report_usage(prompt_tokens=int(usage.get("prompt_tokens") or 0),  # a request made, whatever came back
                             completion_tokens=int(usage.get("completion_tokens") or 0))
                if reply.status_code != 200:
                    raise AgentError(f"the upstream answered {reply.status_code}: {reply.text[:200]}")
                try:
                    message = data["choices"][0]["message"]  # type: ignore[index]
                except (KeyError, IndexError, TypeError) as e:
                    raise AgentError(f"the upstream's reply is no chat completion ({e})") from e
                calls = message.get("tool_calls") or []
                if not calls:
                    return message.get("content")
                messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls})
                for c in calls:
                    fn = c.get("function") or {}
                    call = SimpleNamespace(id=c.get("id"), function=SimpleNamespace(name=fn.get("name"), arguments=fn.get("arguments")))
                    messages.append({"role": "tool", "tool_call_id": c.get("id"), "content": OpenAIAgent._run_tool(run.tools, run, call)})
        raise AgentError(f"no final answer after {self.max_turns} model requests (max_turns)")
