"""Lifting report: how arguments are traced, over recorded runs from several domains.

Corpora:
- ``support desk``: the demo's 60 tickets, each solved by the agent alone (the
  offline stand-in model over loopback), recorded as runs.
- ``tau-airline``: the 50 tasks of the public tau-bench airline dataset
  (``shared/data/tau-airline``, MIT), reconstructed as runs: the customer's
  profile read first, each reservation read before it is acted on, then the
  dataset's gold tool calls, with results computed from its database. The agent's
  judgement (which flight, which certificate) is in those gold arguments, so many
  of them have no source in the task or in a result: a stress case.
- ``20-step chain``: a synthetic run of 20 calls (timing target: compile and admit
  in 30 ms or less, median, libcst included).

For each: the share of argument values lifted as a task span, a result value, a
selection, a composition, or left a constant; the share of runs whose skill has
no constant; compile time (lift + guards + render + libcst + admission) per run.
"""

from __future__ import annotations

import ast
import json
import operator
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from skillforge import Compiled, Forge, OpenAIAgent, Rejected, compile_run
from skillforge._values import walk_exprs
from skillforge._spec import Const, DictOf, Fmt, ListOf, Param, Ref, Select, SkillSpec
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from skillforge.demo import desk
from skillforge.demo.model import StandInModel
from skillforge.demo.tickets import tickets
from skillforge.testing import ChatServer

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "tau-airline"
AIRLINE_READS = {"get_user_details", "get_reservation_details", "search_direct_flight", "search_onestop_flight",
                 "list_all_airports", "calculate"}


# -- corpora ---------------------------------------------------------------------------------------


