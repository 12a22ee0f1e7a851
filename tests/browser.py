"""A real headless browser for tests: Debian's ``chromium``, driven over the DevTools protocol.

The protocol runs on a pipe (``--remote-debugging-pipe``: JSON messages ending in NUL on file
descriptors 3 and 4), so no websocket client or browser-automation package is needed. A page is
opened, its load awaited, and what a person would see is read back by script in the page
(sizes of elements, text of table rows); every script error, console error, log error and
network request the page made is collected on the way.

``find_chromium()`` says where the browser is, or why a test cannot run here: without one a
test is skipped with that reason on a developer's machine, and fails in CI (``CI`` set), where
``.ci/run`` installs it.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["Browser", "Page", "find_chromium", "in_ci"]

FLAGS = (  # headless as root, on a machine with no network: nothing reaches out on start
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def find_chromium() -> tuple[str | None, str]:
    """The browser's path, or None and why (what to install)."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path, ""
    return None, "no chromium on PATH: install Debian's package (apt-get install chromium) to run the browser tests"


def _above_4(fd: int) -> int:
    """``fd`` moved to a number above 4 (the shell puts the pipes on 3 and 4 from there)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
    os.close(fd)
    return moved


class Page:
    """What one page load showed: the value the probe script returned, and what went wrong on the way."""

    def __init__(self, url: str, seen: Any, events: list[dict[str, Any]], screenshot: bytes) -> None:
        self.url = url
        self.seen = seen
        self.screenshot = screenshot
        self.exceptions = [e["params"]["exceptionDetails"] for e in events if e["method"] == "Runtime.exceptionThrown"]
        self.console_errors = [
            e["params"] for e in events
            if e["method"] == "Runtime.consoleAPICalled" and e["params"].get("type") in ("error", "assert")
        ]
        self.log_errors = [
            e["params"]["entry"] for e in events if e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"
        ]
        self.requests = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
        self.failed_loads = [e["params"] for e in events if e["method"] == "Network.loadingFailed"]

    @property
    def errors(self) -> list[Any]:
        """Every script exception, console error, browser log error and failed load: [] for a sound page."""
        return self.exceptions + self.console_errors + self.log_errors + self.failed_loads


class Browser:
    """One headless chromium; ``open(url, probe)`` loads a page in a window of ``width`` x ``height``."""

    def __init__(self, executable: str, *, width: int = 1280, height: int = 900, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.width, self.height = width, height
        self._profile = tempfile.TemporaryDirectory(prefix="skillforge-chromium-")
        self._stderr = open(Path(self._profile.name) / "stderr.log", "wb")  # noqa: SIM115 - closed in close()
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        to_browser_r, from_browser_w = _above_4(to_browser_r), _above_4(from_browser_w)  # 3 and 4 are the browser's
        # the browser reads commands on fd 3 and writes replies on fd 4: bash puts the pipes there (dash takes one digit)
        redirect = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w} {to_browser_r}<&- {from_browser_w}>&-'
        self._proc = subprocess.Popen(
            ["/bin/bash", "-c", redirect, executable, *FLAGS, "--remote-debugging-pipe",
             f"--user-data-dir={self._profile.name}/profile", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr,
            pass_fds=(to_browser_r, from_browser_w),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._poll = select.poll()
        self._poll.register(self._from_browser, select.POLLIN)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._send("Browser.close")
            except (OSError, RuntimeError, TimeoutError):
                pass
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._stderr.close()
        self._profile.cleanup()

    def stderr(self) -> str:
        """The browser's own log so far (for a failure message)."""
        self._stderr.flush()
        return (Path(self._profile.name) / "stderr.log").read_text(errors="replace")[-4000:]

    def open(self, url: str, probe: str) -> Page:
        """Load ``url`` in a new tab, wait for its load event, run ``probe`` (a JavaScript expression
        whose value is returned as JSON) and take a screenshot of the whole page."""
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            for domain in ("Page", "Runtime", "Log", "Network"):
                self._send(f"{domain}.enable", session=session)
            self._send("Emulation.setDeviceMetricsOverride",
                       {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False}, session=session)
            self._events = []
            self._send("Page.navigate", {"url": url}, session=session)
            self._wait_for("Page.loadEventFired", session)
            value = self._send("Runtime.evaluate", {"expression": probe, "returnByValue": True}, session=session)
            if "exceptionDetails" in value:
                raise RuntimeError(f"the probe script failed: {value['exceptionDetails']}")
            shot = self._send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=session)
            events = [e for e in self._events if e.get("sessionId") == session]
            return Page(url, value["result"].get("value"), events, base64.b64decode(shot["data"]))
        finally:
            self._send("Target.closeTarget", {"targetId": target})

    # --- the protocol -----------------------------------------------------------------------------

    def _send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        try:
            os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise RuntimeError(f"chromium is gone (exit {self._proc.poll()}); its log:\n{self.stderr()}") from None
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def _wait_for(self, method: str, session: str) -> None:
        seen = lambda: any(e["method"] == method and e.get("sessionId") == session for e in self._events)  # noqa: E731
        while not seen():
            reply = self._receive()
            if "method" in reply:
                self._events.append(reply)

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._poll.poll(left * 1000):  # poll: a suite may hold over 1,024 descriptors
                raise TimeoutError(f"chromium said nothing for {self.timeout:.0f} s; its log:\n{self.stderr()}")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium closed the protocol pipe (exit {self._proc.poll()}); its log:\n{self.stderr()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)
