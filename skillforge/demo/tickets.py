"""The demo's stream of support tickets: five workflows, varying values, a few rephrasings."""

from __future__ import annotations

import random

from .desk import STREETS, TOWNS

__all__ = ["tickets"]


def tickets(n: int = 60, seed: int = 11, products: dict[str, list[str]] | None = None) -> list[str]:
    """A deterministic stream of ``n`` tickets (at least 30 by default).

    Every refund names a different order, so no ticket asks to refund twice.
    ``products`` (order id → the names of its items) lets tickets name a product
    of the order ("Replace the desk lamp from order #1042"); without it those
    tickets are left out.
    """
    rng = random.Random(seed)
    orders = [str(i) for i in range(1001, 1061)]
    rng.shuffle(orders)
    refundable = iter(orders)
    customers = [f"C-{i}" for i in range(101, 121)]
    out: list[str] = []
    kinds = ["refund", "status", "address", "email", "replace"]
    for i in range(n):
        kind = kinds[i % 5] if i < 10 else rng.choice(kinds)
        if i in (13, 29):  # the same request, phrased another way: a second skill
            out.append(f"Can you refund my order {next(refundable)}? It arrived broken.")
        elif kind == "refund":
            out.append(f"Refund order #{next(refundable)}")
        elif kind == "status":
            out.append(f"Where is my order #{rng.choice(orders)}?")
        elif kind == "address":
            address = f"{rng.randint(1, 99)} {rng.choice(STREETS)}, {rng.choice(TOWNS)}"
            # the first one names a shipped order: a refusal (delivered) uses no address, so it could
            # not teach the address slot; later ones hit delivered orders and teach variants
            order = "1006" if "ship order" not in " ".join(out) else rng.choice(orders)
            out.append(f"Please ship order #{order} to {address} instead.")
        elif kind == "replace":
            order = rng.choice(orders)
            names = (products or {}).get(order)
            if names and rng.random() < 0.5:
                out.append(f"Replace the {rng.choice(names)} from order #{order}, it broke.")
            else:
                out.append(f"Send a replacement for order #{order}")
        else:
            who = rng.choice(customers)
            user = rng.choice(["sam", "lee", "max", "kim", "ray"]) + str(rng.randint(1, 99))
            out.append(f"Change the email of customer {who} to {user}@example.org")
    return out
