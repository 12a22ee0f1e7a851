"""Quickstart: bring your own agent, let skillforge learn from it, then serve repeats as code.

Run from the repository root:  .venv/bin/python -m examples.quickstart
"""

from __future__ import annotations

import tempfile

import skillforge
from examples.shop_tools import REFUNDS, get_order, refund


def my_agent(task: str) -> str:
    """Stands in for an LLM agent: it calls the decorated tools to do the task."""
    order_id = task.rsplit("#", 1)[-1]
    order = get_order(order_id=order_id)
    refund(payment_id=order["payment_id"], amount=order["total"])
    return f"Refunded {order['total']} for order {order_id}"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        forge = skillforge.Forge(skills_dir=f"{tmp}/skills", state_dir=f"{tmp}/.skillforge", agent=my_agent)
        forge.tool(read=True)(get_order)  # register the module's tools on this forge
        forge.tool(refund)

        first = forge.solve("Refund order #1234")
        print(first.source, first.learned, first.output)  # agent refund_order Refunded 30.0 for order 1234

        second = forge.solve("Refund order #5678")
        print(second.source, second.skill, second.llm_calls, second.output)  # skill refund_order 0 Refunded 12.5 ...
        print([(c.tool, c.args) for c in second.calls])
        print(REFUNDS)


if __name__ == "__main__":
    main()
