"""Tools with a pre-check (skillforge.Check), for the per-tool guard test."""

from __future__ import annotations

VERSION = [1]
DOCS: dict[str, str] = {}


def reset() -> None:
    VERSION[0] = 1
    DOCS.clear()


def capture_version(doc_id: str) -> int:
    return VERSION[0]


def same_version(current: int, learned: int) -> bool:
    return current == learned


def read_doc(doc_id: str) -> dict:
    """Read a document."""
    return {"id": doc_id, "text": DOCS.get(doc_id, "")}


def write_doc(doc_id: str, text: str) -> dict:
    """Write a document."""
    DOCS[doc_id] = text
    return {"id": doc_id}
