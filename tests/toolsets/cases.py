"""A case tracker whose cases are said whole ("CS-1201") or by their bare number ("#1201", "case 1201").

The agent reads a case "#1201" as "CS-1201" (its tracker's prefix), reads it, and resolves it
with the comment the task gives unless it is resolved already (then it says so and writes
nothing). Same conventions as ``tests/toolsets/probes_round2.py``: one world at a time in ``W``,
every write appends to ``W["writes"]``; the agent accepts ``transcript=`` and continues from
the calls a skill already made.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from tests.toolsets.safety import Tools
from tests.toolsets._worlds import dict_world

W, load, state = dict_world()  # the current world; load(world) makes a deep copy of one current


def get_case(case_id: str) -> dict:
    """Look up a case by its id, like "CS-1201": id, state and comment."""
    if case_id not in W["cases"]:
        raise KeyError(f"no case {case_id!r}")
    return copy.deepcopy(W["cases"][case_id])


def resolve_case(case_id: str, comment: str) -> dict:
    """Resolve a case with a comment."""
    W["writes"].append(("resolve_case", {"case_id": case_id, "comment": comment}))
    W["cases"][case_id].update(state="resolved", comment=comment)
    return {"id": case_id, "state": "resolved"}


READS = [get_case]
WRITES = [resolve_case]

_PHRASINGS = [
    re.compile(r"Resolve case (?:(?P<id>CS-\d+)|(?P<number>\d+)), comment: (?P<comment>[^.]+)\.?$"),
    re.compile(r"Please resolve #(?P<number>\d+) with comment: (?P<comment>[^.]+)\.?$"),
]


def case_agent(t: dict[str, Any]):
    """Resolve a case (said whole or by number) unless it is resolved already."""

    def agent(task: str, transcript: list | None = None) -> str:
        tools = Tools(t, transcript)
        for pattern in _PHRASINGS:
            m = pattern.match(task)
            if m is None:
                continue
            case_id = m.groupdict().get("id") or f"CS-{m['number']}"
            case = tools.get_case(case_id=case_id)
            if case["state"] == "resolved":
                return f"{case_id} is resolved already; I left it as it is."
            tools.resolve_case(case_id=case_id, comment=m["comment"])
            return f"Resolved {case_id} with the comment \"{m['comment']}\"."
        return "I cannot help with that."

    return agent


def world(*cases: tuple[str, str]) -> dict[str, Any]:
    """A world of cases given as (id, state)."""
    return {"cases": {cid: {"id": cid, "state": st, "comment": ""} for cid, st in cases}}
