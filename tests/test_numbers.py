"""A number the agent's answer always says ("within 5-7 business days") is learned as text, from runs
of other worlds; a number it may have computed is not. On runs alone (the policy, ``_numbers``), then
through a Forge whose tools use a real SQLite file (the held runs on disk)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from skillforge import Forge
from skillforge import _held
from skillforge._codegen import render_skill
from skillforge._compile import prove_all
from skillforge._held import HeldRuns
from skillforge._learning import same_program, spec_from_runs
from skillforge._lifting import Rejected, discover_template, lift
from skillforge._numbers import NUMBER_RUNS
from skillforge._trajectory import Call, Outcome, ToolRef, Trajectory
from tests.toolsets import refunds

TOOLS = {
    "get_order": ToolRef(module="shop", qualname="get_order", read=True, params=("order_id",)),
    "cancel_order": ToolRef(module="shop", qualname="cancel_order", params=("order_id",)),
}
DAYS = "within 5-7 business days"


def run(order_id: str, card: str, total: float, *, said: str | None = None, items: int = 1) -> Trajectory:
    """A cancel of ``order_id``: the order read, cancelled, and the answer (``said``: its last words)."""
    order = {"id": order_id, "status": "pending", "card": card, "total": total, "items": [{"sku": f"S{i}"} for i in range(items)]}
    answer = f"Cancelled order {order_id}: ${total:.2f} goes back to the card ending {card} {DAYS if said is None else said}."
    return Trajectory(
        task=f"Cancel order #{order_id}",
        calls=[
            Call(tool="get_order", args={"order_id": order_id}, result=order),
            Call(tool="cancel_order", args={"order_id": order_id}, result={**order, "status": "cancelled"}),
        ],
        outcome=Outcome(ok=True, output=answer),
        tools=TOOLS,
    )


WORLDS = [("KA", "1234", 42.5), ("KB", "9876", 99.99), ("KC", "4242", 17.25), ("KD", "1111", 42.0)]  # ids say no digit


def learn(runs: list[Trajectory]) -> Any:
    """The spec learned from ``runs`` under the first run's template (proven on every run), or the Rejected."""
    template = discover_template(runs[0], literal=frozenset())
    assert not isinstance(template, Rejected), template
    spec = spec_from_runs(runs, name="cancel_order_skill", template=template)
    if not isinstance(spec, Rejected):
        assert prove_all(render_skill(spec), spec, runs) is None
    return spec


def test_one_run_says_where_its_unexplained_numbers_stand_and_stays_unlearned() -> None:
    found = lift(run(*WORLDS[0]))
    assert isinstance(found, Rejected) and "computed value" in found.reason
    assert {n for _text, n in found.numbers} == {"5", "7"}
    assert all(DAYS in text for text, _n in found.numbers)  # the answer's literal text each stands in: its place
    assert isinstance(learn([run(*WORLDS[0])]), Rejected)


def test_a_number_said_in_the_same_place_in_enough_worlds_is_learned_as_text() -> None:
    runs = [run(*w) for w in WORLDS[:NUMBER_RUNS]]
    spec = learn(runs)
    assert not isinstance(spec, Rejected), spec
    source = render_skill(spec)
    assert DAYS in source  # the number stays the answer's text
    assert prove_all(source, spec, [run(*WORLDS[NUMBER_RUNS])]) is None  # and another world gets the same words


def test_fewer_runs_than_needed_are_not_enough() -> None:
    found = learn([run(*w) for w in WORLDS[: NUMBER_RUNS - 1]])
    assert isinstance(found, Rejected) and f"{NUMBER_RUNS} are needed" in found.reason, found


def test_runs_whose_answers_quote_equal_results_are_no_evidence() -> None:
    # the same card and total in every run: only the task's order id differs, so a number computed from
    # what the answer reads would coincide; and a sum over equal items too
    same = [run(oid, "1234", 42.5) for oid in ("KA", "KB", "KC", "KD")]
    found = learn(same)
    assert isinstance(found, Rejected) and "1 run(s)" in found.reason, found
    # two of three alike: two worlds, not three
    found = learn([run("KA", "1234", 42.5), run("KB", "1234", 42.5), run("KC", "9876", 99.99)])
    assert isinstance(found, Rejected) and "2 run(s)" in found.reason, found


