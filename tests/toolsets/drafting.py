"""A helpdesk whose reply tool calls a model: it reports that model's usage itself.

``draft_reply`` stands in for a tool that asks a model to word a reply: it reports one request
with ``skillforge.report_usage`` each time it runs, whether the agent or a skill calls it.
"""

from __future__ import annotations

from typing import Any

import skillforge

TICKETS = {"T-1": "printer jammed", "T-2": "screen flickers", "T-3": "mouse is dead"}
TOOLBOX: dict[str, Any] = {}  # name → the callable the agent uses (a Forge's recording wrapper)


def get_ticket(ticket_id: str) -> dict:
    """A ticket: its id and what it is about."""
    return {"id": ticket_id, "about": TICKETS[ticket_id]}


def draft_reply(ticket_id: str, about: str) -> dict:
    """A reply to a ticket, worded by a model."""
    skillforge.report_usage(prompt_tokens=40, completion_tokens=12)
    return {"text": f"Sorry about the {about}; a technician is on the way ({ticket_id})."}


def agent(task: str) -> str:
    ticket_id = task.rsplit(" ", 1)[-1]
    skillforge.report_usage(prompt_tokens=300, completion_tokens=30)  # the agent's own model request
    ticket = TOOLBOX["get_ticket"](ticket_id=ticket_id)
    return TOOLBOX["draft_reply"](ticket_id=ticket_id, about=ticket["about"])["text"]
