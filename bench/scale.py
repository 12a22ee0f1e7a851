"""Finding a skill among 1k, 10k and 100k skills: the hot template path and the semantic path.

Skills are synthetic (distinct templates built from a vocabulary, typed slots for
the hot path, free-text slots for the semantic path); they are indexed the way a
Forge indexes files read from ``skills/``, without writing 100k files. The
semantic path is Chroma, embedded (``PersistentClient``) and a real ``chroma run``
server on loopback, with the offline hashing embedding.

Goals on this machine: hot path p95 <= 50 us at 100k and flat from 1k; semantic
p95 <= 5 ms at 100k.
"""

from __future__ import annotations

import itertools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from skillforge._index import HotIndex, SemanticIndex
from skillforge._template import Slot, TaskTemplate
from skillforge.testing import ChromaServer

VERBS = "refund cancel ship check close open move renew upgrade pause resume audit verify archive restore tag flag merge split approve reject hold release price quote bill credit debit review escalate".split()
NOUNS = "order ticket invoice booking account parcel seat ledger contract license device plan claim return voucher wallet payment shipment subscription reservation".split()
ADJS = "urgent late partial duplicate damaged missing premium basic annual monthly weekly foreign local bulk single gift sample trial legacy priority standard express overnight regional global digital physical pending".split()
COLORS = "red blue green amber violet black white silver golden copper ivory coral teal olive navy plum rose sand slate stone".split()


def synthetic(n: int, *, free: bool) -> list[Any]:
    """``n`` distinct skills; typed slots (hot path) or a free-text slot (semantic path)."""
    combos = itertools.product(COLORS, ADJS, VERBS, NOUNS)
    skills = []
    for i, (color, adj, verb, noun) in zip(range(n), combos, strict=False):
        if free:
            text = f"Please {verb} the {color} {adj} {noun} for {{customer}} today"
            slots = [Slot("customer", "text", "str")]
        else:
            text = f"{verb} {color} {adj} {noun} #{{ref}}"
            slots = [Slot("ref", "digits", "str")]
        template = TaskTemplate(text, slots)
        skills.append(SimpleNamespace(name=f"s{i:06d}", template=template, task=text, content_hash=f"h{i}"))
    return skills


def _fill(skill: Any, rng: random.Random) -> str:
    text = skill.template.text
    return text.replace("{ref}", str(rng.randint(1, 99999))).replace("{customer}", rng.choice(["Ann Lee", "Bo Diaz", "Cy"]))


def _percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def _lookups(n: int, queries: int, *, free: bool) -> tuple[float, float]:
    """(p50 us, p95 us) of finding each of ``queries`` skills among ``n`` in a ``HotIndex``: by
    shape key (typed slots) or by literal words (free-text slots, what a Forge tries before Chroma)."""
    index = HotIndex()
    skills = synthetic(n, free=free)
    for s in skills:
        index.add(s)
    find = index.find_free if free else index.find
    rng = random.Random(n)
    tasks = [(s, _fill(s, rng)) for s in rng.sample(skills, min(queries, n))]
    samples = []
    for skill, task in tasks * 5:
        t0 = time.perf_counter_ns()
        found = find(task)
        samples.append((time.perf_counter_ns() - t0) / 1000)
        if not found or found[0].skill is not skill:
            raise RuntimeError(f"{'word index' if free else 'hot path'} missed {task!r}")
    return _percentiles(samples)


def hot(n: int, queries: int) -> tuple[float, float]:
    return _lookups(n, queries, free=False)


def words(n: int, queries: int) -> tuple[float, float]:
    return _lookups(n, queries, free=True)


def semantic(index: SemanticIndex, skills: list[Any], queries: int) -> tuple[float, float, float]:
    """(p50 ms, p95 ms, share of queries whose skill was among the candidates)."""
    for start in range(0, len(skills), 5000):
        index.sync(skills[start : start + 5000], prune=False)
    hot = HotIndex()
    for s in skills:
        hot.add(s)
    rng = random.Random(len(skills))
    picks = rng.sample(skills, min(queries, len(skills)))
    samples, found = [], 0
    for skill in picks:
        task = _fill(skill, rng)
        t0 = time.perf_counter_ns()
        names = index.query(task)
        matches = hot.find_among(names, task)
        samples.append((time.perf_counter_ns() - t0) / 1e6)
        found += bool(matches) and matches[0].skill is skill
    p50, p95 = _percentiles(samples)
    return p50, p95, found / len(picks)


def run(quick: bool = False) -> list[tuple[str, int, float, float, str]]:
    sizes = [1000, 10_000] if quick else [1000, 10_000, 100_000]
    rows: list[tuple[str, int, float, float, str]] = []
    for n in sizes:
        p50, p95 = hot(n, 400)
        rows.append(("hot template index", n, p50, p95, "us"))
    for n in sizes:
        p50, p95 = words(n, 400)
        rows.append(("word index, free-text templates", n, p50, p95, "us"))
    with tempfile.TemporaryDirectory(prefix="skillforge-scale-") as tmp:
        for n in sizes:
            idx = SemanticIndex(Path(tmp) / f"embedded-{n}")
            p50, p95, share = semantic(idx, synthetic(n, free=True), 200)
            rows.append((f"semantic, embedded Chroma (found {share:.0%})", n, p50, p95, "ms"))
        server_sizes = sizes if not quick else sizes[:1]
        with ChromaServer(Path(tmp) / "server") as server:
            for n in server_sizes:
                idx = SemanticIndex(Path(tmp) / "unused", url=server.url)
                idx._collection = None
                p50, p95, share = semantic(_fresh(idx, n), synthetic(n, free=True), 200)
                rows.append((f"semantic, chroma run server (found {share:.0%})", n, p50, p95, "ms"))
    return rows


def _fresh(idx: SemanticIndex, n: int) -> SemanticIndex:
    """Each size in a collection of its own on the shared server."""
    import skillforge._index as index_module

    name = index_module.COLLECTION
    index_module.COLLECTION = f"{name}_{n}"
    try:
        _ = idx.collection
    finally:
        index_module.COLLECTION = name
    return idx


def report(rows: list[tuple[str, int, float, float, str]]) -> str:
    lines = ["finding a skill among n skills (p50 / p95 per lookup)", f"{'path':48} {'skills':>8} {'p50':>10} {'p95':>10}"]
    for label, n, p50, p95, unit in rows:
        lines.append(f"{label:48} {n:>8} {p50:8.2f}{unit:>2} {p95:8.2f}{unit:>2}")
    lines.append("goals: hot p95 <= 50 us at 100k, flat from 1k; semantic p95 <= 5 ms at 100k")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(report(run(quick="--quick" in sys.argv)) + "\n")
