"""Helpers for the proxy's tests: the demo desk behind the proxy, agents that talk to it, worlds to compare."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from skillforge import Forge, OpenAIAgent
from skillforge._agent import DEFAULT_SYSTEM
from skillforge.demo import desk
from skillforge.proxy import Proxy, ProxyServer
from skillforge.testing import ChatServer

MODEL = "stand-in"


@contextmanager
def proxy_for(upstream: ChatServer | str, root: Path, **kwargs: Any) -> Iterator[ProxyServer]:
    """A proxy in front of ``upstream`` (a server or a URL), its skills under ``root``."""
    url = upstream if isinstance(upstream, str) else upstream.base_url
    kwargs.setdefault("timeout", 10.0)
    proxy = Proxy(url, skills_dir=root / "proxy-skills", state_dir=root / "proxy-state", **kwargs)
    with ProxyServer(proxy) as server:
        yield server


def client_forge(root: Path, client: Any, name: str = "client", **agent: Any) -> Forge:
    """The agent's side: the desk's tools, ``OpenAIAgent`` over ``client``, learning off (the proxy learns)."""
    return Forge(
        skills_dir=root / f"{name}-skills", state_dir=root / f"{name}-state",
        agent=OpenAIAgent(model=agent.pop("model", MODEL), client=client, **agent),
        tools=desk.TOOLS, learn=False, run_log=False,
    )


def calls_of(result: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c.tool, c.args) for c in result.calls]


def snapshot(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the desk database at ``path``."""
    conn = sqlite3.connect(str(path))
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in sorted(tables)}
    finally:
        conn.close()


def alone(db: Path, upstream: ChatServer, task: str, root: Path) -> tuple[Any, dict[str, Any]]:
    """What the agent alone does for ``task`` (straight to the upstream) on a copy of the world at ``db``:
    its result, and the copy's rows after it. The tools use ``db`` again afterwards."""
    shadow = root / "shadow.sqlite3"
    shutil.copyfile(db, shadow)
    conn = desk.open_desk(shadow)
    try:
        forge = client_forge(root, upstream.client(), name="alone")
        result = forge.solve(task)
    finally:
        conn.close()
        desk.open_desk(db)
    return result, snapshot(shadow)


def desk_tools() -> list[dict[str, Any]]:
    """The desk's tool schemas, as ``OpenAIAgent`` sends them."""
    return [t.__skillforge_tool__.openai_spec() for t in sorted(desk.TOOLS, key=lambda t: t.__name__)]


def stream_agent(
    client: Any, task: str, run_tool: Callable[[str, dict[str, Any]], Any], *, tools: list[dict[str, Any]],
    system: str = DEFAULT_SYSTEM, model: str = MODEL, max_turns: int = 8, **create: Any,
) -> tuple[str | None, list[tuple[str, dict[str, Any]]], list[str]]:
    """A tool-calling loop like ``OpenAIAgent``'s over streamed replies (``stream=True``): the final
    answer, the calls it made, and the tool-call ids it was given."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": task}]
    calls: list[tuple[str, dict[str, Any]]] = []
    ids: list[str] = []
    for _ in range(max_turns):
        stream = client.chat.completions.create(
            model=model, messages=messages, tools=tools, stream=True, stream_options={"include_usage": True}, **create,
        )
        content: list[str] = []
        pending: dict[int, dict[str, Any]] = {}
        with stream:
            for chunk in stream:
                for choice in chunk.choices:
                    if choice.delta.content:
                        content.append(choice.delta.content)
                    for piece in choice.delta.tool_calls or ():
                        call = pending.setdefault(piece.index, {"id": None, "name": "", "arguments": ""})
                        call["id"] = piece.id or call["id"]
                        if piece.function is not None:
                            call["name"] += piece.function.name or ""
                            call["arguments"] += piece.function.arguments or ""
        if not pending:
            return "".join(content), calls, ids
        made = [pending[i] for i in sorted(pending)]
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in made]})
        for c in made:
            args = json.loads(c["arguments"] or "{}")
            calls.append((c["name"], args))
            ids.append(c["id"])
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": json.dumps(run_tool(c["name"], args))})
    raise AssertionError("no final answer")


def run_desk_tool(name: str, args: dict[str, Any]) -> Any:
    """Call a desk tool by name (outside solve(): the plain function)."""
    return {f.__name__: f for f in desk.TOOLS}[name](**args)


def skill_files(root: Path) -> list[Path]:
    return sorted((root / "proxy-skills").rglob("*.py"))
