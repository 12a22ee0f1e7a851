"""Things to close, with tools whose values a test can make hostile, and an agent that closes them.

A task reads "Close thing #42". The agent reads the thing, closes it if it is open and answers
"Closed thing 42." (or "Thing 42 is not open."). Given ``transcript=``, it takes the calls already
made from it and never repeats a write. ``HOSTILE`` (set by a test, cleared by ``reset``) makes a
tool return a value skillforge cannot record, or makes the agent misbehave after its write:

- ``read_extra`` / ``write_extra``: fields merged into what ``get_thing`` / ``close_thing`` return;
- ``write_status``: the status ``close_thing`` reports (``closed`` by default);
- ``after_write``: what the agent does after its write: ``"raise"`` (a RuntimeError), ``"user-error"``
  (it misuses skillforge: a nested ``solve()`` of an empty task), ``"skill"`` (it calls the skill
  ``SKILL["func"]`` as a plain function for thing ``SKILL["other"]``), ``"tool-skill"`` (it calls
  ``close_via_skill``, a tool that calls that skill).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tests.toolsets._continuing import continuing

WRITES: list[str] = []  # thing ids, one per close that took effect
STATUS: dict[str, str] = {}  # thing id -> status (open unless set)
HOSTILE: dict[str, Any] = {}
TOOLBOX: dict[str, Any] = {}  # name -> the callable the agent uses (a Forge's recording wrapper)
SKILL: dict[str, Any] = {}
FORGE: dict[str, Any] = {}


def reset() -> None:
    WRITES.clear()
    STATUS.clear()
    HOSTILE.clear()
    TOOLBOX.clear()
    SKILL.clear()
    FORGE.clear()


def get_thing(thing_id: str) -> dict:
    """A thing: its id and status."""
    return {"id": thing_id, "status": STATUS.get(thing_id, "open"), **HOSTILE.get("read_extra", {})}


def close_thing(thing_id: str) -> dict:
    """Close an open thing."""
    WRITES.append(thing_id)
    STATUS[thing_id] = "closed"
    return {"id": thing_id, "status": HOSTILE.get("write_status", "closed"), **HOSTILE.get("write_extra", {})}


def close_via_skill(thing_id: str) -> dict:
    """Close a thing by running the learned skill (a tool that calls a skill as a plain function)."""
    return {"answer": SKILL["func"](thing_id=thing_id)}


def _answer(thing_id: str, status: str) -> str:
    return f"Closed thing {thing_id}." if status == "open" else f"Thing {thing_id} is not open."


def agent(task: str, transcript: Sequence[Any] | None = None) -> str:
    """Close the thing the task names, continuing from ``transcript`` if given."""
    call = continuing(transcript, TOOLBOX)

    thing_id = re.search(r"#(\w+)", task)[1]  # type: ignore[index]
    thing = call("get_thing", thing_id=thing_id)
    if thing["status"] == "open":
        call("close_thing", thing_id=thing_id)
    after = HOSTILE.get("after_write")
    if after == "raise":
        raise RuntimeError("the agent lost its connection after closing")
    if after == "user-error":
        FORGE["forge"].solve("")  # misuse inside a run: an empty task
    if after == "skill":
        SKILL["func"](thing_id=SKILL["other"])
    if after == "tool-skill":
        TOOLBOX["close_via_skill"](thing_id=SKILL["other"])
    return _answer(thing_id, thing["status"])


class Box:
    """Tools a skill file cannot import by name."""

    @staticmethod
    def stamp(thing_id: str) -> dict:
        """Stamp a thing."""
        return {"id": thing_id, "stamped": True}

    @classmethod
    def seal(cls, thing_id: str) -> dict:
        """Seal a thing."""
        return {"id": thing_id, "sealed": True}


unnamed = lambda thing_id: {"id": thing_id}  # noqa: E731 - the lambda case, on purpose
