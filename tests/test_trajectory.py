"""Trajectories: canonical JSON, content hash, faithful snapshots."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from skillforge import Call, NotSerializableError, Outcome, ToolRef, Trajectory, canonical_json
from skillforge._trajectory import json_snapshot


def test_canonical_json_sorts_keys_and_fixes_separators() -> None:
    assert canonical_json({"b": [1, 2.5], "a": {"z": None, "y": "é"}}) == '{"a":{"y":"é","z":null},"b":[1,2.5]}'


def test_hash_ignores_key_order_but_not_values() -> None:
    def make(args: dict) -> Trajectory:
        return Trajectory(task="t", calls=[Call(tool="f", args=args, result=1)], outcome=Outcome(ok=True),
                          tools={"f": ToolRef(module="m", qualname="f")})

    assert make({"a": 1, "b": 2}).hash == make({"b": 2, "a": 1}).hash
    assert make({"a": 1, "b": 2}).hash != make({"a": 1, "b": 3}).hash
    assert make({"a": 1}).hash != make({"a": 1.0}).hash  # 1 and 1.0 are different recordings


def test_round_trip_through_json_is_exact() -> None:
    t = Trajectory(task="Refund #1", calls=[Call(tool="f", args={"x": [1, {"y": None}]}, result={"ok": True})],
                   outcome=Outcome(ok=True, output="done"), tools={"f": ToolRef(module="m", qualname="f", params=("x",))})
    again = Trajectory.from_json(t.model_dump_json())
    assert again == t and again.hash == t.hash


@pytest.mark.parametrize(
    ("value", "path", "type_name"),
    [
        ({"a": (1, 2)}, "['a']", "tuple"),
        ([1, {2: "x"}], "[1][2]", "dict key of type int"),
        ({"v": math.nan}, "['v']", "non-finite float"),
        ({"s": {1, 2}}, "['s']", "set"),
        (Path("x"), "", "PosixPath"),
    ],
)
def test_snapshots_refuse_non_json_values_with_the_path(value, path: str, type_name: str) -> None:
    with pytest.raises(NotSerializableError) as e:
        json_snapshot(value, "tool_x", "result")
    assert e.value.path == path and type_name in e.value.type_name
    assert "tool 'tool_x': result" in str(e.value)


def test_snapshots_are_deep_copies() -> None:
    original = {"items": [{"n": 1}]}
    snap = json_snapshot(original, "t", "result")
    original["items"][0]["n"] = 2
    assert snap == {"items": [{"n": 1}]}


def test_a_non_json_final_answer_is_not_learned(desk_db, make_forge) -> None:
    from skillforge.demo import desk

    forge = make_forge(agent=lambda task: {"order": desk.get_order(order_id="1001"), "at": {1, 2}})
    result = forge.solve("Show order 1001")
    assert result.ok and result.learned is None
    assert "the agent's final answer at ['at'] is a set" in result.not_learned
