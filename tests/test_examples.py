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
