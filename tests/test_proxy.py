"""skillforge proxy, end to end: the real openai client and OpenAIAgent point at the proxy, which
forwards to the demo's stand-in model on loopback, learns from finished conversations, and serves
repeats by replay against the history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillforge.demo import desk
from skillforge.demo.model import StandInModel
from skillforge.proxy import SKILL_HEADER
from skillforge.testing import ChatServer

from .proxying import (
    alone, calls_of, client_forge, desk_tools, proxy_for, run_desk_tool, skill_files, snapshot, stream_agent,
)


@pytest.fixture
def upstream() -> ChatServer:
    with ChatServer(StandInModel(), models=("stand-in",)) as server:
        yield server


def test_a_repeat_with_other_values_reaches_no_upstream_and_does_what_the_agent_would(
    desk_db: Path, upstream: ChatServer, tmp_path: Path
) -> None:
    with proxy_for(upstream, tmp_path) as proxy:
        forge = client_forge(tmp_path, proxy.client())
        first = forge.solve("Refund order #1002")
        assert proxy.proxy.wait_idle(10)
        assert first.output == "Refunded $12.50 to PAY-577814 for order 1002."
        assert len(upstream.requests) == 3  # get_order, refund_payment, the answer: all from the model
        assert [p.name for p in skill_files(tmp_path)] == ["refund_order.py"]

        expected, world = alone(desk_db, upstream, "Refund order #1015", tmp_path)
        before = len(upstream.requests)
        repeat = forge.solve("Refund order #1015")
        assert len(upstream.requests) == before + 0
        assert repeat.llm_calls == 3  # the agent asked three times; the proxy answered each
        assert calls_of(repeat) == calls_of(expected) == [
            ("get_order", {"order_id": "1015"}),
            ("refund_payment", {"order_id": "1015", "payment_id": "PAY-152752", "amount": 25.0}),
        ]
        assert repeat.output == expected.output == "Refunded $25.00 to PAY-152752 for order 1015."
        assert snapshot(desk_db) == world
        assert proxy.proxy.stats["served_calls"] == 2 and proxy.proxy.stats["served_answers"] == 1


def test_a_served_reply_names_its_skill_counts_no_tokens_and_gives_unique_call_ids(
    desk_db: Path, upstream: ChatServer, tmp_path: Path
) -> None:
    with proxy_for(upstream, tmp_path) as proxy:
        client_forge(tmp_path, proxy.client()).solve("Refund order #1002")
        assert proxy.proxy.wait_idle(10)
        client = proxy.client()
        messages = [{"role": "system", "content": client_forge(tmp_path, client).agent.system},
                    {"role": "user", "content": "Refund order #1015"}]
        ids = set()
        for _ in range(3):
            raw = client.chat.completions.with_raw_response.create(model="stand-in", messages=messages, tools=desk_tools())
            assert raw.headers[SKILL_HEADER] == "refund_order"
            reply = raw.parse()
            assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens) == (0, 0, 0)
            assert reply.choices[0].finish_reason == "tool_calls"
            ids.add(reply.choices[0].message.tool_calls[0].id)
        assert len(ids) == 3  # the same step asked three times: three ids, never reused
        assert len(upstream.requests) == 3


def test_streamed_conversations_are_learned_and_served_as_streams(desk_db: Path, upstream: ChatServer, tmp_path: Path) -> None:
    with proxy_for(upstream, tmp_path) as proxy:
        client = proxy.client()
        answer, calls, _ = stream_agent(client, "Refund order #1002", run_desk_tool, tools=desk_tools())
        assert answer == "Refunded $12.50 to PAY-577814 for order 1002."
        assert proxy.proxy.wait_idle(10)
        assert proxy.proxy.stats["learned"] == 1  # from the streamed final answer
        assert all(r["stream"] for r in upstream.requests)  # passed on as streams

        expected, world = alone(desk_db, upstream, "Refund order #1015", tmp_path)
        before = len(upstream.requests)
        answer, calls, ids = stream_agent(client, "Refund order #1015", run_desk_tool, tools=desk_tools())
        assert len(upstream.requests) == before
        assert calls == calls_of(expected)
        assert answer == expected.output
        assert snapshot(desk_db) == world
        assert all(i.startswith("call_sf") for i in ids) and len(set(ids)) == len(ids)


def test_a_guard_failing_mid_conversation_hands_over_at_that_step_and_refines_the_skill(
    desk_db: Path, upstream: ChatServer, tmp_path: Path
) -> None:
    with proxy_for(upstream, tmp_path) as proxy:
        forge = client_forge(tmp_path, proxy.client())
        forge.solve("Refund order #1002")  # a processing order: the skill guards the status it saw
        assert proxy.proxy.wait_idle(10)
        skill = skill_files(tmp_path)[0]
        assert "order['status'] == 'processing'" in skill.read_text()

        expected, world = alone(desk_db, upstream, "Refund order #1006", tmp_path)  # a shipped order
        before = len(upstream.requests)
        handed = forge.solve("Refund order #1006")
        sent = upstream.requests[before:]
        # the skill served get_order; its status guard failed on the result, so that request (and the
        # rest of the conversation) went to the model, which saw the call already made and its result
        assert len(sent) == 2
        first = sent[0]["messages"]
        assert [m["role"] for m in first] == ["system", "user", "assistant", "tool"]
        assert first[2]["tool_calls"][0]["id"].startswith("call_sf")
        assert json.loads(first[3]["content"])["status"] == "shipped"
        assert calls_of(handed) == calls_of(expected)  # get_order once, refund_payment once: nothing repeated
        assert [t for t, _ in calls_of(handed)] == ["get_order", "refund_payment"]
        assert handed.output == expected.output
        assert snapshot(desk_db) == world

        assert proxy.proxy.wait_idle(10)
        assert "order['status'] in ('processing', 'shipped')" in skill.read_text()  # refined, not a new file
        assert [p.name for p in skill_files(tmp_path)] == ["refund_order.py"]
        before = len(upstream.requests)
        again = forge.solve("Refund order #1017")  # another shipped order: served whole now
        assert len(upstream.requests) == before
        assert again.output == "Refunded $26.25 to PAY-108566 for order 1017."


def test_skills_of_one_api_key_never_serve_another_unless_shared(desk_db: Path, upstream: ChatServer, tmp_path: Path) -> None:
    with proxy_for(upstream, tmp_path) as proxy:
        client_forge(tmp_path, proxy.client("sk-alice")).solve("Refund order #1002")
        assert proxy.proxy.wait_idle(10)
        assert upstream.headers[-1]["authorization"] == "Bearer sk-alice"  # the client's own key, passed on
        others = (proxy.client("sk-bob"), proxy.client("sk-alice", default_headers={"x-skillforge-namespace": "other"}))
        for client, order in zip(others, ("1015", "1033")):
            before = len(upstream.requests)
            client_forge(tmp_path, client).solve(f"Refund order #{order}")
            assert len(upstream.requests) == before + 3
        assert all("x-skillforge-namespace" not in h for h in upstream.headers)  # the proxy's own header stays here
        before = len(upstream.requests)
        client_forge(tmp_path, proxy.client("sk-alice")).solve("Refund order #1036")
        assert len(upstream.requests) == before
        stored = " ".join(str(p) + p.read_text() for p in (tmp_path / "proxy-skills").rglob("*") if p.is_file())
        assert "sk-alice" not in stored and "sk-bob" not in stored  # keys are hashed, never stored

    with proxy_for(upstream, tmp_path, share=True) as shared:
        client_forge(tmp_path, shared.client("sk-carol")).solve("Refund order #1045")
        assert shared.proxy.wait_idle(10)
        before = len(upstream.requests)
        client_forge(tmp_path, shared.client("sk-dave")).solve("Refund order #1051")
        assert len(upstream.requests) == before


def test_a_changed_prompt_tool_set_or_model_never_replays_old_skills(desk_db: Path, tmp_path: Path) -> None:
    with ChatServer(StandInModel(), models=("stand-in", "stand-in-2")) as upstream, proxy_for(upstream, tmp_path) as proxy:
        client_forge(tmp_path, proxy.client()).solve("Refund order #1002")
        assert proxy.proxy.wait_idle(10)
        forges = [
            client_forge(tmp_path, proxy.client(), system="You are a terse assistant. Use the tools."),
            client_forge(tmp_path, proxy.client(), model="stand-in-2"),
        ]
        fewer = client_forge(tmp_path, proxy.client())
        fewer.registry.tools.pop("update_email")  # the agent offers one tool less
        for forge in [*forges, fewer]:
            before = len(upstream.requests)
            result = forge.solve("Refund order #1015")
            assert result.output == "Refunded $25.00 to PAY-152752 for order 1015."
            assert len(upstream.requests) == before + 3
            desk.open_desk(desk_db).execute("UPDATE orders SET status = 'processing' WHERE id = '1015'").connection.commit()


def test_the_readme_example_runs_as_documented() -> None:
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "examples.proxy"], cwd=repo, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "Refund order #1002: Refunded $12.50 to PAY-577814 for order 1002. (3 requests reached the model)",
        "Refund order #1015: Refunded $25.00 to PAY-152752 for order 1015. (0 requests reached the model)",
        "refund_order.py",
    ]
