"""Namespaces: whose skills serve whom, and the Forge that holds each namespace's skills.

A namespace is a *tenant* (who asks) and a *key* (what the conversation's behaviour
depends on besides the task: model, system messages, tools; see ``conversations``).
Its skills live in ``<skills_dir>/<tenant>/<model>-<key>/``, a skills directory like any
other (reviewable files, their runs in ``runs/``), beside a ``namespace.json`` that says
which model, prompt and tools they were learned under.

The tenant is a hash of the client's API key (the ``Authorization`` header; the key
itself is never stored), with the ``x-skillforge-namespace`` header, if sent, as a
subdivision of it. With ``share=True`` the key is left out: every client shares the
skills of a namespace header (or of none).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._exceptions import ConfigError, SkillforgeError
from .._forge import Forge
from .._library import atomic_write
from .conversations import Conversation
from .probing import UpstreamAgent
from .toolset import DEFAULT_READS, is_read, stand_in

__all__ = ["NAMESPACE_HEADER", "Namespace", "Namespaces", "tenant_of"]

logger = logging.getLogger(__name__)

NAMESPACE_HEADER = "x-skillforge-namespace"
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _slug(text: str) -> str:
    """``text`` as one path component if it is a plain name, else ``h-`` and its hash."""
    return text if _SLUG.fullmatch(text) and ".." not in text else f"h-{_hash(text)}"


def tenant_of(authorization: str | None, namespace: str | None, *, share: bool = False) -> str:
    """The directory of a client's skills: its key's hash (or ``shared``), then its namespace header.

    >>> tenant_of("Bearer sk-1", None)
    'key-b6ae8f3e8c21b0e3'
    >>> tenant_of("Bearer sk-1", "team-a", share=True)
    'shared--team-a'
    """
    who = "shared" if share else f"key-{_hash(authorization or '')}"
    return f"{who}--{_slug(namespace)}" if namespace else who


class _ProxyForge(Forge):
    """A namespace's Forge: tasks bind through the template and word indexes only.

    The proxy holds a Forge per namespace; an embedded Chroma store for each would cost
    far more than the few free-text templates it could add candidates for.
    """

    def _semantic_candidates(self, task: str) -> list[str]:
        return []


@dataclass(frozen=True, slots=True)
class Namespace:
    """A namespace's directory and Forge; ``forge`` is None where its tools cannot be registered
    (``why_not`` says why): such conversations are forwarded and not learned."""

    tenant: str
    key: str
    skills_dir: Path
    forge: Forge | None
    why_not: str | None = None
    prober: UpstreamAgent | None = None  # the upstream as the agent probes ask (``probes=N``), else None


class Namespaces:
    """The namespaces the proxy has opened, the most recently used ``max_open`` kept open.

    Args:
        skills_dir: the root under which each namespace's skills directory lives.
        state_dir: the root of each namespace's derived state (safe to delete).
        share: serve every client from the same skills (no key in the tenant).
        reads: a regex for the names of tools that only read (the rest are writes).
        max_open: namespaces kept open at once (a Forge each).
        upstream: the API probes ask (``probing``); with ``probes`` 0 it is not asked.
        probes: probe runs per skill learned or widened (0: off), and ``probes_per_hour`` per namespace.
        timeout: seconds a probe waits for each of the upstream's replies.
    """

    def __init__(
        self,
        skills_dir: str | Path,
        state_dir: str | Path,
        *,
        share: bool = False,
        reads: str = DEFAULT_READS,
        max_open: int = 256,
        upstream: str | None = None,
        probes: int = 0,
        probes_per_hour: int = 120,
        timeout: float = 300.0,
    ) -> None:
        try:
            re.compile(reads)  # a bad pattern fails here, not on the first request
        except re.error as e:
            raise ConfigError(f"reads={reads!r} is not a regular expression ({e}); give one that matches the names of tools that only read") from e
        self.skills_dir = Path(skills_dir)
        self.state_dir = Path(state_dir)
        self.share = share
        self.reads = reads
        self.max_open = max_open
        if probes and upstream is None:
            raise ConfigError("probes ask the upstream: give Namespaces(upstream=...) with probes")
        self.upstream = upstream
        self.probes = probes
        self.probes_per_hour = probes_per_hour
        self.timeout = timeout
        self._open: OrderedDict[tuple[str, str], Namespace] = OrderedDict()
        self._lock = threading.Lock()

    def tenant(self, authorization: str | None, namespace: str | None) -> str:
        return tenant_of(authorization, namespace, share=self.share)

    def get(self, tenant: str, conv: Conversation) -> Namespace:
        """The namespace of ``conv`` for ``tenant``, opened on first use."""
        at = (tenant, conv.key)
        with self._lock:
            ns = self._open.get(at)
            if ns is not None:
                self._open.move_to_end(at)
                return ns
            ns = self._make(tenant, conv)
            self._open[at] = ns
            while len(self._open) > self.max_open:
                _at, old = self._open.popitem(last=False)
                if old.forge is not None:
                    old.forge.close()  # its open files; it opens them again if a request still holds it
            return ns

    def close(self) -> None:
        """Let go of every open namespace's files (the proxy is stopping)."""
        with self._lock:
            for ns in self._open.values():
                if ns.forge is not None:
                    ns.forge.close()

    def _make(self, tenant: str, conv: Conversation) -> Namespace:
        where = Path(tenant) / f"{_slug(conv.model)}-{conv.key}"
        skills_dir = self.skills_dir / where
        agent = UpstreamAgent(self.upstream, conv.model, conv.system, conv.tools, timeout=self.timeout) if self.probes else None
        forge = _ProxyForge(
            skills_dir=skills_dir, state_dir=self.state_dir / where, importable_skills=False, run_log=False,
            agent=agent, probes=self.probes, probes_per_hour=self.probes_per_hour, background_probes=False,
        )  # probes run in the proxy's learning threads, after a conversation is learned
        try:
            for spec in conv.tools:
                name = spec["function"]["name"]
                forge.registry.register(stand_in(spec), read=is_read(name, self.reads), name=name)
        except SkillforgeError as e:  # a schema pydantic cannot describe, say
            logger.warning("namespace %s: conversations are forwarded, not learned: %s", where, e)
            return Namespace(tenant, conv.key, skills_dir, None, str(e))
        described = skills_dir / "namespace.json"
        if not described.exists():
            atomic_write(described, json.dumps(_description(conv, forge), indent=1, ensure_ascii=False) + "\n")
        return Namespace(tenant, conv.key, skills_dir, forge, prober=agent)


def _description(conv: Conversation, forge: Forge) -> dict[str, Any]:
    """What ``namespace.json`` says: under which model, prompt and tools the skills were learned."""
    return {
        "model": conv.model,
        "system": list(conv.system),
        "reads": sorted(t.name for t in forge.registry.tools.values() if t.read),
        "tools": list(conv.tools),
    }
