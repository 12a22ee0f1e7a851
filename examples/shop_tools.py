"""Tools for the quickstart example: a tiny order book in memory.

Tools live in an importable module (not in __main__), so that learned skill
files can import them.
"""

from __future__ import annotations

import skillforge

ORDERS = {
    "1234": {"id": "1234", "status": "delivered", "total": 30.0, "payment_id": "PAY-1"},
    "5678": {"id": "5678", "status": "delivered", "total": 12.5, "payment_id": "PAY-2"},
}
REFUNDS: list[tuple[str, float]] = []


@skillforge.tool(read=True)
def get_order(order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: the order number.
    """
    return dict(ORDERS[order_id])


@skillforge.tool
def refund(payment_id: str, amount: float) -> dict:
    """Refund a payment.

    Args:
        payment_id: the payment to refund.
        amount: how much.
    """
    REFUNDS.append((payment_id, amount))
    return {"refunded": amount}
