"""Running the proxy: ``serve`` (the command line's), and ``ProxyServer`` on a free loopback port
in a thread, for tests and benchmarks.

Example:
    >>> with ProxyServer(Proxy("http://127.0.0.1:9/v1", skills_dir=tmp)) as server:  # doctest: +SKIP
    ...     client = server.client()      # an openai.OpenAI pointed at the proxy
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from .app import Proxy

__all__ = ["ProxyServer", "serve"]


def serve(proxy: Proxy, *, host: str = "127.0.0.1", port: int = 8787, log_level: str = "info") -> None:
    """Serve ``proxy`` with uvicorn until interrupted."""
    uvicorn.run(proxy.app, host=host, port=port, log_level=log_level, lifespan="on")


class ProxyServer:
    """``proxy`` served by uvicorn in a thread, on 127.0.0.1 and a free port.

    Attributes:
        proxy: the ``Proxy`` served.
        base_url: ``http://127.0.0.1:<port>/v1``, for ``openai.OpenAI(base_url=...)``.
    """

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._clients: list[Any] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def client(self, api_key: str = "sk-test", **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` client pointed at the proxy (no retries), closed when the server stops."""
        import openai

        kwargs.setdefault("max_retries", 0)
        kwargs.setdefault("timeout", 30.0)
        client = openai.OpenAI(base_url=self.base_url, api_key=api_key, **kwargs)
        self._clients.append(client)
        return client

    def start(self, timeout: float = 10.0) -> ProxyServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(self.proxy.app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="skillforge-proxy", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the proxy did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        for client in self._clients:  # their kept-alive connections would outlive the server
            client.close()
        self._clients.clear()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
