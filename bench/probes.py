"""Probes: phrasings no run of the stream used, written to tempt a wrong replay, after a stream is learned.

The shadow check (``bench.shadow``) learns a workload's stream and shadows each of its tasks. Its
phrasings repeat, so a skill meets in it only the wordings it was learned from. A probe asks the
library, once the stream is learned, for what the stream never said: a cancel's reason in other
words ("because I bought it by accident", filed by the agent under another reason than the words a
skill learned), a change of mind or a "don't" appended, a condition ("but only if"), a refund to
another kind of method (retail, storefront, helpdesk). Each probe runs through ``forge.solve()`` (learning nothing) and through
the agent alone from the same world, as the shadow check does; a probe a skill serves whose writes or
answer differ from the agent's is a **wrong replay**. The worlds then take the agent's writes, so the
next probe starts where the agent would have left things.

    .venv/bin/python -m bench.probes [--workload retail] [--days 6] [--per 6]

Exits 1 on a wrong replay. About 5 minutes for six days of retail, most of it the stream.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.shadow import diff_states, load, run as shadow_run
from skillforge import Forge

__all__ = ["PROBES", "ProbeReport", "probe"]

_REASONS = ("I bought it by accident", "I clicked twice", "I purchased the wrong one", "it's too late now",
            "I got a cheaper deal", "I changed my mind", "I ordered it by mistake")
_CANCELS = (
    "Hi, I'm {name}, zip code {zip}. Please cancel order {oid} — {why}.",
    "My email is {email}. I want to cancel {oid} because {why}.",
    "cancel {oid} pls, {why}. {name} {zip}",
    "Hello! This is {name} (zip {zip}). I'd like to cancel order {oid}; {why}. Thanks!",
    "Hi, I'm {name} ({zip}). Please cancel order {oid} because {why}.",
    "{name}, zip {zip}: what's the status of {other}? And please cancel {oid}, {why}.",
)


def _retail(world: Path, per: int) -> Iterator[str]:
    """Probes of the retail workload's world: cancels with reasons said otherwise, returns to other methods,
    changes of mind and "don't" appended."""
    with sqlite3.connect(world) as db:
        def orders(status: str) -> list[tuple[Any, ...]]:
            return db.execute(
                "SELECT o.order_id, u.first_name || ' ' || u.last_name, u.zip, u.email, (SELECT name FROM order_items i"
                " WHERE i.order_id = o.order_id ORDER BY pos LIMIT 1) FROM orders o JOIN users u ON o.user_id = u.user_id"
                " WHERE o.status = ? ORDER BY o.order_id", (status,)).fetchall()

        pending, delivered = orders("pending"), orders("delivered")
    if not pending or not delivered:
        return
    k = 0
    for template, why in itertools.product(_CANCELS, _REASONS):
        for _ in range(per):
            oid, name, zip_code, email, _item = pending[k % len(pending)]
            other = delivered[(k * 7) % len(delivered)][0]
            k += 5
            yield template.format(name=name, zip=zip_code, oid=oid, email=email, why=why, other=other)
    for j in range(per * 3):
        oid, name, zip_code, email, item = delivered[(j * 11) % len(delivered)]
        poid, pname, pzip, pemail, _pitem = pending[(j * 13) % len(pending)]
        yield from (
            f"Hi, I'm {name} (zip {zip_code}). I'd like to return the {item} from order {oid}.",
            f"Hi, I'm {name} (zip {zip_code}). I'd like to return the {item} from order {oid}. Actually, never mind, keep it.",
            f"Hi, I'm {name} (zip {zip_code}). I'd like to return the {item} from order {oid}, refund to my PayPal please.",
            f"My email is {email}. Please return the {item} from {oid}, refund to my gift card.",
            f"Hi, I'm {pname}, zip {pzip}. Please ship order {poid} to 12 Oak Street, Suite 4, Austin, TX 78701 instead. "
            "Actually, leave it.",
            f"My email is {pemail}. Please switch the payment on {poid} to my Visa.",
            f"Hi, what's the status of order {poid}? My email is {pemail}. Don't change anything.",
        )


_DESK = (
    "Please unlock {u} and reset {his} password. Actually, only unlock {him}.",
    "Please unlock {u}. Don't reset {his} password.",
    "Please unlock {u} and reset {his} password, but only if {he} is in sales.",
    "Reset the password for {u}, and also add {him} to vpn-users. Actually, skip the group.",
    "Add {u} to jira-users but do not remove {him} from github-org.",
    "Please enable MFA for {u}, unless {he} already has it.",
    "Please close INC-4806, note: duplicate of INC-4807. And please don't unlock {u}.",
    "Hi! Please unlock {u} and reset {his} password. Thanks a lot!",
)
_FORMS = {"he": ("his", "him", "he"), "she": ("her", "her", "she"), "they": ("their", "them", "they")}


def _helpdesk(world: Path, per: int) -> Iterator[str]:
    """Probes of the helpdesk: changes of mind, "don't", conditions, greetings around two requests."""
    wl = load("helpdesk")
    users = sorted(wl.PRONOUN)
    for k, template in enumerate(_DESK):
        for j in range(per):
            u = users[(k * 5 + j * 3) % len(users)]
            his, him, he = _FORMS[wl.PRONOUN[u]]
            yield template.format(u=u, his=his, him=him, he=he)


_STORE_CANCELS = (
    "Hi, I'm {first} {last}, zip code {zip}. Please cancel order {oid}, {why}.",
    "My email is {email}. I want to cancel my order {oid} because {why}.",
    "cancel {oid} pls, {why}. email {email}",
    "Hello! Could you cancel {oid} for me? {Why}. {first} {last} ({zip}). Thanks!",
)
_STORE_REASONS = (*_REASONS, "I no longer need it", "ordered by accident")


def _storefront(world: Path, per: int) -> Iterator[str]:
    """Probes of the storefront (its records are JSON): cancels in its phrasings with reasons in other words."""
    with sqlite3.connect(world) as db:
        users = {uid: json.loads(data) for uid, data in db.execute("SELECT user_id, data FROM users")}
        orders = [(oid, users[uid]) for oid, uid, data in db.execute("SELECT order_id, user_id, data FROM orders ORDER BY order_id")
                  if json.loads(data)["status"] == "pending" and uid in users]
    if not orders:
        return
    k = 0
    for template, why in itertools.product(_STORE_CANCELS, _STORE_REASONS):
        for _ in range(per):
            oid, user = orders[k % len(orders)]
            k += 5
            yield template.format(first=user["name"]["first_name"], last=user["name"]["last_name"], zip=user["address"]["zip"],
                                  email=user["email"], oid=oid, why=why, Why=why[0].upper() + why[1:])


PROBES: dict[str, Callable[[Path, int], Iterator[str]]] = {"retail": _retail, "helpdesk": _helpdesk, "storefront": _storefront}


@dataclass
class ProbeReport:
    workload: str
    days: int
    probes: int = 0
    served: int = 0  # wholly by skills
    handed_over: int = 0
    wrong: list[tuple[str, str, list[str], Any, Any]] = field(default_factory=list)  # (task, skill, diff, skill's, agent's)
    seconds: float = 0.0

    def render(self) -> str:
        lines = [
            f"probes of {self.workload} after {self.days} days of its stream: {self.probes} tasks in {self.seconds:.1f} s",
            f"  served by skills:   {self.served}",
            f"  handed over:        {self.handed_over}",
            f"  WRONG REPLAYS:      {len(self.wrong)}",
        ]
        for task, skill, diff, mine, alone in self.wrong:
            lines += [f"  - {task}", f"      skill {skill}: {str(mine)[:160]!r}", f"      agent: {str(alone)[:160]!r}",
                      *(f"      {d}" for d in diff[:4])]
        return "\n".join(lines)


def probe(workload: str = "retail", *, days: int = 6, per: int = 6, workdir: Path | None = None) -> ProbeReport:
    """Learn ``days`` of ``workload``'s stream (``bench.shadow``), then shadow its probes against the library."""
    if workload not in PROBES:
        raise ValueError(f"no probes for {workload!r}; probes exist for {', '.join(sorted(PROBES))}")
    report = ProbeReport(workload, days)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="probes-") as tmp:
        root = workdir or Path(tmp) / "stream"
        shadow_run(workload, days=days, workdir=root)
        wl = load(workload)
        main, shadow = root / "main.sqlite3", root / "shadow.sqlite3"
        forge = Forge(skills_dir=root / "skills", state_dir=root / "state", agent=wl.agent, learn=False, run_log=False)
        saved = dict(wl.TOOLBOX)
        for f in wl.TOOLS:
            wl.TOOLBOX[f.__name__] = forge.tool(read=f.__name__ in wl.READS)(f)
        try:
            for task in PROBES[workload](main, per):
                report.probes += 1
                shutil.copyfile(main, shadow)
                wl.use_world(main)
                result = forge.solve(task)
                wl.use_world(shadow)
                alone = wl.agent(task)
                wl.use_world(main)
                diff = diff_states(wl.snapshot(main), wl.snapshot(shadow))
                if result.source == "skill":
                    report.served += 1
                elif result.source == "skill+agent":
                    report.handed_over += 1
                if result.source != "agent" and (diff or result.output != alone):
                    report.wrong.append((task, result.skill or "", diff, result.output, alone))
                shutil.copyfile(shadow, main)  # the next probe starts from the agent's world
        finally:
            wl.TOOLBOX.clear()
            wl.TOOLBOX.update(saved)
            forge.close()
    report.seconds = time.perf_counter() - start
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.probes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", default="retail", choices=sorted(PROBES))
    parser.add_argument("--days", type=int, default=6, help="days of the stream learned before the probes (default 6)")
    parser.add_argument("--per", type=int, default=6, help="probes per phrasing (default 6)")
    args = parser.parse_args(argv)
    if args.days < 1 or args.per < 1:
        parser.error("--days and --per are at least 1")
    report = probe(args.workload, days=args.days, per=args.per)
    sys.stdout.write(report.render() + "\n")
    return 1 if report.wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
