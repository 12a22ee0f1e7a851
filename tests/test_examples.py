"""The README's example runs as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_quickstart_example_learns_then_serves_from_the_skill() -> None:
    out = subprocess.run([sys.executable, "-m", "examples.quickstart"], cwd=REPO, capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0] == "agent refund_order Refunded 30.0 for order 1234"
    assert lines[1] == "skill refund_order 0 Refunded 12.5 for order 5678"
    assert lines[2] == "[('get_order', {'order_id': '5678'}), ('refund', {'payment_id': 'PAY-2', 'amount': 12.5})]"


def test_committed_skill_imports_from_the_skills_package_as_a_plain_function(tmp_path: Path) -> None:
    script = (
        "from skillforge.demo import desk\n"
        f"desk.open_desk({str(tmp_path / 'desk.sqlite3')!r})\n"
        "from skills.refund_order import refund_order\n"
        "print(refund_order(order_id='1002'))\n"  # processing: a circumstance the skill was learned in
        "print(desk.get_order('1002')['status'])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    answer, status = out.stdout.splitlines()
    assert answer.startswith("Refunded $") and answer.endswith("for order 1002.")
    assert status == "refunded"


def test_the_skills_package_exports_each_skill_by_name(tmp_path: Path) -> None:
    script = (
        "from skillforge.demo import desk\n"
        f"desk.open_desk({str(tmp_path / 'desk.sqlite3')!r})\n"
        "import skills\n"
        "from skills import where_order\n"
        "print(where_order(order_id='1002'))\n"
        "print(sorted(skills.__all__) == skills.__all__, 'where_order' in skills.__all__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["Order 1002 is processing.", "True True"]


def test_the_committed_package_init_is_what_skillforge_generates(tmp_path: Path) -> None:
    import shutil

    from skillforge._library import Library

    copy = tmp_path / "skills"
    shutil.copytree(REPO / "skills", copy)
    Library(copy).write_package_init()
    assert (copy / "__init__.py").read_text() == (REPO / "skills" / "__init__.py").read_text(), "run `make skills`"
