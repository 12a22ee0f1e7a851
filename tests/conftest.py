"""Shared fixtures. No network beyond 127.0.0.1: model traffic goes to local servers only."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import skillforge
from skillforge import Forge, OpenAIAgent
from skillforge.demo import desk
from skillforge.demo.model import StandInModel
from skillforge.testing import ChatServer

REPO = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="Rewrite tests/golden/*/skill.py from the runs.")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No real model, no user config: every test starts from a clean environment."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(var, raising=False)
    import os

    for var in list(os.environ):
        if var.startswith("SKILLFORGE_"):
            monkeypatch.delenv(var)
    # a client built from the environment can only reach a closed loopback port
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")
    monkeypatch.setattr(skillforge, "_default", None)
    yield


@pytest.fixture
def desk_db(tmp_path: Path) -> Path:
    """A fresh support-desk database, opened for the desk tools."""
    path = tmp_path / "desk.sqlite3"
    conn = desk.open_desk(path)
    yield path
    conn.close()


@pytest.fixture
def standin() -> Iterator[ChatServer]:
    """The demo's stand-in model on loopback."""
    with ChatServer(StandInModel()) as server:
        yield server


@pytest.fixture
def make_forge(tmp_path: Path, standin: ChatServer):
    """Build Forges over the desk tools with their own skills/state dirs under tmp_path."""
    counter = iter(range(1000))
    made: list[Forge] = []

    def make(*, learn: bool = True, agent: object = "standin", skills_dir: Path | None = None) -> Forge:
        n = next(counter)
        chosen = OpenAIAgent(model="stand-in", client=standin.client()) if agent == "standin" else agent
        forge = Forge(
            skills_dir=skills_dir or tmp_path / f"skills{n}",
            state_dir=tmp_path / f"state{n}",
            agent=chosen,
            tools=desk.TOOLS,
            learn=learn,
        )
        made.append(forge)
        return forge

    yield make
    for forge in made:  # their open files (run log, metadata cache), not left to the end of the session
        forge.close()


def copy_db(src: Path, dst: Path) -> Path:
    """Copy the desk database (the tools' connection is switched by open_desk)."""
    shutil.copyfile(src, dst)
    return dst


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``chroma run`` server on loopback for the session; its URL."""
    from skillforge.testing import ChromaServer

    with ChromaServer(tmp_path_factory.mktemp("chroma-server")) as server:
        yield server.url


@pytest.fixture
def accounts_world(tmp_path: Path) -> Iterator[tuple[Forge, Path]]:
    """A fresh directory of accounts on SQLite (``tests.toolsets.accounts``) and a Forge over its tools."""
    from tests.toolsets import accounts

    forge = accounts.open_accounts(tmp_path)
    yield forge, tmp_path
    forge.close()
    accounts.TOOLBOX.clear()
