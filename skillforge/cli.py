"""The ``skillforge`` command line: demo, solve, skills, show, reindex."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import statistics
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from ._cliapp import Finding, Setup, diagnose, diagnose_runlog, open_app
from ._exceptions import NoAgentError, RunLogError, SkillforgeError
from ._runlog import Stats, _summarise

__all__ = ["main"]


def _load_forge(app: str | None) -> Any:
    """The Forge a command runs on: ``--app``, else the ``app`` setting, else the default Forge."""
    return open_app(app).forge


def _emit(answer: dict[str, Any]) -> None:
    """One JSON object on stdout: keys sorted, so the same state prints the same text."""
    click.echo(json.dumps(answer, indent=2, sort_keys=True, ensure_ascii=False, default=str))


def _report(setup: Setup, finding: Finding | None) -> None:
    """Say what was found missing (on stderr), and fail if it is fatal: after the answer is printed."""
    if finding is None:
        return
    click.echo(("error: " if finding.fatal else "note: ") + finding.message(setup), err=True)
    if finding.fatal:
        raise SystemExit(1)


app_option = click.option(
    "--app",
    metavar="MODULE[:FORGE]",
    help="The Forge with your tools, or a module whose @skillforge.tool functions it imports "
    "(default: app in [tool.skillforge] or SKILLFORGE_APP, else the default Forge).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object (for scripts and CI).")


@click.group()
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug).")
@click.version_option(package_name="skillforge")
def cli(verbose: int) -> None:
    """skillforge: learn an agent's runs once, replay them as reviewed Python."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@cli.command()
@click.argument("task")
@app_option
def solve(task: str, app: str | None) -> None:
    """Solve TASK: from a skill if one fits, else with the agent (and learn)."""
    setup = open_app(app)
    try:
        forge = setup.forge
        result = asyncio.run(forge.asolve(task)) if forge.needs_asolve else forge.solve(task)
    except NoAgentError as e:  # no skill matched: say what was looked in, and why it may be empty
        finding = diagnose(setup)
        fix = finding.fix if finding else "skillforge skills lists the templates these skills take"
        lines = [str(e), *([finding.problem] if finding else []), *setup.describe(), f"fix: {fix}"]
        raise click.ClickException("\n".join(lines)) from None
    if setup.forge.runlog is not None:  # logged now, not only at exit: a command is one solve
        setup.forge.runlog.flush()
    click.echo(f"source: {result.source}  skill: {result.skill or '-'}  model requests: {result.llm_calls}")
    for call in result.calls:
        click.echo(f"  {call.tool}({', '.join(f'{k}={v!r}' for k, v in call.args.items())})")
    if result.learned:
        click.echo(f"learned: {result.learned}")
    if result.error:
        click.echo(f"error: {result.error}", err=True)
        raise SystemExit(1)
    click.echo(f"output: {result.output}")


def _hits(forge: Any) -> dict[str, int] | None:
    """Hits per skill from the run log (empty when there is no log yet; None when it cannot be read).
    A log that is not there is not made: listing skills writes nothing."""
    if forge.runlog is None or not forge.runlog.path.exists():
        return {}
    try:
        return {s.name: s.hits for s in forge.stats().skills}
    except RunLogError as e:  # statistics only: the skills are listed without their hits
        click.echo(f"warning: {e}; hits are not shown", err=True)
        return None


