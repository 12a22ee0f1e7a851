"""Method tools: the instance (a store with its own state) is a runtime dependency."""

from __future__ import annotations

import skillforge

forge_for_methods = skillforge.Forge(skills_dir="unused-skills", state_dir="unused-state")


class Inventory:
    """A tiny in-memory stock list."""

    def __init__(self) -> None:
        self.stock = {"SKU-1": 4, "SKU-2": 0, "SKU-3": 9}
        self.reserved: list[tuple[str, int]] = []

    @forge_for_methods.tool(read=True)
    def check_stock(self, sku: str) -> dict:
        """How many of an item are in stock.

        Args:
            sku: the item's stock-keeping unit, like "SKU-1".
        """
        return {"sku": sku, "available": self.stock.get(sku, 0)}

    @forge_for_methods.tool
    def reserve(self, sku: str, qty: int) -> dict:
        """Reserve items for an order.

        Args:
            sku: the item.
            qty: how many.
        """
        self.stock[sku] -= qty
        self.reserved.append((sku, qty))
        return {"sku": sku, "reserved": qty, "left": self.stock[sku]}
