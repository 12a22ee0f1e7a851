"""muscle-mem's documented behaviour on the compatibility layer, and each documented difference.

Written afresh from muscle-mem's public README (``../shared/reference/muscle-mem-README.md``).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillforge.compat.muscle_mem import Check, Engine, EngineError

REFERENCE = Path(__file__).resolve().parent.parent.parent / "shared" / "reference" / "muscle-mem-README.md"
if not REFERENCE.is_file():  # the repository's own copy of the shared tree, when run from elsewhere
    REFERENCE = Path(__file__).resolve().parent.parent / "shared" / "reference" / "muscle-mem-README.md"


def _readme_block(after: str) -> str:
    text = REFERENCE.read_text()
    return text.split(after, 1)[1].split("```python", 1)[1].split("```", 1)[0]


@pytest.mark.skipif(not REFERENCE.is_file(), reason="muscle-mem's README is not beside the repository")
def test_the_readme_example_runs_unchanged_but_for_its_import(tmp_path: Path) -> None:
    code = _readme_block("### Putting it all together")
    assert "from muscle_mem import Check, Engine" in code
    script = tmp_path / "example.py"
    script.write_text(code.replace("from muscle_mem import Check, Engine", "from skillforge.compat.muscle_mem import Check, Engine"))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr  # its own asserts: miss, hit, then a miss once the check expires
    lines = out.stdout.splitlines()
    assert lines == [f"hello erik + {i}" for i in range(9)] * 3  # agent, replay, agent


# -- documented behaviour -------------------------------------------------------------------------


class Greeter:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.said: list[str] = []


def _engine_with_method():
    engine = Engine()

    class SomeClient:
        def __init__(self, tag: str) -> None:
            self.tag = tag
            self.said: list[str] = []

        @engine.method()
        def hello(self, name: str) -> None:
            self.said.append(f"{self.tag}: hello {name}")

    return engine, SomeClient


def test_functions_stay_plain_outside_the_engine() -> None:
    engine = Engine()
    calls: list[str] = []

    @engine.function()
    def hello(name: str) -> None:
        calls.append(name)

    hello("world")
    assert calls == ["world"]


def test_methods_get_the_context_injected_as_self_on_replay() -> None:
    engine, SomeClient = _engine_with_method()
    recorder = SomeClient("recorded")
    engine.set_agent(lambda task: recorder.hello("world")).set_context(recorder).finalize()
    assert engine("say hello world!") is False
    assert engine("say hello world!") is True
    assert recorder.said == ["recorded: hello world"] * 2
    other = SomeClient("context")
    engine.finalized = False
    engine.set_context(other)
    assert engine("say hello world!") is True
    assert other.said == ["context: hello world"]  # replayed on the object given as context


def test_finalize_checks_tools_agent_and_context_like_muscle_mem() -> None:
    with pytest.raises(ValueError, match="at least one tool"):
        Engine().set_agent(lambda: None).finalize()
    engine = Engine()
    engine.function()(lambda x: x)
    with pytest.raises(EngineError, match="must have an agent"):
        engine.finalize()
    engine, _client = _engine_with_method()
    with pytest.raises(ValueError, match="set_context"):
        engine.set_agent(lambda task: None).finalize()
    engine.set_context(object()).finalize()
    with pytest.raises(ValueError, match="finalized"):
        engine.set_agent(lambda task: None)


def test_params_are_substituted_like_muscle_mems() -> None:
    engine = Engine()
    said: list[str] = []

    @engine.function()
    def hello(name: str) -> None:
        said.append(name)

    current = {"name": "erik"}
    engine.set_agent(lambda task: hello(current["name"])).finalize()
    assert engine("greet", params={"name": "erik"}) is False
    current["name"] = "bob"
    assert engine("greet", params={"name": "bob"}) is True  # replayed, with the new value
    assert said == ["erik", "bob"]


def test_tags_partition_stored_runs() -> None:
    engine = Engine()
    said: list[str] = []

    @engine.function()
    def hello(name: str) -> None:
        said.append(name)

    engine.set_agent(lambda task: hello("x")).finalize()
    assert engine("greet", tags=["a"]) is False
    assert engine("greet", tags=["a"]) is True
    assert engine("greet", tags=["b"]) is False  # another tag: not this run
    assert engine("greet") is False


def test_a_pre_check_chooses_among_stored_runs() -> None:
    engine = Engine()
    state = {"mode": "light"}
    out: list[str] = []

    @engine.function(pre_check=Check(lambda style: state["mode"], lambda now, then: now == then))
    def paint(style: str) -> None:
        out.append(f"{style} in {state['mode']}")

    engine.set_agent(lambda task: paint(state["mode"] + "-theme")).finalize()
    assert engine("paint it") is False  # learned in light mode
    assert engine("paint it") is True
    state["mode"] = "dark"
    assert engine("paint it") is False  # the check fails before anything runs: the agent paints
    assert out[-1] == "dark-theme in dark"


# -- documented differences -----------------------------------------------------------------------


def test_difference_the_task_text_counts() -> None:
    engine = Engine()
    added: list[int] = []

    @engine.function()
    def add(x: int) -> None:
        added.append(x)

    engine.set_agent(lambda task: add(int(task.split()[-1]))).finalize()
    assert engine("add 1") is False
    assert engine("add 2") is True  # the value is a parameter: replayed with 2, not 1 (muscle-mem replays add(1))
    assert added == [1, 2]

    tenfold = Engine()

    @tenfold.function()
    def store(x: int) -> None:
        added.append(x)

    tenfold.set_agent(lambda task: store(int(task.split()[-1]) * 10)).finalize()
    assert tenfold("store 1") is False
    assert tenfold("store 2") is False  # 10 has no source in "store 2": a miss, never a replay of store(10)
    assert added[-2:] == [10, 20]


def _two_steps(resumes: bool):
    """An engine whose second tool has a pre-check on a gate; the run is learned and replayed once."""
    engine = Engine()
    calls: list[str] = []
    gate = {"open": True}

    @engine.function()
    def step_one(name: str) -> None:
        calls.append(f"one {name}")

    @engine.function(pre_check=Check(lambda name: gate["open"], lambda now, then: now == then))
    def step_two(name: str) -> None:
        calls.append(f"two {name}")

    def plain_agent(task: str) -> None:
        step_one(task)
        step_two(task)

    def resuming_agent(task: str, transcript=None) -> None:
        if not transcript:
            step_one(task)
        step_two(task)

    engine.set_agent(resuming_agent if resumes else plain_agent).finalize()
    assert engine("job") is False and engine("job") is True
    calls.clear()
    gate["open"] = False
    return engine, calls


def test_difference_no_tool_call_is_repeated_after_a_partial_replay() -> None:
    engine, calls = _two_steps(resumes=False)
    assert engine("job") is False
    # muscle-mem would have replayed step_one, then restarted the agent: step_one twice
    assert calls == ["one job"]
    assert "writes are never repeated" in engine.last_result.error


def test_difference_an_agent_that_takes_a_transcript_continues_from_it() -> None:
    engine, calls = _two_steps(resumes=True)
    assert engine("job") is False
    assert calls == ["one job", "two job"]  # the skill made step one, the agent step two: nothing twice


def test_difference_hits_are_not_stored_and_memory_stays_flat() -> None:
    engine = Engine()

    @engine.function(pre_check=Check(lambda name: 1, lambda now, then: now == then))
    def hello(name: str) -> None:
        pass

    engine.set_agent(lambda task: [hello(f"{task} {i}") for i in range(3)] and None).finalize()
    assert engine("erik") is False
    files = sorted(p.name for p in engine.forge.skills_dir.rglob("*") if p.is_file())
    kept = len(engine._snapshots)
    t0 = time.perf_counter()
    for _ in range(200):
        assert engine("erik") is True
    assert time.perf_counter() - t0 < 10
    assert sorted(p.name for p in engine.forge.skills_dir.rglob("*") if p.is_file()) == files
    assert len(engine._snapshots) == kept


def test_difference_a_failing_post_check_stops_the_replay_instead_of_raising() -> None:
    engine = Engine()
    world = {"ok": True}
    calls: list[str] = []

    @engine.function(post_check=Check(lambda name: world["ok"], lambda now, then: now == then))
    def first(name: str) -> None:
        calls.append("first")

    @engine.function()
    def second(name: str) -> None:
        calls.append("second")

    def agent(task: str) -> None:
        first(task)
        if world["ok"]:
            second(task)

    engine.set_agent(agent).finalize()
    assert engine("go") is False and engine("go") is True
    calls.clear()
    world["ok"] = False
    assert engine("go") is False  # muscle-mem raises ValueError here, mid-run
    assert calls == ["first"]  # stopped after the post-check, before "second"
    assert "post-check" in engine.last_result.handover
