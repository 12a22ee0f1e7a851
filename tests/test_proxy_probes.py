"""Probes through the proxy: the upstream asked again, with the client's key and one tool result of the
learned conversation changed, after the conversation is learned (opt-in: ``Proxy(probes=N)``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from skillforge.cli import cli
from skillforge.demo.model import StandInModel
from skillforge.proxy import Proxy
from skillforge.testing import ChatServer
from skillforge._exceptions import ConfigError

from .proxying import alone, client_forge, proxy_for, skill_files, snapshot


def test_probes_ask_the_upstream_with_the_clients_key_and_are_counted(desk_db: Path, tmp_path: Path) -> None:
    with ChatServer(StandInModel(), models=("stand-in",)) as upstream, proxy_for(upstream, tmp_path, probes=12) as proxy:
        forge = client_forge(tmp_path, proxy.client(api_key="sk-client-1"))
        world = snapshot(desk_db)
        first = forge.solve("Refund order #1002")
        assert first.output == "Refunded $12.50 to PAY-577814 for order 1002."
        assert proxy.proxy.wait_idle(30)  # learned, then probed, in the proxy's learning threads
        stats = proxy.proxy.stats
        assert stats["learned"] == 1 and stats["probe_runs"] >= 2  # a control run and a change at least
        assert len(upstream.requests) == 3 + stats["probe_requests"]  # every probe request went upstream, and is counted
        assert stats["probe_requests"] >= 2 * stats["probe_runs"]  # each probe is a whole conversation: calls and an answer
        assert {h.get("authorization") for h in upstream.headers} == {"Bearer sk-client-1"}
        refunds = [r for r in snapshot(desk_db)["refunds"] if r not in world["refunds"]]
        assert len(refunds) == 1  # the client's one refund: a probe runs no tool of the client's
        [skill] = skill_files(tmp_path)
        assert "Probed and not guarded" in skill.read_text()

        expected, after = alone(desk_db, upstream, "Refund order #1015", tmp_path)
        before = len(upstream.requests)
        repeat = forge.solve("Refund order #1015")
        assert len(upstream.requests) == before  # served by the probed skill
        assert repeat.output == expected.output and snapshot(desk_db) == after


def test_probes_are_off_unless_asked_for(desk_db: Path, tmp_path: Path) -> None:
    with ChatServer(StandInModel(), models=("stand-in",)) as upstream, proxy_for(upstream, tmp_path) as proxy:
        client_forge(tmp_path, proxy.client()).solve("Refund order #1002")
        assert proxy.proxy.wait_idle(30)
        assert proxy.proxy.stats["probe_runs"] == proxy.proxy.stats["probe_requests"] == 0
        assert len(upstream.requests) == 3
        [skill] = skill_files(tmp_path)
        assert "Probed and not guarded" not in skill.read_text()


def test_a_bad_probe_budget_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="probes=-1"):
        Proxy("http://127.0.0.1:9/v1", skills_dir=tmp_path, probes=-1)
    result = CliRunner().invoke(cli, ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--probes", "-2"])
    assert result.exit_code == 2 and "--probes" in result.output
