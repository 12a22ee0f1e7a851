"""Serving a conversation from its namespace's skills, and learning from a finished one.

``decide`` runs each skill whose template binds the task, as admission does: in the
sandbox, with stand-ins that return the results the conversation already holds. The
first call the history does not hold is the answer (``Served`` with a call); a skill
that returns after reproducing every call answers with its return value. A guard that
fails on a result in the history, or a skill that would have called something else than
the conversation did, leaves the request to the upstream (``Forward``): it sees the whole
conversation and carries on from there, so nothing is repeated.

``learn`` turns a finished conversation (its final answer came from the upstream) into a
run, learned like any agent run of a Forge: cut into requests where a message holds several,
lifted, guarded, admitted and written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from .._compile import Compiled, Rejected
from .._exceptions import BudgetExceeded, GuardFailed, SkillforgeError
from .._forge import Forge
from .._index import Match
from .._tools import Run, activate, deactivate, error_text
from .conversations import Conversation
from .namespaces import Namespace
from .toolset import Diverged, History, NextCall, replaying

__all__ = ["Forward", "Learned", "Served", "decide", "learn"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Served:
    """The proxy's own answer: the next tool call (``call``), or the skill's final ``answer``."""

    skill: str
    call: tuple[str, dict[str, Any]] | None = None
    answer: Any = None


@dataclass(frozen=True, slots=True)
class Forward:
    """The request goes to the upstream, and why."""

    reason: str


def decide(ns: Namespace, conv: Conversation) -> Served | Forward:
    """Serve ``conv`` from a skill of ``ns`` if one fits every step so far, else say why not."""
    forge = ns.forge
    if forge is None:
        return Forward(ns.why_not or "the namespace cannot hold skills")
    matches = forge.find_all(conv.task)
    if not matches and forge._lock.acquire(blocking=False):  # has another process (or a person) changed skills/?
        try:
            forge._sync_disk()  # one stat when nothing changed; skipped while a learn holds the lock
        finally:
            forge._lock.release()
        matches = forge.find_all(conv.task)
    if not matches:
        return Forward("no skill binds the task")
    why = []
    for match in matches:  # variants of a template: the first that fits the whole history serves
        verdict = _replay(forge, match, conv)
        if isinstance(verdict, Served):
            return verdict
        why.append(verdict)
    return Forward("; ".join(why))


def _replay(forge: Forge, match: Match, conv: Conversation) -> Served | str:
    skill = match.skill
    try:
        func = forge._function(skill)
    except Exception as e:  # the file is listed in forge.problems and no longer served
        return f"skill {skill.name} does not load: {error_text(e)}"
    history = History(conv.steps)
    run = Run(
        snapshot=False, instances={}, tools=forge.registry.tools, budget=forge.max_skill_calls, seconds=forge.max_skill_seconds,
    )
    token = activate(run)
    try:
        with replaying(history):
            output = func(**match.params)
    except NextCall as nxt:
        return Served(skill.name, call=(nxt.name, nxt.arguments))
    except GuardFailed as g:
        return f"guard failed in {skill.name} at step {history.pos}: {g.reason}"
    except Diverged as d:
        return f"{skill.name} does not fit the conversation: {d}"
    except BudgetExceeded as b:
        return f"{skill.name} stopped: {b}"
    except Exception as e:
        return f"{skill.name} raised {error_text(e)}"
    finally:
        deactivate(token)
    if history.pos < len(conv.steps):
        return f"{skill.name} answers after {history.pos} calls; the conversation made {len(conv.steps)}"
    return Served(skill.name, answer=output)


@dataclass(frozen=True, slots=True)
class Learned:
    """What learning a conversation wrote (skill names), and why the rest of it was not learned."""

    skills: tuple[str, ...] = ()
    why_not: str | None = None


def learn(ns: Namespace, conv: Conversation, answer: str) -> Learned:
    """Learn the run ``conv`` ended with ``answer``, as ``Forge.solve`` learns an agent's run: a
    message of several requests one request at a time where it cuts cleanly, else whole.
    Never raises (``Forge.learn`` returns verdicts)."""
    forge = ns.forge
    if forge is None:
        return Learned(why_not=ns.why_not or "the namespace cannot hold skills")
    if not conv.steps:
        return Learned(why_not="the conversation made no tool calls: an answer from the task alone is not learned")
    calls = [(s.name, s.args, s.result, s.error) for s in conv.steps]
    try:
        traj = forge.trajectory(conv.task, calls, answer)
    except SkillforgeError as e:  # a result JSON text cannot carry faithfully, say
        return Learned(why_not=str(e))
    matches = forge.find_all(conv.task)
    if matches:  # the skills it handed over from: the run is lifted against their template
        verdict = forge.learn(traj, family=matches[0].template or matches[0].skill.template)
    else:
        requests = forge._learn_requests(traj)
        if requests is not None:
            names, why = requests
            return _logged(ns, Learned(tuple(names), "; ".join(why) or None))
        verdict = forge.learn(traj)
    match verdict:
        case Compiled(spec=spec):
            return _logged(ns, Learned((spec.name,)))
        case Rejected(reason=reason):
            return _logged(ns, Learned(why_not=reason))
    return Learned(why_not=f"unexpected verdict {verdict!r}")  # pragma: no cover - learn() returns one of the two


def _logged(ns: Namespace, learned: Learned) -> Learned:
    if learned.skills and ns.forge is not None and ns.forge.prober.budget.per_skill > 0:
        for name in learned.skills:
            ns.forge.prober.want(name)  # probed by the proxy after this learn (``Proxy(probes=N)``)
    if learned.skills:
        logger.info("learned %s from a conversation (%s)", ", ".join(learned.skills), ns.skills_dir)
    if learned.why_not:
        logger.info("not learned from a conversation: %s", learned.why_not)
    return learned
