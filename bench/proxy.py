"""``skillforge proxy`` measured: model requests saved, wrong replays, and the latency it adds.

The proxy runs as ``skillforge proxy`` (its own process, as deployed), in front of a stand-in
model served by ``skillforge.testing.ChatServer``. The agent is ``skillforge.OpenAIAgent`` over
the official ``openai`` client, inside a Forge that only records (learning off: the proxy
learns). Two task streams:

- the demo's 60 support tickets, the model being the demo's rule-based stand-in;
- a shadow workload (``bench/workloads``, default helpdesk), the model being the workload's
  deterministic agent, asked through the chat protocol (``WorkloadModel``).

Each task runs twice from the same world, as in ``bench.shadow``: through the proxy on the main
world, and by the agent alone straight to the model on a copy made just before. A task on
which the proxy answered at least one request and whose writes or answer differ from the agent
alone's is a **wrong replay**. Requests reaching the model are counted on both paths.

Latency, side by side in one run (the three kinds of request take turns): the same first
request of a ticket sent straight to the model, through the proxy when no skill fits (it is
forwarded), and through the proxy when a skill answers it.

    .venv/bin/python -m bench.proxy [--quick] [--workload helpdesk] [--rounds 300]
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai

from skillforge import Forge, OpenAIAgent
from skillforge._agent import DEFAULT_SYSTEM
from skillforge._trajectory import Call
from skillforge.demo import desk
from skillforge.demo.model import StandInModel
from skillforge.demo.tickets import tickets
from skillforge.testing import ChatServer, answer, tool_call

from bench.shadow import _apply, diff_states
from bench.workloads import Task, load, stream as days_of

MODEL = "stand-in"


class _Next(BaseException):
    """The workload's agent asked for a call the conversation has not made yet (not an Exception:
    the agent's own error handling must not catch it)."""

    def __init__(self, tool: str, args: dict[str, Any]) -> None:
        super().__init__(tool)
        self.tool, self.arguments = tool, args


class WorkloadModel:
    """A workload's deterministic agent as a chat model: each request is answered by running the
    agent on the task with the conversation's calls as its transcript; its first call beyond them is
    the reply (a tool call), and its return value the final answer."""

    def __init__(self, workload: Any) -> None:
        self.wl = workload

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        task = next(m["content"] for m in messages if m["role"] == "user")
        results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
        transcript, failed = [], []
        for m in messages:
            for c in m.get("tool_calls") or () if m["role"] == "assistant" else ():
                args, text = json.loads(c["function"]["arguments"]), results[c["id"]]
                if text.startswith("error:"):
                    failed.append((c["function"]["name"], args, text))
                else:
                    transcript.append(Call.model_construct(tool=c["function"]["name"], args=args, result=json.loads(text), error=None))
        saved = dict(self.wl.TOOLBOX)
        for name in saved:
            self.wl.TOOLBOX[name] = self._stand_in(name, failed)
        try:
            return answer(self.wl.agent(task, transcript=transcript))
        except _Next as nxt:
            return tool_call(nxt.tool, **nxt.arguments)
        except Exception as e:  # as the agent alone would end: with the error
            return answer(f"<agent raised {type(e).__name__}: {e}>")
        finally:
            self.wl.TOOLBOX.clear()
            self.wl.TOOLBOX.update(saved)

    @staticmethod
    def _stand_in(name: str, failed: list[tuple[str, dict[str, Any], str]]) -> Callable[..., Any]:
        def call(**args: Any) -> Any:
            for tool, a, text in failed:
                if (tool, a) == (name, args):
                    raise RuntimeError(text)
            raise _Next(name, args)

        return call


@dataclass
class StreamReport:
    """What one task stream did through the proxy, next to the agent alone."""

    name: str
    tasks: int = 0
    requests_alone: int = 0  # requests that reached the model without the proxy
    requests_proxied: int = 0  # ... with the proxy in front
    served_wholly: int = 0  # tasks with no request reaching the model
    served_partly: int = 0  # tasks the proxy answered in part, then handed over
    wrong: list[str] = field(default_factory=list)
    harness: list[str] = field(default_factory=list)  # differences on tasks the proxy did not touch: should be none
    skills: int = 0


