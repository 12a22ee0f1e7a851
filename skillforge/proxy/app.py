"""The proxy's HTTP side: a Starlette app that serves chat completions from skills or forwards them.

``POST /v1/chat/completions`` (or ``/chat/completions``) is read as a conversation; one a
skill fits is answered here, anything else goes to the upstream unchanged, with the
client's own headers (its API key included). Every other path is forwarded as it is.
The upstream's replies, errors included, pass back with their status; a streamed reply
passes through as its bytes arrive. An upstream that cannot be reached is a 502, one
that does not answer in time a 504, both in OpenAI's error shape.

A final answer the upstream gives to a conversation that made tool calls ends a run: it
is learned in a worker thread after the reply has gone out (``Proxy.wait_idle`` waits
for those). ``GET /skillforge/stats`` says what the proxy has done so far.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .._exceptions import ConfigError
from .conversations import Conversation, NotOurs, final_answer, parse
from .namespaces import NAMESPACE_HEADER, Namespace, Namespaces
from .replay import Forward, Served, decide, learn
from .responses import StreamReader, completion, error_body, events
from .toolset import DEFAULT_READS

__all__ = ["SKILL_HEADER", "Proxy"]

logger = logging.getLogger(__name__)

SKILL_HEADER = "x-skillforge-skill"
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
# not passed on: they describe one hop, not the message (RFC 9110 7.6.1), or are the proxy's own
_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
    "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding",
})


class Proxy:
    """An OpenAI-compatible chat-completions proxy that learns skills from conversations.

    Args:
        upstream: the API to forward to, e.g. ``https://api.openai.com/v1``; a request for
            ``/v1/<path>`` (or ``/<path>``) goes to ``<upstream>/<path>``.
        skills_dir: the root of the namespaces' skills directories.
        state_dir: the root of their derived state.
        share: let every API key's conversations use the same skills (per namespace header).
        reads: a regex for the names of tools that only read.
        timeout: seconds to wait for the upstream (to connect, and between bytes of a reply).
        learn: learn from finished conversations (off: serve what is in ``skills_dir`` only).
        probes: probe runs per skill learned or widened, asking the upstream with the client's key
            (``skillforge.proxy.probing``; 0, the default: off), and at most ``probes_per_hour`` per
            namespace. Counted in ``stats`` (``probe_runs``, ``probe_requests``).

    Raises:
        ConfigError: ``upstream`` is not an http(s) URL, or ``reads`` is not a regular expression.

    Example:
        >>> proxy = Proxy("http://127.0.0.1:9/v1", skills_dir="proxy-skills")  # doctest: +SKIP
        >>> uvicorn.run(proxy.app, port=8787)  # doctest: +SKIP
    """

    def __init__(
        self,
        upstream: str,
        *,
        skills_dir: str | Path = "proxy-skills",
        state_dir: str | Path = ".skillforge/proxy",
        share: bool = False,
        reads: str = DEFAULT_READS,
        timeout: float = 300.0,
        learn: bool = True,
        probes: int = 0,
        probes_per_hour: int = 120,
    ) -> None:
        if not upstream.startswith(("http://", "https://")):
            raise ConfigError(f"the upstream must be an http(s) URL such as https://api.openai.com/v1, got {upstream!r}")
        for what, n in (("probes", probes), ("probes_per_hour", probes_per_hour)):
            if type(n) is not int or n < 0:
                raise ConfigError(f"{what}={n!r}: give a whole number of probe runs, 0 or more (0 turns probes off)")
        self.upstream = upstream.rstrip("/")
        self.namespaces = Namespaces(skills_dir, state_dir, share=share, reads=reads, upstream=self.upstream, probes=probes,
                                     probes_per_hour=probes_per_hour, timeout=timeout)
        self.timeout = timeout
        self.learning = learn
        self.stats: dict[str, int] = dict.fromkeys(
            ("requests", "served_calls", "served_answers", "forwarded", "upstream_errors", "learned", "not_learned",
             "probe_runs", "probe_requests"), 0
        )
        self._stats_lock = threading.Lock()
        self._idle = threading.Condition()
        self._pending = 0
        self._learner: ThreadPoolExecutor | None = None
        self._client: httpx.AsyncClient | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/chat/completions", self._chat, methods=["POST"]),
                Route("/skillforge/stats", self._stats, methods=["GET"]),
                Route("/{path:path}", self._other, methods=_METHODS),
            ],
            lifespan=self._lifespan,
        )

    # -- lifecycle ------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0))
        limits = httpx.Limits(max_connections=256, max_keepalive_connections=64)
        self._client = httpx.AsyncClient(timeout=timeout, limits=limits, trust_env=False)
        self._learner = ThreadPoolExecutor(max_workers=2, thread_name_prefix="skillforge-proxy-learn")
        try:
            yield
        finally:
            await self._client.aclose()
            self._learner.shutdown(wait=True)  # a learn under way finishes: its files land whole
            self.namespaces.close()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no conversation is being learned; False if ``timeout`` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _count(self, name: str, n: int = 1) -> None:
        with self._stats_lock:
            self.stats[name] += n

    # -- routes ---------------------------------------------------------------------
    async def _stats(self, _request: Request) -> JSONResponse:
        with self._stats_lock:
            body = dict(self.stats)
        body["learning"] = self._pending
        return JSONResponse(body)

    async def _other(self, request: Request) -> Response:
        return await self._forward(request, await request.body(), None)

    async def _chat(self, request: Request) -> Response:
        self._count("requests")
        raw = await request.body()
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError) as e:
            return _error(400, f"the request body is not JSON ({e}); send a chat-completions request as a JSON object",
                          "invalid_request_error", "invalid_json")
        if not isinstance(body, dict):
            return _error(400, "the request body must be a JSON object (a chat-completions request)",
                          "invalid_request_error", "invalid_json")
        conv = parse(body)
        if isinstance(conv, NotOurs):
            logger.debug("forwarded: %s", conv.reason)
            return await self._forward(request, raw, None)
        tenant = self.namespaces.tenant(request.headers.get("authorization"), request.headers.get(NAMESPACE_HEADER))
        ns, decision = await run_in_threadpool(self._decide, tenant, conv)
        if ns.prober is not None:
            ns.prober.use_key(request.headers.get("authorization"))  # in memory only: what probes are sent with
        if isinstance(decision, Forward):
            logger.debug("forwarded: %s", decision.reason)
            return await self._forward(request, raw, (ns, conv))
        self._count("served_answers" if decision.call is None else "served_calls")
        headers = {SKILL_HEADER: decision.skill.encode("ascii", "backslashreplace").decode()}
        if conv.stream:
            return StreamingResponse(_each(events(conv, decision)), media_type="text/event-stream", headers=headers)
        return JSONResponse(completion(conv, decision), headers=headers)

    def _decide(self, tenant: str, conv: Conversation) -> tuple[Namespace, Served | Forward]:
        ns = self.namespaces.get(tenant, conv)
        return ns, decide(ns, conv)

    # -- forwarding -----------------------------------------------------------------
    async def _forward(self, request: Request, raw: bytes, run: tuple[Namespace, Conversation] | None) -> Response:
        """Send the request upstream as it came; ``run``: the conversation to learn from if the reply ends it."""
        if run is not None:
            self._count("forwarded")
        client = self._client
        if client is None:
            return _error(503, "the proxy is starting or stopping; retry", "server_error", "proxy_unavailable")
        path = request.url.path
        path = path[3:] if path == "/v1" or path.startswith("/v1/") else path
        url = self.upstream + path + (f"?{request.url.query}" if request.url.query else "")
        headers = [(k, v) for k, v in request.headers.items() if k not in _HOP and not k.startswith("x-skillforge-")]
        headers.append(("accept-encoding", "identity"))
        try:
            reply = await client.send(client.build_request(request.method, url, content=raw, headers=headers), stream=True)
        except httpx.TimeoutException:
            return self._upstream_error(504, f"the upstream ({self.upstream}) did not answer within {self.timeout:g} s", "upstream_timeout")
        except httpx.HTTPError as e:
            return self._upstream_error(502, f"the upstream ({self.upstream}) cannot be reached: {type(e).__name__}: {e}", "upstream_unreachable")
        back = {k: v for k, v in reply.headers.items() if k not in _HOP}
        if reply.status_code >= 400:
            self._count("upstream_errors")
        if reply.headers.get("content-type", "").startswith("text/event-stream"):
            return StreamingResponse(self._relay(reply, run), status_code=reply.status_code, headers=back)
        try:
            content = b"".join([part async for part in reply.aiter_raw()])
        except httpx.TimeoutException:
            return self._upstream_error(504, f"the upstream ({self.upstream}) stopped answering for {self.timeout:g} s", "upstream_timeout")
        except httpx.HTTPError as e:
            return self._upstream_error(502, f"the upstream's reply broke off: {type(e).__name__}: {e}", "upstream_unreachable")
        finally:
            await reply.aclose()
        if run is not None and reply.status_code == 200 and "content-encoding" not in reply.headers:
            self._learn_from_body(run, content)
        return Response(content, status_code=reply.status_code, headers=back)

    async def _relay(self, reply: httpx.Response, run: tuple[Namespace, Conversation] | None) -> AsyncIterator[bytes]:
        """The upstream's stream, passed on as it comes; learned from if it ended the conversation
        (once its ``[DONE]`` arrived: a stream cut short teaches nothing)."""
        reader = StreamReader() if run is not None and reply.status_code == 200 else None
        try:
            async for part in reply.aiter_raw():
                if reader is not None:
                    reader.feed(part)
                    if reader.done and run is not None:  # the whole answer is here: learn (before the client has it,
                        streamed = reader.message()  # so that one waiting for the proxy to be idle waits for this too)
                        if streamed is not None:
                            self._maybe_learn(run, *streamed)
                        reader = None
                yield part
        except httpx.HTTPError as e:  # the status has gone out: say it in the stream, as OpenAI does
            self._count("upstream_errors")
            reason = "did not go on within the timeout" if isinstance(e, httpx.TimeoutException) else f"broke off ({type(e).__name__})"
            body = error_body(f"the upstream's stream {reason}", "server_error", "upstream_stream_broken")
            yield f"data: {json.dumps(body)}\n\n".encode()
            return
        finally:  # also when the client went away (the task is cancelled: the close is shielded from that)
            with anyio.CancelScope(shield=True):
                await reply.aclose()

    # -- learning -------------------------------------------------------------------
    def _learn_from_body(self, run: tuple[Namespace, Conversation], content: bytes) -> None:
        try:
            body = json.loads(content)
            choice = body["choices"][0]
        except (ValueError, KeyError, IndexError, TypeError):
            return
        if isinstance(choice, dict) and len(body["choices"]) == 1:
            self._maybe_learn(run, choice.get("message"), choice.get("finish_reason"))

    def _maybe_learn(self, run: tuple[Namespace, Conversation], message: Any, finish_reason: Any) -> None:
        ns, conv = run
        answer = final_answer(message, finish_reason)
        if answer is None or not self.learning or ns.forge is None or not conv.steps or self._learner is None:
            return
        with self._idle:
            self._pending += 1
        try:
            self._learner.submit(self._learn, ns, conv, answer)
        except RuntimeError:  # shutting down
            self._done_learning()

    def _learn(self, ns: Namespace, conv: Conversation, answer: str) -> None:
        try:
            learned = learn(ns, conv, answer)
            self._count("learned" if learned.skills else "not_learned")
            if ns.prober is not None and ns.forge is not None and learned.skills:
                self._probe(ns.forge)
        except Exception:  # learn() returns verdicts; anything else is a bug, logged, never fatal
            logger.exception("learning from a conversation failed")
            self._count("not_learned")
        finally:
            self._done_learning()

    def _probe(self, forge: Any) -> None:
        """Probe the skills just learned, through the upstream (off the request's path), and count it."""
        made, requests = forge.prober.made, forge.prober.requests
        try:
            forge.probe()
        finally:
            self._count("probe_runs", forge.prober.made - made)
            self._count("probe_requests", forge.prober.requests - requests)

    def _done_learning(self) -> None:
        with self._idle:
            self._pending -= 1
            self._idle.notify_all()

    def _upstream_error(self, status: int, message: str, code: str) -> JSONResponse:
        self._count("upstream_errors")
        logger.warning("%s", message)
        return _error(status, message, "upstream_error", code)


async def _each(items: list[bytes]) -> AsyncIterator[bytes]:
    for item in items:
        yield item


def _error(status: int, message: str, type_: str, code: str) -> JSONResponse:
    return JSONResponse(error_body(message, type_, code), status_code=status)