@cli.command("skills")
@app_option
@json_option
def list_skills(app: str | None, as_json: bool) -> None:
    """List the usable skills: hits so far, and their templates.

    With --json: app, settings_file, skills_dir, skills (name, template, phrasings, hits, edited,
    file), problems (file, reason, warning: true if the file is still run), hint (what is missing and the fix,
    or null).
    """
    setup = open_app(app)
    forge = setup.forge
    hits = _hits(forge)
    skills = forge.skills()
    finding = diagnose(setup)
    if as_json:
        _emit({
            **setup.context(),
            "skills": [
                {
                    "name": s.name,
                    "template": s.template.text,
                    "phrasings": [t.text for t in s.phrasings or (s.template,)],
                    "hits": None if hits is None else hits.get(s.name, 0),
                    "edited": s.edited,
                    "file": str(Path(s.path).absolute()),
                }
                for s in skills
            ],
            "problems": [
                {"file": str(Path(p.path).absolute()), "reason": p.reason, "warning": p.warning} for p in forge.problems
            ],
            "hint": finding.message(setup) if finding else None,
        })
    else:
        click.echo(f"{'skill':32} {'hits':>6}  template")
        for s in skills:
            count = "-" if hits is None else hits.get(s.name, 0)
            click.echo(f"{s.name:32} {count:>6}  {s.template.text}{'  (edited)' if s.edited else ''}")
        for p in forge.problems:  # a warning's file is still run (an edit that no longer reproduces its runs)
            click.echo(f"{'warning' if p.warning else 'not run'}: {p.path}: {p.reason}", err=True)
    _report(setup, finding)


@cli.command()
@app_option
@json_option
def stats(app: str | None, as_json: bool) -> None:
    """Hits, misses, handovers, model requests and tokens saved: overall and per skill.

    With --json: app, settings_file, skills_dir, run_log, overall (the counts), skills (the same
    per skill, with its name), hint (what is missing and the fix, or null).
    """
    setup = open_app(app)
    forge = setup.forge
    if forge.runlog is None:
        raise click.ClickException(f"the Forge {setup.app} keeps no run log (run_log=False): there are no statistics")
    finding = diagnose_runlog(setup)
    if finding is not None:  # no log yet: nothing was solved with this state dir (none is made by asking)
        st = Stats(overall=_summarise(None, [], 0.0, 0.0), skills=[])
    else:
        try:
            st = forge.stats()
        except RunLogError as e:  # a one-line message that says how to fix it, not a traceback
            raise click.ClickException(str(e)) from e
    if as_json:
        overall = asdict(st.overall)
        del overall["name"]
        _emit({
            **setup.context(),
            "run_log": str(forge.runlog.path.absolute()),
            "overall": overall,
            "skills": [asdict(s) for s in st.skills],
            "hint": finding.message(setup) if finding else None,
        })
        _report(setup, finding)
        return
    o = st.overall
    click.echo(
        f"solves: {o.solves}  hits: {o.hits}  agent: {o.agent}  handovers: {o.handovers}  failed: {o.failed}"
    )
    click.echo(
        f"model requests: {o.llm_calls} made, ~{o.requests_saved:.0f} saved; "
        f"tokens: {o.tokens} used, ~{o.tokens_saved:.0f} saved"
    )
    if st.skills:
        click.echo(f"\n{'skill':32} {'hits':>6} {'agent':>6} {'handover':>9} {'req saved':>10} {'hit p50':>9}")
    for s in st.skills:
        p50 = f"{s.median_hit_ms:.2f}ms" if s.median_hit_ms is not None else "-"
        click.echo(f"{s.name:32} {s.hits:>6} {s.agent:>6} {s.handovers:>9} {s.requests_saved:>10.0f} {p50:>9}")
    _report(setup, finding)