class ProxyProcess:
    """``skillforge proxy`` in a process of its own, on a free loopback port."""

    def __init__(self, upstream: str, root: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.root = root
        self.log = open(root / "proxy.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skillforge.cli", "proxy", "--upstream", upstream, "--port", str(self.port),
             "--skills-dir", str(root / "proxy-skills"), "--state-dir", str(root / "proxy-state")],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                self.stats()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"the proxy did not start; see {root / 'proxy.log'}") from None
                time.sleep(0.05)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/skillforge/stats", timeout=5) as r:
            return json.loads(r.read())

    def idle(self) -> dict[str, int]:
        """The stats once no conversation is being learned."""
        while True:
            stats = self.stats()
            if stats["learning"] == 0:
                return stats
            time.sleep(0.002)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def _client(base_url: str, key: str = "sk-bench", **kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=30.0, **kwargs)


def _forge(root: Path, name: str, client: Any, tools: Sequence[Callable[..., Any]], reads: frozenset[str] | None = None) -> Forge:
    forge = Forge(skills_dir=root / f"{name}-skills", state_dir=root / f"{name}-state",
                  agent=OpenAIAgent(model=MODEL, client=client), learn=False, run_log=False)
    for f in tools:
        if reads is None:
            forge.registry.register(f)  # already decorated: keeps its read flag
        else:
            forge.tool(read=f.__name__ in reads)(f)
    return forge


def _rows(path: Path) -> dict[str, list[Any]]:
    conn = sqlite3.connect(str(path))
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {t: sorted(map(list, conn.execute(f"SELECT * FROM {t}").fetchall()), key=repr) for t in tables}
    finally:
        conn.close()


def run_stream(
    name: str, root: Path, stream: list[Task], responder: Callable[[dict[str, Any]], dict[str, Any]],
    tools: Sequence[Callable[..., Any]], reads: frozenset[str] | None,
    make_world: Callable[[Path], None], use_world: Callable[[Path], None], snapshot: Callable[[Path], dict[str, Any]],
) -> StreamReport:
    """Each task through the proxy (main world) and by the agent alone (a copy), compared."""
    report = StreamReport(name)
    main, shadow = root / "main.sqlite3", root / "shadow.sqlite3"
    make_world(main)
    with ChatServer(responder) as upstream, ChatServer(responder) as direct:
        proxy = ProxyProcess(upstream.base_url, root)
        try:
            through = _forge(root, "proxied", _client(proxy.base_url), tools, reads)
            alone = _forge(root, "alone", _client(direct.base_url), tools, reads)
            for i, task in enumerate(stream):
                _apply(main, task.setup_sql)
                shutil.copyfile(main, shadow)
                before, asked, stats = len(direct.requests), len(upstream.requests), proxy.stats()
                use_world(main)
                result = through.solve(task.text)
                after = proxy.idle()
                use_world(shadow)
                expected = alone.solve(task.text)
                use_world(main)
                served = after["served_calls"] + after["served_answers"] - stats["served_calls"] - stats["served_answers"]
                reached = len(upstream.requests) - asked
                report.tasks += 1
                report.requests_alone += len(direct.requests) - before
                report.requests_proxied += reached
                report.served_wholly += served > 0 and reached == 0
                report.served_partly += served > 0 and reached > 0
                diff = diff_states(snapshot(main), snapshot(shadow))
                if diff or result.output != expected.output:
                    line = f"#{i} {task.text!r}: {result.output!r} / alone {expected.output!r} {diff[:3]}"
                    (report.wrong if served else report.harness).append(line)
        finally:
            proxy.stop()
    report.skills = len(list((root / "proxy-skills").rglob("*.py")))
    return report


def demo_stream(root: Path, n: int) -> StreamReport:
    probe = root / "probe.sqlite3"
    desk.open_desk(probe)
    products = {o: [it["name"] for it in desk.get_order(o)["items"]] for o in desk.order_ids()}
    stream = [Task(text) for text in tickets(n, products=products)]

    def use(path: Path) -> None:
        desk.open_desk(path)

    return run_stream("demo", root, stream, StandInModel(), desk.TOOLS, None, use, use, _rows)


