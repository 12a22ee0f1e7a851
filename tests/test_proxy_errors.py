"""skillforge proxy when things go wrong: malformed requests, unknown models, an upstream that is
down, slow or failing, a client that goes away mid-stream. Each gets a clear error in OpenAI's
shape, the proxy keeps serving, and nothing half-written is left in the skills directory."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from skillforge._library import read_skill_file
from skillforge.demo.model import StandInModel
from skillforge.testing import ChatServer, Script, answer

from .proxying import client_forge, desk_tools, proxy_for, skill_files

TASK = [{"role": "user", "content": "Where is my order #1030?"}]


def _whole(root: Path) -> None:
    """Every skill file reads back, and no temp file of a write is left."""
    for path in skill_files(root):
        read_skill_file(path)
    assert not list((root / "proxy-skills").rglob("*.tmp"))


def _still_serving(proxy: Any, upstream: ChatServer) -> None:
    before = len(upstream.requests)
    reply = proxy.client().chat.completions.create(model="stand-in", messages=TASK, tools=desk_tools())
    assert reply.choices[0].message.tool_calls[0].function.name == "get_order"
    assert len(upstream.requests) == before + 1


def test_malformed_requests_get_400_in_openai_shape_and_the_proxy_keeps_serving(tmp_path: Path) -> None:
    with ChatServer(StandInModel()) as upstream, proxy_for(upstream, tmp_path) as proxy:
        url = proxy.base_url + "/chat/completions"
        for body in (b"{not json", b"[1, 2]", b"", "\"caf\xe9\"".encode("latin-1")):
            r = httpx.post(url, content=body, headers={"content-type": "application/json"})
            assert r.status_code == 400
            error = r.json()["error"]
            assert error["type"] == "invalid_request_error" and error["code"] == "invalid_json"
            assert "JSON" in error["message"]
        assert upstream.requests == []  # never bothered the upstream
        # a JSON request the proxy does not understand goes to the upstream, which judges it
        r = httpx.post(url, json={"model": "stand-in", "messages": "hello"})
        assert r.status_code == 500 and "responder failed" in r.json()["error"]["message"]  # its verdict, passed on
        assert len(upstream.requests) == 1
        _still_serving(proxy, upstream)


def test_an_unknown_model_gets_the_upstreams_404(tmp_path: Path) -> None:
    with ChatServer(StandInModel(), models=("stand-in",)) as upstream, proxy_for(upstream, tmp_path) as proxy:
        with pytest.raises(openai.NotFoundError) as caught:
            proxy.client().chat.completions.create(model="no-such-model", messages=TASK, tools=desk_tools())
        assert caught.value.status_code == 404 and caught.value.code == "model_not_found"
        _still_serving(proxy, upstream)


def test_upstream_errors_pass_through_with_their_status(tmp_path: Path) -> None:
    with ChatServer(Script([])) as upstream, proxy_for(upstream, tmp_path) as proxy:
        with pytest.raises(openai.InternalServerError) as caught:
            proxy.client().chat.completions.create(model="stand-in", messages=TASK, tools=desk_tools())
        assert caught.value.status_code == 500 and "script exhausted" in str(caught.value)
        assert proxy.proxy.stats["upstream_errors"] == 1


def test_an_upstream_that_is_down_is_a_502_and_one_that_is_slow_a_504(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with proxy_for(closed, tmp_path) as proxy:
        for stream in (False, True):
            with pytest.raises(openai.APIStatusError) as caught:
                proxy.client().chat.completions.create(model="stand-in", messages=TASK, tools=desk_tools(), stream=stream)
            assert caught.value.status_code == 502
            assert "cannot be reached" in str(caught.value) and caught.value.code == "upstream_unreachable"

    def slow(request: dict[str, Any]) -> dict[str, Any]:
        if "slow" in request["messages"][-1]["content"]:
            time.sleep(1.5)
        return answer("fine")

    with ChatServer(slow) as upstream, proxy_for(upstream, tmp_path, timeout=0.3) as proxy:
        started = time.monotonic()
        with pytest.raises(openai.APIStatusError) as caught:
            proxy.client().chat.completions.create(model="stand-in", messages=[{"role": "user", "content": "slow"}])
        assert caught.value.status_code == 504 and caught.value.code == "upstream_timeout"
        assert "did not answer within 0.3 s" in str(caught.value)
        assert time.monotonic() - started < 1.4
        reply = proxy.client().chat.completions.create(model="stand-in", messages=[{"role": "user", "content": "quick"}])
        assert reply.choices[0].message.content == "fine"


def test_a_client_that_goes_away_mid_stream_costs_nothing(desk_db: Path, tmp_path: Path) -> None:
    with ChatServer(StandInModel(), stream_delay=0.05) as upstream, proxy_for(upstream, tmp_path) as proxy:
        forge = client_forge(tmp_path, proxy.client())
        # the conversation's last request (the final answer, streamed slowly); the client reads one event and leaves
        result = forge.solve("Where is my order #1030?")
        assert proxy.proxy.wait_idle(10)
        for path in skill_files(tmp_path):
            path.unlink()  # start from no skill: the cut stream below must teach nothing
        forge2 = client_forge(tmp_path, proxy.client(), name="again")
        messages = [{"role": "system", "content": forge2.agent.system}, {"role": "user", "content": "Where is my order #1031?"},
                    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                     "function": {"name": "get_order", "arguments": '{"order_id": "1031"}'}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": '{"id": "1031", "status": "shipped"}'}]
        learned = proxy.proxy.stats["learned"]
        body = {"model": "stand-in", "messages": messages, "tools": desk_tools(), "stream": True}
        with httpx.Client(timeout=10) as http, http.stream("POST", proxy.base_url + "/chat/completions", json=body) as r:
            assert r.status_code == 200
            first = next(r.iter_raw())
            assert first.startswith(b"data: ")
        # the connection is closed with most of the answer unsent
        time.sleep(0.5)
        assert proxy.proxy.wait_idle(10)
        assert proxy.proxy.stats["learned"] == learned
        assert skill_files(tmp_path) == []
        _still_serving(proxy, upstream)
        assert result.output == "Order 1030 is processing."
        _whole(tmp_path)


def test_other_paths_are_forwarded_unchanged(tmp_path: Path) -> None:
    with ChatServer(StandInModel(), model_label="stand-in") as upstream, proxy_for(upstream, tmp_path) as proxy:
        models = proxy.client().models.list()
        assert [m.id for m in models.data] == ["stand-in"]
        r = httpx.get(proxy.base_url + "/no/such/path")
        assert r.status_code == 404 and r.json()["error"]["type"] == "invalid_request_error"
        stats = httpx.get(proxy.base_url.removesuffix("/v1") + "/skillforge/stats").json()
        assert stats["requests"] == 0 and stats["learning"] == 0


def test_the_command_line_serves_the_proxy(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with ChatServer(StandInModel()) as upstream:
        upstream_url = upstream.base_url
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillforge.cli", "proxy", "--upstream", upstream.base_url, "--port", str(port),
             "--skills-dir", str(tmp_path / "skills"), "--state-dir", str(tmp_path / "state")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
        )
        try:
            client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-x", max_retries=0)
            deadline = time.monotonic() + 20
            while True:
                try:
                    reply = client.chat.completions.create(model="stand-in", messages=TASK, tools=desk_tools())
                    break
                except openai.APIConnectionError:
                    assert proc.poll() is None and time.monotonic() < deadline, "the proxy did not start"
                    time.sleep(0.1)
            assert reply.choices[0].message.tool_calls[0].function.name == "get_order"
        finally:
            client.close()
            proc.terminate()
            out, _ = proc.communicate(timeout=10)
    assert f"skillforge proxy on http://127.0.0.1:{port}/v1 -> {upstream_url}" in out


def test_the_command_line_says_what_is_wrong_with_its_options() -> None:
    for args, said in ((["--upstream", "ftp://x"], "must be an http(s) URL"), (["--upstream", "http://x", "--reads", "("], "not a regular expression")):
        out = subprocess.run([sys.executable, "-m", "skillforge.cli", "proxy", *args], capture_output=True, text=True, timeout=60)
        assert out.returncode == 1
        assert out.stderr.startswith("error: ") and said in out.stderr and "Traceback" not in out.stderr