def test_a_count_that_coincides_is_not_learned_where_the_answer_reads_nothing_else() -> None:
    def counted(order_id: str, items: int) -> Trajectory:  # "2 items": a count of what passed a filter, say
        base = run(order_id, "1234", 10.0, items=items + 1)
        return base.model_copy(update={"outcome": Outcome(ok=True, output=f"Order {order_id} has 2 items left to ship.")})

    found = learn([counted("KA", 2), counted("KB", 3), counted("KC", 4), counted("KD", 5)])
    assert isinstance(found, Rejected), found  # the answer quotes no result: no world shown to differ where it reads


def test_a_number_that_differs_between_runs_keeps_them_apart() -> None:
    runs = [run(*w) for w in WORLDS[:NUMBER_RUNS]] + [run("KF", "3333", 8.0, said="within 3-5 business days")]
    found = learn(runs)
    assert isinstance(found, Rejected) and "says '3' as its text in 1 run(s)" in found.reason, found
    assert not isinstance(learn(runs[:NUMBER_RUNS]), Rejected)  # without it, they show the number fixed


def test_a_run_that_does_not_say_the_number_is_no_evidence_for_it() -> None:
    runs = [run(*w) for w in WORLDS[: NUMBER_RUNS - 1]] + [run("KF", "3333", 8.0, said="today")]
    found = learn(runs)
    assert isinstance(found, Rejected) and f"in {NUMBER_RUNS - 1} run(s)" in found.reason, found


def test_the_same_number_in_another_place_is_other_evidence() -> None:
    runs = [run(*w) for w in WORLDS[: NUMBER_RUNS - 1]] + [run("KF", "3333", 8.0, said="in 5-7 business days")]
    found = learn(runs)
    assert isinstance(found, Rejected) and "in 1 run(s)" in found.reason, found  # "in 5-7": said once there


# -- through a Forge: held runs on disk, learned together ---------------------------------------------------


def forge_for(tmp_path: Path, answer: Any = refunds.fixed_answer) -> Forge:
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state")
    get_order = forge.tool(read=True)(refunds.get_order)
    cancel_order = forge.tool(refunds.cancel_order)

    def agent(task: str) -> str:
        oid = re.search(r"\bA\d\b", task)[0]  # type: ignore[index]
        get_order(order_id=oid)
        return answer(cancel_order(order_id=oid))

    forge.agent = agent
    return forge


def held_files(tmp_path: Path) -> int:
    return len(list((tmp_path / "state" / "held").glob("*/*.json")))


def test_a_forge_holds_such_runs_learns_from_enough_of_them_and_serves_the_next(tmp_path: Path) -> None:
    refunds.make(tmp_path / "shop.sqlite3")
    forge = forge_for(tmp_path)
    ids = ["A1", "A2", "A3", "A4"]
    for k, oid in enumerate(ids[: NUMBER_RUNS - 1]):
        first = forge.solve(f"Cancel order {oid}")
        assert first.source == "agent" and not first.learned
        assert "held as evidence" in (first.not_learned or ""), first.not_learned
        assert held_files(tmp_path) == k + 1
    forge.close()

    forge = forge_for(tmp_path)  # another process: the held runs are files
    third = forge.solve(f"Cancel order {ids[NUMBER_RUNS - 1]}")
    assert third.learned, third.not_learned
    assert held_files(tmp_path) == 0  # the skill keeps its runs now
    source = (tmp_path / "skills" / f"{third.learned}.py").read_text()
    assert DAYS in source

    served = forge.solve("Cancel order A6")
    assert served.source == "skill", served.handover
    assert served.output == refunds.fixed_answer(refunds.get_order("A6")) and refunds.status("A6") == "cancelled"
    forge.close()


def test_held_runs_of_one_program_said_in_other_words_are_one_skill_with_phrasings(tmp_path: Path) -> None:
    refunds.make(tmp_path / "shop.sqlite3")
    forge = forge_for(tmp_path)
    asked = ["Cancel order A1", "Please cancel A2 for me", "A3: cancel it"][:NUMBER_RUNS]
    results = [forge.solve(task) for task in asked]
    assert [bool(r.learned) for r in results] == [False] * (NUMBER_RUNS - 1) + [True], [r.not_learned for r in results]
    served = [forge.solve(task) for task in ("Cancel order A4", "Please cancel A6 for me")]
    assert [r.source for r in served] == ["skill", "skill"], [r.handover for r in served]
    assert served[1].output == refunds.fixed_answer(refunds.get_order("A6"))
    assert len(list((tmp_path / "skills").glob("*.py"))) == 2  # the skill, and the package's __init__
    forge.close()