def workload_stream(root: Path, name: str, days: int | None) -> StreamReport:
    wl = load(name)
    stream = days_of(wl, days)
    return run_stream(name, root, stream, WorkloadModel(wl), wl.TOOLS, wl.READS, wl.make_world, wl.use_world, wl.snapshot)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency(root: Path, rounds: int) -> dict[str, list[float]]:
    """Milliseconds per request: straight to the model, forwarded by the proxy, served by the proxy."""
    desk.open_desk(root / "latency.sqlite3")
    with ChatServer(StandInModel()) as upstream:
        proxy = ProxyProcess(upstream.base_url, root)
        try:
            learner = _forge(root, "teach", _client(proxy.base_url), desk.TOOLS)
            learner.solve("Where is my order #1030?")  # the skill the served requests use
            proxy.idle()
            tools = [t.__skillforge_tool__.openai_spec() for t in sorted(desk.TOOLS, key=lambda t: t.__name__)]
            messages = [{"role": "system", "content": DEFAULT_SYSTEM}, {"role": "user", "content": "Where is my order #1031?"}]
            clients = {
                "direct to the model": _client(upstream.base_url),
                "forwarded by the proxy": _client(proxy.base_url, default_headers={"x-skillforge-namespace": "cold"}),
                "served by the proxy": _client(proxy.base_url),
            }
            times: dict[str, list[float]] = {k: [] for k in clients}
            for r in range(rounds + 20):
                for kind, client in clients.items():
                    start = time.perf_counter()
                    reply = client.chat.completions.with_raw_response.create(model=MODEL, messages=messages, tools=tools)
                    ms = (time.perf_counter() - start) * 1000
                    assert reply.parse().choices[0].message.tool_calls[0].function.name == "get_order"
                    assert ("x-skillforge-skill" in reply.headers) == (kind == "served by the proxy"), kind
                    if r >= 20:  # the first rounds warm connections and caches
                        times[kind].append(ms)
            for client in clients.values():
                client.close()
        finally:
            proxy.stop()
    return times


def render(reports: list[StreamReport], times: dict[str, list[float]]) -> str:
    out = ["skillforge proxy: OpenAIAgent over the openai client -> `skillforge proxy` (own process) -> stand-in model", ""]
    out.append(f"  {'stream':<10}{'tasks':>6}{'requests without':>18}{'with proxy':>12}{'saved':>8}"
               f"{'served wholly':>15}{'in part':>9}{'wrong replays':>15}{'skills':>8}")
    for r in reports:
        saved = 1 - r.requests_proxied / r.requests_alone if r.requests_alone else 0.0
        out.append(f"  {r.name:<10}{r.tasks:>6}{r.requests_alone:>18}{r.requests_proxied:>12}{saved:>8.0%}"
                   f"{r.served_wholly:>15}{r.served_partly:>9}{len(r.wrong):>15}{r.skills:>8}")
    base = statistics.median(times["direct to the model"])
    out += ["", f"  latency of one request (ms, {len(times['direct to the model'])} each, taking turns)"]
    out.append(f"  {'':<26}{'p50':>8}{'p95':>8}{'p50 added':>11}")
    for kind, values in times.items():
        p50 = statistics.median(values)
        out.append(f"  {kind:<26}{p50:>8.2f}{_pct(values, 0.95):>8.2f}{p50 - base:>+11.2f}")
    for r in reports:
        for title, lines in (("WRONG REPLAYS", r.wrong), ("harness differences (should be none)", r.harness)):
            if lines:
                out += ["", f"{r.name} {title}:"] + [f"  {line}" for line in lines[:20]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.proxy", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 tickets, the workload's first day, 100 rounds")
    parser.add_argument("--workload", default="helpdesk")
    parser.add_argument("--rounds", type=int, default=None, help="latency samples of each kind (default 300)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (100 if args.quick else 300)
    with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp:
        root = Path(tmp)
        for sub in ("demo", "workload", "latency"):
            (root / sub).mkdir()
        reports = [demo_stream(root / "demo", 30 if args.quick else 60),
                   workload_stream(root / "workload", args.workload, 1 if args.quick else None)]
        times = latency(root / "latency", rounds)
    sys.stdout.write(render(reports, times) + "\n")
    return 1 if any(r.wrong for r in reports) else 0


if __name__ == "__main__":
    raise SystemExit(main())