@cli.command()
@app_option
@json_option
def check(app: str | None, as_json: bool) -> None:
    """Check what ``import skills`` would run: every .py file in skills/, and each skill against its runs.

    A skill file must be UTF-8 with no coding declaration, of bounded size and nesting, with a
    complete SKILL literal that declares every tool it imports and names its runs by hash; it must
    pass the sandbox policy and reproduce each recorded run. ``__init__.py`` must be the generated
    one; no other Python file may be there. Exits non-zero if any file fails: run it in CI on pull
    requests that touch skills/.

    With --json: app, settings_file, skills_dir, pass, files (file, kind "skill" or "other", ok,
    problems, runs, edited), skill_files and other_files (total, passed), hint.
    """
    setup = open_app(app)
    forge = setup.forge
    library = forge.library
    paths = library.paths()
    files = [
        {"file": label, "kind": "other", "ok": why is None, "problems": [why] if why else [], "runs": None, "edited": None}
        for label, why in _other_python_files(library.dir, set(paths))
    ]
    for path in paths:
        files.append(_check_skill(forge, path))
    skill_files = [f for f in files if f["kind"] == "skill"]
    others = [f for f in files if f["kind"] == "other"]
    failed = sum(not f["ok"] for f in files)
    finding = diagnose(setup) if failed or not paths else None
    if as_json:
        _emit({
            **setup.context(),
            "pass": not failed and not (finding and finding.fatal),
            "files": files,
            "skill_files": {"total": len(skill_files), "passed": sum(f["ok"] for f in skill_files)},
            "other_files": {"total": len(others), "passed": sum(f["ok"] for f in others)},
            "hint": finding.message(setup) if finding else None,
        })
    else:
        for f in others + skill_files:
            if not f["ok"]:
                click.echo(f"FAIL {f['file']}: " + "; ".join(f["problems"]))
            elif f["kind"] == "other":
                click.echo(f"ok   {f['file']}")
            else:
                runs = f["runs"]
                click.echo(f"ok   {f['file']} ({runs} run{'s' * (runs != 1)}{', edited' if f['edited'] else ''})")
        click.echo(f"{sum(f['ok'] for f in skill_files)} of {len(skill_files)} skill files pass")
        if others:
            click.echo(f"{sum(f['ok'] for f in others)} of {len(others)} other Python files in {library.dir.name}/ pass")
    _report(setup, finding)
    if failed:
        raise SystemExit(1)


def _check_skill(forge: Any, path: Path) -> dict[str, Any]:
    """One skill file's verdict: readable, usable with these tools, within the policy, and
    reproducing each run it names."""
    from ._compile import Rejected, admit_file

    try:
        skill = forge.library.read(path)  # as solve() reads it: named after its skill, too
    except SkillforgeError as e:
        return {"file": path.name, "kind": "skill", "ok": False, "problems": [str(e)], "runs": None, "edited": None}
    why, _changed = forge._unusable(skill)
    # as on load: a file whose tools are not these is not judged by the policy (every call would be flagged)
    violations = [] if why else forge.policy_violations(skill.source, skill.name, skill.instances)
    problems = [why] if why else []
    problems += [f"policy: {v}" for v in violations]
    if not problems:
        if not skill.runs:
            problems.append("it names no recorded run to prove it against")
        for run_hash in skill.runs:
            try:
                verdict = admit_file(skill, forge.library.load_run(run_hash))
            except SkillforgeError as e:
                problems.append(str(e))
                continue
            if isinstance(verdict, Rejected):
                problems.append(f"run {run_hash[:12]}: {verdict.reason}")
    return {
        "file": path.name, "kind": "skill", "ok": not problems, "problems": problems,
        "runs": len(skill.runs), "edited": skill.edited,
    }


def _other_python_files(skills_dir: Path, skill_paths: set[Path]) -> list[tuple[str, str | None]]:
    """Each file in ``skills/`` that Python could import besides the skill files, and what is wrong
    with it (None: ``__init__.py`` as generated)."""
    import importlib.machinery

    from ._library import Library

    out: list[tuple[str, str | None]] = []
    if not skills_dir.is_dir():
        return out
    suffixes = tuple(importlib.machinery.all_suffixes())
    for path in sorted(skills_dir.rglob("*")):
        rel = path.relative_to(skills_dir).as_posix()
        if "__pycache__" in path.parts:
            if path.name.endswith(".pyc") and _runs_unchecked(path):
                out.append((rel, "a compiled file the importer runs without comparing it to its source (PEP 552 "
                                 "unchecked hash): `import skills` would run it whatever the .py says; remove it"))
            continue
        if path in skill_paths or not path.name.endswith(suffixes):
            continue
        if rel == "__init__.py":
            out.append((rel, Library(skills_dir).package_problem()))
        elif path.parent == skills_dir and path.name.endswith(".py") and not path.name.startswith(("_", ".")):
            continue  # a skill file: checked as one
        else:
            out.append((rel, "not a skill file, yet Python can import it from the skills package: remove it"))
    return out


def _runs_unchecked(pyc: Path) -> bool:
    """True for a .pyc Python loads without checking it against its source: hash-based, with the
    check-source bit off (PEP 552). A timestamp or checked-hash .pyc is a cache the importer validates."""
    try:
        with pyc.open("rb") as f:
            header = f.read(8)
    except OSError:
        return True  # cannot tell: refuse
    flags = int.from_bytes(header[4:8], "little") if len(header) == 8 else 0
    return bool(flags & 0b01) and not flags & 0b10


