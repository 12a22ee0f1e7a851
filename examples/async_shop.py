"""Async tools for the async quickstart: the quickstart's order book, behind ``async def``.

Tools live in an importable module (not in __main__), so that learned skill files can import them.
They are registered on a Forge by ``examples.async_quickstart``.
"""

from __future__ import annotations

import asyncio

ORDERS = {
    "1234": {"id": "1234", "status": "delivered", "total": 30.0, "payment_id": "PAY-1"},
    "5678": {"id": "5678", "status": "delivered", "total": 12.5, "payment_id": "PAY-2"},
}
REFUNDS: list[tuple[str, float]] = []


async def get_order(order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: the order number.
    """
    await asyncio.sleep(0.01)  # a database or an HTTP API, awaited
    return dict(ORDERS[order_id])


async def refund(payment_id: str, amount: float) -> dict:
    """Refund a payment.

    Args:
        payment_id: the payment to refund.
        amount: how much.
    """
    await asyncio.sleep(0.01)
    REFUNDS.append((payment_id, amount))
    return {"refunded": amount}
