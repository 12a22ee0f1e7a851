"""Running the demo: a Forge over the support desk, fed the ticket stream.

``run_demo`` yields one ``TicketOutcome`` per ticket; the CLI renders them.
Offline by default (the stand-in model on loopback); with ``OPENAI_API_KEY``
set, a real model through ``OpenAIAgent`` (``OPENAI_BASE_URL`` and
``SKILLFORGE_MODEL`` honoured).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from .._agent import OpenAIAgent
from .._exceptions import ConfigError
from .._forge import Forge, Result
from ..testing import ChatServer
from . import desk
from .model import StandInModel
from .tickets import tickets

__all__ = ["DemoSetup", "TicketOutcome", "check_real_model", "run_demo"]


@dataclass(frozen=True)
class DemoSetup:
    """Where the demo runs and which model it talks to."""

    workdir: Path
    skills_dir: Path
    model_label: str
    base_url: str | None


@dataclass(frozen=True)
class TicketOutcome:
    number: int
    ticket: str
    result: Result


def check_real_model() -> None:
    """Raise ``ConfigError`` (saying what to set) when a real model cannot be asked: no API key."""
    if not os.environ.get("OPENAI_API_KEY"):
        raise ConfigError(
            "a real model needs OPENAI_API_KEY (and OPENAI_BASE_URL for an endpoint other than OpenAI's): "
            "set it, or run the offline stand-in model with --stand-in"
        )


def run_demo(workdir: Path, *, n: int = 60, real_model: bool | None = None) -> Iterator[DemoSetup | TicketOutcome]:
    """Solve the ticket stream in ``workdir`` (a fresh desk database and skills directory).

    Yields a ``DemoSetup`` first, then a ``TicketOutcome`` per ticket. A real model without
    ``OPENAI_API_KEY`` raises ``ConfigError`` before anything is made.
    """
    if real_model is None:
        real_model = bool(os.environ.get("OPENAI_API_KEY"))
    if real_model:
        check_real_model()
    workdir.mkdir(parents=True, exist_ok=True)
    skills_dir = workdir / "skills"
    desk.open_desk(workdir / "desk.sqlite3")
    with ExitStack() as stack:
        if real_model:
            agent = OpenAIAgent(model=os.environ.get("SKILLFORGE_MODEL") or "gpt-4o-mini")
            label = f"{agent.model} (OpenAI-compatible API{', ' + os.environ['OPENAI_BASE_URL'] if os.environ.get('OPENAI_BASE_URL') else ''})"
            base_url = os.environ.get("OPENAI_BASE_URL")
        else:
            server = stack.enter_context(ChatServer(StandInModel()))
            agent = OpenAIAgent(model="stand-in", client=server.client())
            label = StandInModel.label
            base_url = server.base_url
        forge = Forge(skills_dir=skills_dir, state_dir=workdir / "state", agent=agent, tools=desk.TOOLS)
        stack.callback(forge.runlog.close)  # written when the demo ends: the queued solves die with the Forge otherwise
        yield DemoSetup(workdir=workdir, skills_dir=skills_dir, model_label=label, base_url=base_url)
        products = {o: [it["name"] for it in desk.get_order(o)["items"]] for o in desk.order_ids()}
        for i, ticket in enumerate(tickets(n, products=products), 1):
            yield TicketOutcome(number=i, ticket=ticket, result=forge.solve(ticket))