def _no_skill(setup: Setup, name: str) -> click.ClickException:
    finding = diagnose(setup)
    if finding is None or not finding.fatal:
        finding = Finding("", "skillforge skills lists the skills here", fatal=False)
    lines = [f"no skill {name!r} in {setup.skills_dir}", *([finding.problem] if finding.problem else []), *setup.describe()]
    return click.ClickException("\n".join([*lines, f"fix: {finding.fix}"]))


@cli.command()
@click.argument("name")
@app_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def rm(name: str, app: str | None, yes: bool) -> None:
    """Delete skill NAME (its file, and its runs no other skill uses); nothing outside skills/."""
    setup = open_app(app)
    forge = setup.forge
    try:
        path = forge.library.path_for(name)
    except SkillforgeError as e:
        raise click.ClickException(str(e)) from None
    if not path.is_file():
        raise _no_skill(setup, name)
    if not yes:
        click.confirm(f"delete {path}?", abort=True)
    removed = forge.remove(name)
    click.echo(f"removed {name} ({removed} run file{'s' * (removed != 1)} no other skill used)")


@cli.command()
@click.argument("name")
@app_option
def show(name: str, app: str | None) -> None:
    """Print the source of skill NAME."""
    setup = open_app(app)
    try:
        path = setup.forge.library.path_for(name)
    except SkillforgeError as e:
        raise click.ClickException(str(e)) from None
    if not path.is_file():
        raise _no_skill(setup, name)
    click.echo(path.read_text(encoding="utf-8"), nl=False)


@cli.command()
@app_option
def reindex(app: str | None) -> None:
    """Rebuild the derived Chroma index from skills/."""
    setup = open_app(app)
    forge = setup.forge
    forge.reload()
    finding = diagnose(setup)
    if finding is not None and finding.fatal:  # nothing usable: the index is left as it is, not emptied
        click.echo("error: nothing to index, the index is left as it is: " + finding.message(setup), err=True)
        raise SystemExit(1)
    skills = forge.skills()
    changed = 0
    with click.progressbar(length=len(skills), label="reindexing", file=sys.stderr) as bar:
        for start in range(0, len(skills), 500):
            batch = skills[start : start + 500]
            changed += forge.semantic.sync(batch, prune=False)
            bar.update(len(batch))
    changed += forge.semantic.prune({s.name for s in skills})
    click.echo(f"reindexed {len(skills)} skills ({changed} entries changed)")
    _report(setup, finding)


@cli.command()
@click.option("--dir", "workdir", type=click.Path(file_okay=False, path_type=Path), help="Keep the demo's files here.")
@click.option("-n", "count", default=60, show_default=True, help="How many tickets.")
@click.option("--real/--stand-in", "real", default=None, help="Force a real model or the offline stand-in.")
def demo(workdir: Path | None, count: int, real: bool | None) -> None:
    """Run the support-desk demo: tickets solved by the agent once, then by skills."""
    from .demo.run import DemoSetup, TicketOutcome, check_real_model, run_demo

    if real:  # fail before anything is made (or an old --dir emptied), not once per ticket
        try:
            check_real_model()
        except SkillforgeError as e:
            raise click.ClickException(str(e)) from None
    cleanup = workdir is None
    base = workdir or Path(tempfile.mkdtemp(prefix="skillforge-demo-"))
    if workdir is not None and (workdir / "skills").exists():
        shutil.rmtree(workdir / "skills")
        shutil.rmtree(workdir / "state", ignore_errors=True)
        (workdir / "desk.sqlite3").unlink(missing_ok=True)
    outcomes: list[Any] = []
    skills_dir = base / "skills"
    try:
        for event in run_demo(base, n=count, real_model=real):
            if isinstance(event, DemoSetup):
                skills_dir = event.skills_dir
                click.echo(f"model: {event.model_label}" + (f" at {event.base_url}" if event.base_url else ""))
                click.echo(f"desk: SQLite at {event.workdir / 'desk.sqlite3'}; skills written to {event.skills_dir}\n")
                click.echo(f"{'#':>3}  {'served by':11} {'skill':28} {'req':>3} {'time':>9}  ticket")
                continue
            if not isinstance(event, TicketOutcome):
                continue
            r = event.result
            outcomes.append(r)
            how = r.source if r.ok else "FAILED"
            if r.learned:
                if r.skill == r.learned:
                    skill = f"{r.skill} (widened)"
                else:
                    skill = f"{r.skill} -> {r.learned}" if r.skill else f"-> learned {r.learned}"
            else:
                skill = r.skill or "-"
            ms = r.duration * 1000
            click.echo(f"{event.number:>3}  {how:11} {skill[:28]:28} {r.llm_calls:>3} {ms:>7.2f}ms  {event.ticket}")
            if r.error:
                click.echo(f"     error: {r.error}")
            elif r.not_learned and r.source == "agent":
                click.echo(f"     not learned: {r.not_learned}")
        _summary(outcomes, skills_dir)
        failed = [r for r in outcomes if not r.ok]
        if outcomes and len(failed) == len(outcomes):  # not a demo of anything: say so and fail
            click.echo(f"\nerror: every ticket failed; the first: {failed[0].error}", err=True)
            raise SystemExit(1)
    finally:
        if cleanup:
            shutil.rmtree(base, ignore_errors=True)