def desk_runs() -> list[Trajectory]:
    """The demo's tickets, each solved by the agent alone, as recorded runs."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="skillforge-lift-") as tmp, ChatServer(StandInModel()) as server:
        desk.open_desk(Path(tmp) / "desk.sqlite3")
        products = {o: [it["name"] for it in desk.get_order(o)["items"]] for o in desk.order_ids()}
        forge = Forge(skills_dir=Path(tmp) / "skills", state_dir=Path(tmp) / "state", tools=desk.TOOLS, learn=False,
                      agent=OpenAIAgent(model="stand-in", client=server.client()))
        for task in tickets(60, products=products):
            r = forge.solve(task)
            if r.ok and all(c.error is None for c in r.calls):
                runs.append(forge.trajectory(task, [(c.tool, c.args, c.result, c.error) for c in r.calls], r.output))
    return runs


def _arith(expr: str) -> float | None:
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}

    def ev(n: ast.AST) -> float:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return n.value
        if isinstance(n, ast.BinOp) and type(n.op) in ops:
            return ops[type(n.op)](ev(n.left), ev(n.right))
        raise ValueError("not arithmetic")

    try:
        return round(ev(ast.parse(expr, mode="eval").body), 2)
    except (ValueError, SyntaxError, ZeroDivisionError):
        return None


def airline_runs() -> list[Trajectory]:
    """tau-bench airline tasks reconstructed as runs (reads from its database, then its gold calls)."""
    if not (DATA / "tasks.json").is_file():
        return []
    tasks = json.loads((DATA / "tasks.json").read_text())
    users = json.loads((DATA / "users.json").read_text())
    reservations = json.loads((DATA / "reservations.json").read_text())
    flights = json.loads((DATA / "flights.json").read_text())

    def result(name: str, kw: dict[str, Any]) -> Any:
        if name == "get_user_details":
            return users[kw["user_id"]]
        if name == "get_reservation_details":
            return reservations[kw["reservation_id"]]
        if name == "search_direct_flight":
            return [
                {"flight_number": f["flight_number"], "origin": f["origin"], "destination": f["destination"],
                 "date": kw["date"], **f["dates"][kw["date"]]}
                for f in flights.values()
                if f["origin"] == kw["origin"] and f["destination"] == kw["destination"] and kw["date"] in f["dates"]
            ][:5]
        if name == "calculate":
            return {"result": _arith(kw.get("expression", ""))}
        if name in ("update_reservation_flights", "update_reservation_passengers", "update_reservation_baggages"):
            return {**reservations[kw["reservation_id"]], **{k: v for k, v in kw.items() if k != "payment_id"}}
        if name == "cancel_reservation":
            return {**reservations[kw["reservation_id"]], "status": "cancelled"}
        if name == "book_reservation":
            return {"reservation_id": "NEW001", "status": "booked"}
        return {"ok": True}

    runs = []
    for task in tasks:
        calls = [Call(tool="get_user_details", args={"user_id": task["user_id"]}, result=users[task["user_id"]])]
        read_rids: set[str] = set()
        params: dict[str, tuple[str, ...]] = {"get_user_details": ("user_id",), "get_reservation_details": ("reservation_id",)}
        for action in task["actions"]:
            name, kw = action["name"], action["kwargs"]
            if name == "think":
                continue
            rid = kw.get("reservation_id")
            if rid and rid not in read_rids and rid in reservations and name != "get_reservation_details":
                calls.append(Call(tool="get_reservation_details", args={"reservation_id": rid}, result=reservations[rid]))
                read_rids.add(rid)
            if name == "get_reservation_details":
                read_rids.add(rid)
            calls.append(Call(tool=name, args=kw, result=result(name, kw)))
            params.setdefault(name, tuple(kw))
        output = "; ".join(task.get("outputs") or []) or "Done."
        tools = {n: ToolRef(module="bench.airline", qualname=n, read=n in AIRLINE_READS, params=p) for n, p in params.items()}
        runs.append(Trajectory(task=task["instruction"], calls=calls, outcome=Outcome(ok=True, output=output), tools=tools))
    return runs


def chain_run(steps: int = 20) -> Trajectory:
    """A synthetic run of ``steps`` calls: each reads what the previous one returned."""
    calls = []
    key = "K-1000"
    for i in range(steps):
        tool = f"step_{i:02d}"
        nxt = f"{key}{chr(97 + i % 26)}"
        calls.append(Call(tool=tool, args={"key": key, "account": "A-77"},
                          result={"next": nxt, "status": "ok", "count": i + 1, "items": [{"id": f"I-{i}", "qty": 1}]}))
        key = nxt
    tools = {f"step_{i:02d}": ToolRef(module="bench.chain", qualname=f"step_{i:02d}", read=i < steps - 1,
                                      params=("key", "account")) for i in range(steps)}
    return Trajectory(task="Process ticket K-1000 for account A-77", calls=calls,
                      outcome=Outcome(ok=True, output=f"Processed K-1000: {key}"), tools=tools)


# -- measuring -------------------------------------------------------------------------------------


def _kinds(spec: SkillSpec) -> Counter[str]:
    counts: Counter[str] = Counter()
    for step in spec.steps:
        for _name, expr in step.args:
            leaves = [e for e in walk_exprs(expr) if not isinstance(e, (ListOf, DictOf))]
            top = [e for e in leaves if not (isinstance(e, Ref) and any(isinstance(s, Select) and s.seq == e for s in leaves))]
            for e in top:
                if isinstance(e, Param):
                    counts["task span"] += 1
                elif isinstance(e, Select):
                    counts["selection"] += 1
                elif isinstance(e, Ref):
                    counts["result value"] += 1
                elif isinstance(e, Fmt):
                    counts["composition"] += 1
                elif isinstance(e, Const):
                    counts["constant"] += 1
    return counts


def measure(name: str, runs: list[Trajectory]) -> dict[str, Any]:
    kinds: Counter[str] = Counter()
    times, full, compiled, rejected = [], 0, 0, Counter()
    for traj in runs:
        t0 = time.perf_counter()
        verdict = compile_run(traj)
        times.append((time.perf_counter() - t0) * 1000)
        if isinstance(verdict, Rejected):
            rejected[verdict.reason.split(":")[0][:60]] += 1
            continue
        compiled += 1
        k = _kinds(verdict.spec)
        kinds += k
        full += k["constant"] == 0
    total = sum(kinds.values()) or 1
    return {
        "name": name, "runs": len(runs), "compiled": compiled, "fully": full, "kinds": kinds, "total": total,
        "median_ms": statistics.median(times) if times else 0.0,
        "p95_ms": sorted(times)[int(0.95 * (len(times) - 1))] if times else 0.0, "rejected": rejected,
    }


def run(quick: bool = False) -> list[dict[str, Any]]:
    rows = [measure("support desk (demo)", desk_runs()), measure("tau-airline (public)", airline_runs())]
    chain = chain_run(20)
    verdict = compile_run(chain)
    if not isinstance(verdict, Compiled):
        raise RuntimeError(f"the 20-step chain did not compile: {verdict}")
    rows.append(measure("20-step chain (x30)", [chain] * (10 if quick else 30)))
    return rows


def report(rows: list[dict[str, Any]]) -> str:
    kinds = ["task span", "result value", "selection", "composition", "constant"]
    head = f"{'corpus':24} {'runs':>5} {'skills':>6} {'no const':>8} " + " ".join(f"{k:>12}" for k in kinds)
    lines = ["lifting: share of argument values by source; compile+admit time per run", head + f" {'median':>8} {'p95':>8}"]
    for r in rows:
        shares = " ".join(f"{100 * r['kinds'][k] / r['total']:11.1f}%" for k in kinds)
        full = f"{100 * r['fully'] / max(r['compiled'], 1):7.0f}%"
        lines.append(
            f"{r['name']:24} {r['runs']:>5} {r['compiled']:>6} {full:>8} {shares} {r['median_ms']:6.1f}ms {r['p95_ms']:6.1f}ms"
        )
        for reason, n in r["rejected"].most_common(3):
            lines.append(f"{'':26}not compiled ({n}): {reason}")
    lines.append("goal: a 20-step run compiles and is admitted in 30 ms or less (median), libcst included")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys as _sys

    _sys.stdout.write(report(run(quick="--quick" in _sys.argv)) + "\n")
