"""A ledger whose orders carry two equal-looking amounts, for the ambiguity tests."""

from __future__ import annotations

ORDERS: dict[str, dict] = {}
REFUNDS: list[tuple[str, float]] = []


def reset() -> None:
    ORDERS.clear()
    REFUNDS.clear()
    ORDERS.update(
        {
            "1": {"id": "1", "total": 50.0, "balance": 50.0, "payment_id": "P-1"},
            "2": {"id": "2", "total": 80.0, "balance": 80.0, "payment_id": "P-2"},
            "3": {"id": "3", "total": 90.0, "balance": 30.0, "payment_id": "P-3"},  # partly paid: they differ
            "4": {"id": "4", "total": 70.0, "balance": 10.0, "payment_id": "P-4"},
        }
    )


def get_order(order_id: str) -> dict:
    """Look up an order."""
    return dict(ORDERS[order_id])


def refund(payment_id: str, amount: float) -> dict:
    """Refund a payment."""
    REFUNDS.append((payment_id, amount))
    return {"ok": True}
