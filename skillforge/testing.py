"""A local OpenAI-compatible chat-completions server on loopback, for tests and the offline demo.

It speaks real HTTP, so the official ``openai`` client is exercised end to end.
A *responder* decides each reply from the request: ``Script`` plays canned
replies in order; the demo plugs in a rule-based stand-in model. A request with
``"stream": true`` is answered as server-sent events in OpenAI's chunk format.

Example:
    >>> with ChatServer(Script([answer("hi")])) as server:
    ...     client = server.client()
    ...     client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}]).choices[0].message.content
    'hi'
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["ChatServer", "ChromaServer", "Script", "answer", "tool_call", "tool_calls"]

Responder = Callable[[dict[str, Any]], dict[str, Any]]

_ids = itertools.count(1)


def answer(text: str) -> dict[str, Any]:
    """An assistant message with final text and no tool calls."""
    return {"role": "assistant", "content": text}


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """An assistant message calling several tools at once: ``tool_calls(("f", {"a": 1}), ...)``."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{next(_ids)}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for name, args in calls
        ],
    }


def tool_call(name: str, **args: Any) -> dict[str, Any]:
    """An assistant message calling one tool."""
    return tool_calls((name, args))


class Script:
    """Plays assistant messages in order; a request past the end is answered with HTTP 500."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = list(messages)
        self.pos = 0
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self.pos >= len(self.messages):
                raise RuntimeError(f"script exhausted after {self.pos} replies")
            msg = self.messages[self.pos]
            self.pos += 1
            return msg

    @property
    def remaining(self) -> int:
        return len(self.messages) - self.pos


def _count_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


class ChatServer:
    """A threaded HTTP server on 127.0.0.1 serving ``POST /v1/chat/completions``.

    Args:
        responder: decides each reply (an assistant message) from the request body.
        model_label: the model ``GET /v1/models`` lists.
        models: the models it knows; a request for another is answered 404 ``model_not_found``.
        stream_delay: seconds to wait between the chunks of a streamed reply.

    Attributes:
        requests: every request body received, in order.
        headers: the headers of each of them.
        base_url: ``http://127.0.0.1:<port>/v1``.
    """

    def __init__(
        self,
        responder: Responder,
        *,
        model_label: str = "stand-in",
        models: tuple[str, ...] | None = None,
        stream_delay: float = 0.0,
    ) -> None:
        self.responder = responder
        self.model_label = model_label
        self.models = models  # if given, another model is answered 404 (model_not_found), as OpenAI does
        self.stream_delay = stream_delay  # seconds between the chunks of a streamed reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # the headers of each request in ``requests``, names lowercased
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the server is not running: use it as a context manager or call start()")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def client(self, **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` client pointed at this server (no retries)."""
        import openai

        kwargs.setdefault("max_retries", 0)
        kwargs.setdefault("timeout", 30.0)
        return openai.OpenAI(base_url=self.base_url, api_key="not-needed", **kwargs)

    def start(self) -> ChatServer:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting: its loss
                    self.close_connection = True

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": outer.model_label, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

            def do_POST(self) -> None:  # noqa: N802
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError as e:
                    self._send(400, {"error": {"message": f"bad JSON: {e}", "type": "invalid_request_error"}})
                    return
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                outer.requests.append(request)
                if outer.models is not None and request.get("model") not in outer.models:
                    self._send(404, {"error": {
                        "message": f"The model {request.get('model')!r} does not exist or you do not have access to it.",
                        "type": "invalid_request_error", "param": None, "code": "model_not_found",
                    }})
                    return
                try:
                    message = dict(outer.responder(request))
                except Exception as e:
                    self._send(500, {"error": {"message": f"responder failed: {e}", "type": "server_error"}})
                    return
                message.setdefault("role", "assistant")
                message.setdefault("content", None)
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                prompt, completion = _count_tokens(request.get("messages", [])), _count_tokens(message)
                usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
                head = {
                    "id": f"chatcmpl-{len(outer.requests)}",
                    "created": 0,
                    "model": request.get("model", outer.model_label),
                }
                if request.get("stream"):
                    try:
                        self._stream(head, message, finish, usage, bool((request.get("stream_options") or {}).get("include_usage")))
                    except (BrokenPipeError, ConnectionResetError):  # the client went away mid-stream
                        self.close_connection = True
                    return
                self._send(
                    200,
                    {
                        **head,
                        "object": "chat.completion",
                        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                        "usage": usage,
                    },
                )

            def _stream(self, head: dict[str, Any], message: dict[str, Any], finish: str, usage: dict[str, Any], with_usage: bool) -> None:
                """The reply as server-sent events: the role, the content or each call's name and its
                arguments in two pieces, the finish reason, usage if asked, then ``[DONE]``."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

                def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> None:
                    body = {**head, "object": "chat.completion.chunk",
                            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}], **extra}
                    self.wfile.write(f"data: {json.dumps(body)}\n\n".encode())
                    self.wfile.flush()
                    if outer.stream_delay:
                        time.sleep(outer.stream_delay)

                chunk({"role": "assistant", "content": "" if message.get("content") is not None else None})
                content = message.get("content")
                if content:
                    half = len(content) // 2
                    chunk({"content": content[:half]})
                    chunk({"content": content[half:]})
                for i, call in enumerate(message.get("tool_calls") or []):
                    fn = call["function"]
                    chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                           "function": {"name": fn["name"], "arguments": ""}}]})
                    half = len(fn["arguments"]) // 2
                    for piece in (fn["arguments"][:half], fn["arguments"][half:]):
                        chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
                chunk({}, finish)
                if with_usage:
                    body = {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}
                    self.wfile.write(f"data: {json.dumps(body)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="skillforge-chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class ChromaServer:
    """A real ``chroma run`` server on a free loopback port, for tests and benchmarks.

    Its log goes to ``<path>/server.log``; it is stopped with SIGTERM on exit.

    Example:
        >>> with ChromaServer(Path("/tmp/chroma")) as server:  # doctest: +SKIP
        ...     forge = Forge(chroma_url=server.url)
    """

    def __init__(self, path: Path, *, start_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.start_timeout = start_timeout
        self.url = ""
        self._proc: Any = None
        self._log: Any = None

    def start(self) -> ChromaServer:
        import shutil
        import socket
        import subprocess
        import sys
        import time
        import urllib.request

        chroma = Path(sys.executable).parent / "chroma"
        if not chroma.exists():
            found = shutil.which("chroma")
            if found is None:
                raise RuntimeError("the chroma CLI (from the chromadb package) is not installed")
            chroma = Path(found)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.path.mkdir(parents=True, exist_ok=True)
        self._log = open(self.path / "server.log", "w")  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen(
            [str(chroma), "run", "--path", str(self.path / "db"), "--host", "127.0.0.1", "--port", str(port)],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"chroma run did not start; see {self.path / 'server.log'}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        import subprocess

        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
