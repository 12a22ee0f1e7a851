"""Public result types print short: a skill by name, never its file's whole source."""

from __future__ import annotations

import shutil
from pathlib import Path

from skillforge import Forge, compile_run
from skillforge.demo import desk

REPO = Path(__file__).resolve().parent.parent


def test_match_skill_file_and_compiled_print_names_values_and_templates_not_sources(tmp_path: Path, desk_db: Path) -> None:
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    forge = Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", tools=desk.TOOLS)
    match = forge.find("Where is my order #1010?")
    assert repr(match) == "Match(skill='where_order', params={'order_id': '1010'}, template='Where is my order #{order_id}?')"
    skill = match.skill
    assert repr(skill) == (
        f"SkillFile(name='where_order', path='{tmp_path / 'skills' / 'where_order.py'}', "
        "template='Where is my order #{order_id}?', runs=5, edited=False)"
    )
    assert skill.source not in repr([match, skill])  # the source is in the object, not in its repr

    run = forge.library.load_run(skill.runs[0])
    compiled = compile_run(run, name="where_order")
    assert repr(compiled).startswith("Compiled(name='where_order', template='Where is my order #{order_id}?', lines=")
    assert len(repr(compiled)) < 120 and "def where_order" in compiled.source