def _summary(outcomes: list[Any], skills_dir: Path) -> None:
    hits = [r for r in outcomes if r.source == "skill" and r.ok]
    agent_runs = [r for r in outcomes if r.source != "skill"]
    handovers = [r for r in outcomes if r.source == "skill+agent"]
    requests = sum(r.llm_calls for r in outcomes)
    per_agent = requests / len(agent_runs) if agent_runs else 0.0
    learned = list(dict.fromkeys(r.learned for r in outcomes if r.learned))
    runs_learned = sum(1 for r in outcomes if r.learned)
    click.echo("")
    failed = sum(1 for r in outcomes if not r.ok)
    click.echo(
        f"tickets: {len(outcomes)}  served by skills: {len(hits)}  by the agent: {len(agent_runs)} "
        f"({len(handovers)} of them after a skill's guard stopped it)" + (f"  FAILED: {failed}" if failed else "")
    )
    click.echo(
        f"model requests: {requests} made; about {per_agent * len(hits):.0f} saved "
        f"({per_agent:.1f} per agent-served ticket x {len(hits)} skill hits)"
    )
    if hits and agent_runs:
        hit_ms = statistics.median(r.duration for r in hits) * 1000
        agent_ms = statistics.median(r.duration for r in agent_runs) * 1000
        click.echo(f"median time: {hit_ms:.2f} ms from a skill, {agent_ms:.2f} ms through the agent")
    click.echo(
        f"skills written: {len(learned)} ({', '.join(learned)}), from {runs_learned} runs "
        f"({runs_learned - len(learned)} widened a skill's guards instead of adding a file)"
    )
    if learned:
        path = skills_dir / f"{learned[0]}.py"
        click.echo(f"\n--- {path.name} " + "-" * 60)
        click.echo(path.read_text(encoding="utf-8"), nl=False)


@cli.command()
@click.argument("task")
@app_option
@click.option("--run", "run", is_flag=True,
              help="Run each skill that binds against the current world, with read tools only: no write is made.")
@click.option("--json", "as_json", is_flag=True, help="Print the explanation as JSON.")
@click.option("-n", "limit", default=5, show_default=True, help="How many of the nearest templates that do not bind.")
def why(task: str, app: str | None, run: bool, as_json: bool, limit: int) -> None:
    """Explain what solve would do with TASK: the skills that bind it, and for the nearest templates
    that do not, the literal word or the slot (its pattern, the text it saw) where binding stops."""
    import json

    explanation = _load_forge(app).explain(task, run=run, limit=limit)
    click.echo(json.dumps(explanation.to_dict(), indent=2, default=repr) if as_json else str(explanation))


@cli.command()
@app_option
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Read this run log (a runs.sqlite3) instead of the Forge's.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"),
              show_default=True, help="Where to write the page.")
