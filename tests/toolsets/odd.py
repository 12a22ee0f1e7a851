"""Tools whose values are not JSON, for the refusal tests (registered by the tests themselves)."""

from __future__ import annotations

import datetime as dt


def get_when(event_id: str) -> dict:
    """When an event happens."""
    return {"id": event_id, "when": dt.datetime(2026, 1, 2, 3, 4, 5)}


def tag(event_id: str, labels: list) -> dict:
    """Tag an event."""
    return {"id": event_id, "labels": list(labels)}
