"""OpenAIAgent through the real openai client against a scripted chat-completions server on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from skillforge import AgentError, Forge, OpenAIAgent
from skillforge.demo import desk
from skillforge.testing import ChatServer, Script, answer, tool_call, tool_calls


def _forge(tmp_path: Path, agent: OpenAIAgent, **kw) -> Forge:
    return Forge(skills_dir=tmp_path / "skills", state_dir=tmp_path / "state", agent=agent, tools=desk.TOOLS, **kw)


def test_tool_calling_loop_counts_requests_and_tokens(tmp_path: Path, desk_db: Path) -> None:
    script = Script([tool_call("get_order", order_id="1001"), answer("It is on its way.")])
    with ChatServer(script) as server:
        agent = OpenAIAgent(model="scripted", client=server.client())
        result = _forge(tmp_path, agent).solve("Is order 1001 on its way?")
    assert result.output == "It is on its way."
    assert result.llm_calls == 2
    assert result.prompt_tokens > 0 and result.completion_tokens > 0
    assert [(c.tool, c.args) for c in result.calls] == [("get_order", {"order_id": "1001"})]
    first, second = server.requests
    assert first["model"] == "scripted"
    assert {t["function"]["name"] for t in first["tools"]} == {
        "get_customer", "get_order", "get_stock", "refund_payment", "send_replacement", "update_email",
        "update_shipping_address",
    }
    schema = next(t for t in first["tools"] if t["function"]["name"] == "refund_payment")["function"]
    assert schema["parameters"]["required"] == ["order_id", "payment_id", "amount"]
    assert schema["parameters"]["properties"]["amount"]["type"] == "number"
    # the tool result went back to the model as a tool message
    tool_msg = second["messages"][-1]
    assert tool_msg["role"] == "tool" and json.loads(tool_msg["content"])["id"] == "1001"


def test_parallel_tool_calls_in_one_message_run_in_order(tmp_path: Path, desk_db: Path) -> None:
    script = Script([
        tool_calls(("get_order", {"order_id": "1001"}), ("get_customer", {"customer_id": "C-101"})),
        answer("ok"),
    ])
    with ChatServer(script) as server:
        result = _forge(tmp_path, OpenAIAgent(client=server.client())).solve("Look at order 1001 and C-101")
    assert [c.tool for c in result.calls] == ["get_order", "get_customer"]
    assert result.llm_calls == 2


def test_unknown_tools_and_bad_arguments_are_reported_back_to_the_model(tmp_path: Path, desk_db: Path) -> None:
    bad_json = tool_call("get_order", order_id="1")
    bad_json["tool_calls"][0]["function"]["arguments"] = "{not json"
    script = Script([tool_call("launch_rockets", count=3), bad_json, answer("gave up")])
    with ChatServer(script) as server:
        result = _forge(tmp_path, OpenAIAgent(client=server.client())).solve("Do something odd")
    assert result.output == "gave up" and result.calls == []
    replies = [m for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert "no tool named 'launch_rockets'" in replies[0]["content"]
    assert "not valid JSON" in replies[1]["content"]


def test_turn_budget_ends_the_run_with_an_agent_error_in_the_result(tmp_path: Path, desk_db: Path) -> None:
    script = Script([tool_call("get_order", order_id="1001")] * 3)
    with ChatServer(script) as server:
        result = _forge(tmp_path, OpenAIAgent(client=server.client(), max_turns=3)).solve("Loop forever on 1001")
    assert not result.ok and "AgentError" in result.error and "max_turns" in result.error
    assert result.llm_calls == 3 and result.learned is None


def test_a_refused_connection_is_an_agent_error_not_a_hang(tmp_path: Path, desk_db: Path) -> None:
    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0, timeout=5)
    result = _forge(tmp_path, OpenAIAgent(client=client)).solve("Refund order #1001")
    assert not result.ok and "model request to 'gpt-4o-mini' failed" in result.error


def test_server_error_is_reported(tmp_path: Path, desk_db: Path) -> None:
    with ChatServer(Script([])) as server:  # exhausted at once: HTTP 500
        result = _forge(tmp_path, OpenAIAgent(client=server.client())).solve("Refund order #1001")
    assert not result.ok and "InternalServerError" in result.error


def test_agent_outside_solve_says_how_to_use_it() -> None:
    with pytest.raises(AgentError, match="inside forge.solve"):
        OpenAIAgent(client=object())("task")


def test_client_is_built_lazily_from_the_environment(tmp_path: Path, desk_db: Path, monkeypatch) -> None:
    with ChatServer(Script([answer("hello from env")])) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        agent = OpenAIAgent(model="env-model")
        assert agent._client is None
        result = _forge(tmp_path, agent).solve("Say hello")
    assert result.output == "hello from env" and server.requests[0]["model"] == "env-model"


def test_resuming_puts_the_transcript_into_the_messages(tmp_path: Path, desk_db: Path) -> None:
    from skillforge import Call

    transcript = [Call(tool="get_order", args={"order_id": "1001"}, result={"id": "1001", "status": "refunded"})]
    script = Script([answer("Order 1001 was already refunded.")])
    with ChatServer(script) as server:
        forge = _forge(tmp_path, OpenAIAgent(client=server.client()))
        from skillforge._tools import Run, activate, deactivate
        from skillforge._usage import Usage

        run = Run(snapshot=True, instances={}, tools=forge.registry.tools, usage=Usage())  # as solve() makes it
        token = activate(run)
        try:
            out = forge.agent("Refund order #1001", transcript=transcript)
        finally:
            deactivate(token)
    assert out == "Order 1001 was already refunded."
    msgs = server.requests[0]["messages"]
    assert msgs[2]["role"] == "assistant" and msgs[2]["tool_calls"][0]["function"]["name"] == "get_order"
    assert json.loads(msgs[2]["tool_calls"][0]["function"]["arguments"]) == {"order_id": "1001"}
    assert msgs[3]["role"] == "tool" and json.loads(msgs[3]["content"])["status"] == "refunded"
    assert "do not repeat" in msgs[4]["content"]