def test_a_forge_never_learns_a_number_the_agent_computed(tmp_path: Path) -> None:
    refunds.make(tmp_path / "shop.sqlite3")
    forge = forge_for(tmp_path, refunds.computed_answer)
    for oid in ["A1", "A2", "A3", "A4", "A6", "A8"]:
        result = forge.solve(f"Cancel order {oid}")
        assert result.source == "agent" and not result.learned, result.learned
        assert "computed value" in (result.not_learned or "")
    assert not list((tmp_path / "skills").glob("*.py"))
    forge.close()


# -- the store: bounded, and a file that cannot be read is evidence lost, nothing more --------------------------


def test_held_runs_are_bounded_per_program_and_in_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    held = HeldRuns(tmp_path / "held")
    runs = [run(f"K{chr(65 + i)}", f"{1000 + i}", 10.0 + i) for i in range(_held.MAX_PER_PROGRAM + 3)]
    for r in runs:
        held.add("one", r)
    assert [r.hash for r in held.runs("one")] == [r.hash for r in runs[3:]]  # the newest, oldest first
    held.discard("one", {r.hash for r in runs[3:5]})
    assert [r.hash for r in held.runs("one")] == [r.hash for r in runs[5:]]
    monkeypatch.setattr(_held, "MAX_HELD", 4)
    held.add("two", runs[0])
    assert held.count() == 4 and [r.hash for r in held.runs("two")] == [runs[0].hash]
    for r in runs[:6]:  # one program each: the oldest go, and the folders they leave empty
        held.add(r.hash, r)
    assert held.count() == 4 and len(list((tmp_path / "held").iterdir())) == 4
    assert held.runs("one") == [] and held.runs("two") == []


def test_a_held_file_that_cannot_be_read_is_dropped(tmp_path: Path) -> None:
    held = HeldRuns(tmp_path / "held")
    held.add("one", run(*WORLDS[0]))
    (broken,) = list((tmp_path / "held").glob("*/*.json"))
    broken.write_text("{not json", encoding="utf-8")
    assert held.runs("one") == [] and not broken.exists()


# -- how an answer writes an amount: $99.99 fits ',.2f' as well as '.2f'; $1,042.50 only ',.2f' -----------------


def written(order_id: str, card: str, total: float, money: str) -> Trajectory:
    base = run(order_id, card, total)
    said = f"Cancelled order {order_id}: ${format(total, money)} goes back to the card ending {card} {DAYS}."
    return base.model_copy(update={"outcome": Outcome(ok=True, output=said)})


def test_amounts_on_both_sides_of_a_thousand_are_written_one_way() -> None:
    runs = [written("KA", "1234", 1042.5, ",.2f"), written("KB", "9876", 99.99, ",.2f"), written("KC", "4242", 17.25, ",.2f")]
    big, one = (lift(r, literal=lift(r).numbers) for r in runs[:2])  # type: ignore[union-attr]
    assert not isinstance(one, Rejected) and "'.2f'" in repr(one.output)  # alone, $99.99 reads as '.2f'
    assert not isinstance(big, Rejected) and same_program(one, big) == {"order_id": "order_id"}  # one program, said so
    spec = learn(runs)
    assert not isinstance(spec, Rejected), spec
    assert "'.2f'" not in repr(spec.output) and "',.2f'" in repr(spec.output)  # the one way every run fits
    assert prove_all(render_skill(spec), spec, [written("KD", "1111", 2500.0, ",.2f")]) is None


def test_amounts_written_two_ways_that_no_one_format_fits_keep_runs_apart() -> None:
    runs = [written("KA", "1234", 1042.5, ".2f"), written("KB", "9876", 2000.0, ",.2f"), written("KC", "4242", 17.25, ".2f")]
    found = learn(runs)  # 1042.50 and 2,000.00: no one format writes both as they were written
    assert isinstance(found, Rejected), found