def report(app: str | None, log_path: Path | None, output: Path) -> None:
    """Write one self-contained HTML page of the run log: hits and misses over time, model requests
    and tokens saved, each skill's hits and handovers with the guards that stopped them, and the
    wrong replays shadow runs recorded. The page has no script and loads nothing."""
    from ._report import write
    from ._runlog import RunLog

    if log_path is not None:
        if app:
            raise click.UsageError("give --app (the Forge's run log) or --log (a run log file), not both")
        if not log_path.is_file():
            raise click.ClickException(
                f"no run log at {log_path}: a Forge keeps it as runs.sqlite3 in its state directory "
                "(.skillforge/ unless configured)"
            )
        runlog = RunLog(log_path, keep=None)
    else:
        runlog = _load_forge(app).runlog
        if runlog is None:
            raise click.ClickException("this Forge keeps no run log (run_log=False): there is nothing to report")
    try:
        shown = write(runlog, output)
    except RunLogError as e:
        raise click.ClickException(str(e)) from e
    if shown.empty:
        click.echo(f"wrote {output}: the run log {runlog.path} holds no solves yet (the page says how to get some)")
    else:
        o = shown.overall
        click.echo(f"wrote {output}: {o.solves} solves, {o.hits} served by skills, {len(shown.skills)} skills")


@cli.command()
@click.option("--upstream", required=True, metavar="URL", help="The OpenAI-compatible API to forward to, e.g. https://api.openai.com/v1.")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535), help="The port to listen on.")
@click.option("--skills-dir", default="proxy-skills", show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Where each namespace's skills are written (one directory per API key, model, prompt and tool set).")
@click.option("--state-dir", default=".skillforge/proxy", show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Derived state (safe to delete).")
@click.option("--share", is_flag=True, help="Serve every API key's conversations from the same skills.")
@click.option("--reads", default=None, metavar="REGEX", help="Names of the tools that only read (default: get_, list_, find_, ... names).")
@click.option("--timeout", default=300.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds to wait for the upstream.")
@click.option("--no-learn", is_flag=True, help="Serve the skills there are; learn nothing new.")
@click.option("--probes", default=0, show_default=True, type=click.IntRange(min=0), metavar="N",
              help="Probe runs per skill learned or widened: the upstream asked again, with the client's key, with one "
                   "tool result changed, to find what decides (costs model requests; 0: off).")
@click.option("--probes-per-hour", default=120, show_default=True, type=click.IntRange(min=0), metavar="N",
              help="At most this many probe runs per namespace per hour.")
def proxy(
    upstream: str, host: str, port: int, skills_dir: Path, state_dir: Path, share: bool, reads: str | None,
    timeout: float, no_learn: bool, probes: int, probes_per_hour: int,
) -> None:
    """Serve an OpenAI-compatible chat-completions proxy that learns skills from conversations.

    Point your agent's OpenAI client at it (base_url http://HOST:PORT/v1): requests go to
    the upstream with your own API key, finished conversations become skills, and later
    conversations a skill fits are answered from it without the upstream.
    """
    try:
        from .proxy import Proxy, serve
    except ImportError as e:
        raise click.ClickException(f"the proxy needs its extra ({e}): pip install 'skillforge[proxy]'") from e
    app = Proxy(upstream, skills_dir=skills_dir, state_dir=state_dir, share=share, timeout=timeout, learn=not no_learn,
                probes=probes, probes_per_hour=probes_per_hour,
                **({"reads": reads} if reads is not None else {}))  # a ConfigError is main()'s one-line error
    click.echo(f"skillforge proxy on http://{host}:{port}/v1 -> {app.upstream}; skills in {skills_dir}"
               f"{' (shared by every API key)' if share else ''}{f'; {probes} probe runs per skill learned' if probes else ''}")
    serve(app, host=host, port=port, log_level="warning")


def main() -> None:
    """Console entry point: SkillforgeError becomes a one-line message and exit status 1."""
    try:
        cli(standalone_mode=True)
    except SkillforgeError as e:
        click.echo(f"error: {e}", err=True)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
