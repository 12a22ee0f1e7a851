"""Re-learn the committed ``skills/`` from the demo's ticket stream: ``python -m skillforge.demo.regenerate``.

The demo is deterministic (seeded database, seeded tickets, rule-based stand-in
model), so the same code gives the same skill files and run records; review the
diff like any change.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from .run import TicketOutcome, run_demo


def regenerate(target: Path) -> list[str]:
    """Run the demo in a scratch directory and copy its skills and runs to ``target``."""
    with tempfile.TemporaryDirectory(prefix="skillforge-regen-") as tmp:
        learned = [
            e.result.learned for e in run_demo(Path(tmp), real_model=False) if isinstance(e, TicketOutcome) and e.result.learned
        ]
        src = Path(tmp) / "skills"
        for old in list(target.glob("*.py")) + list((target / "runs").glob("*.json")):
            if not old.name.startswith("_"):
                old.unlink()
        (target / "runs").mkdir(parents=True, exist_ok=True)
        for f in src.glob("*.py"):
            shutil.copyfile(f, target / f.name)
        for f in (src / "runs").glob("*.json"):
            shutil.copyfile(f, target / "runs" / f.name)
        shutil.copyfile(src / "__init__.py", target / "__init__.py")
    return learned


if __name__ == "__main__":
    names = regenerate(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("skills"))
    sys.stdout.write(f"regenerated {len(names)} skills: {', '.join(names)}\n")
