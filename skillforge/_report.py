"""``skillforge report``: one self-contained HTML page of what the run log says.

``gather`` reads the run log (``_runlog``) into a ``Report``: solves per period of time by how
they were served, model requests and tokens made and saved, each skill's hits, handovers and
the guards that stopped it, and the verdicts of shadow runs where one recorded them. The
figures per skill, and the requests and tokens a hit saves, are ``RunLog.stats()``'s: the page
and ``skillforge stats`` agree. ``render`` fills ``templates/report.html.j2`` with charts that
matplotlib draws as inline SVG: the page has no script and loads nothing, so it opens offline
and can be mailed or kept as one file, and the same log gives the same bytes.
"""

from __future__ import annotations

import io
import math
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._exceptions import UserError
from ._runlog import RunLog, SkillStats, Stats

__all__ = ["Period", "Report", "SkillReport", "WrongReplay", "gather", "render", "write"]

PERIODS = 48  # at most this many periods of time in the charts
_STEPS = (0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 3 * 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400)  # seconds per period, finest first
TOP_SKILLS = 30  # skills drawn in the chart (the table lists every one)
WRONG_SHOWN = 100  # newest wrong replays listed

COLOURS = {"hits": "#2e7d32", "handovers": "#ef6c00", "agent": "#1565c0", "failed": "#c62828"}
LABELS = {"hits": "served by a skill", "handovers": "handed over by a guard", "agent": "by the agent", "failed": "failed"}


@dataclass(frozen=True)
class Period:
    """The solves that started in one period of time (``start`` to ``start`` + the report's ``step``)."""

    start: float
    hits: int = 0
    handovers: int = 0
    agent: int = 0
    failed: int = 0
    requests: int = 0
    tokens: int = 0
    requests_saved: float = 0.0
    tokens_saved: float = 0.0


@dataclass(frozen=True)
class SkillReport:
    """One skill: its figures from ``RunLog.stats()``, why it stopped, and what shadow runs said of it."""

    stats: SkillStats
    stops: list[tuple[str, int]] = field(default_factory=list)  # why it stopped (a guard, mostly), most common first
    shadow_checked: int = 0
    wrong: int = 0

    @property
    def name(self) -> str:
        return self.stats.name or ""


@dataclass(frozen=True)
class WrongReplay:
    """A task a skill served that a shadow run found the agent alone would have done otherwise."""

    at: float
    task: str
    source: str
    skill: str
    detail: str | None


@dataclass(frozen=True)
class Report:
    log: Path
    overall: SkillStats
    step: float  # seconds per period
    periods: list[Period]
    skills: list[SkillReport]
    shadow_checked: int  # 0: no shadow run recorded a verdict
    wrong: int
    wrong_replays: list[WrongReplay]  # the newest WRONG_SHOWN, newest first

    @property
    def empty(self) -> bool:
        return self.overall.solves == 0

    @property
    def first(self) -> float | None:
        return self.periods[0].start if self.periods else None

    @property
    def last(self) -> float | None:
        return self.periods[-1].start + self.step if self.periods else None


def gather(runlog: RunLog) -> Report:
    """What ``runlog`` holds, for the page. Reads only; a log file that does not exist is an empty report.

    Raises:
        RunLogError: the file is not a run log.
    """
    runlog.flush()  # this process's queued solves first
    if not runlog.path.is_file():
        return build(runlog.path, None, [], [], [], [])
    stats = runlog.stats()
    rows = runlog.read("SELECT at, source, skill, ok, llm_calls, prompt_tokens + completion_tokens FROM log ORDER BY at")
    stops = runlog.read("SELECT skill, handover, COUNT(*) FROM solves WHERE handover IS NOT NULL GROUP BY skill, handover")
    shadow = runlog.read("SELECT skill, COUNT(*), SUM(wrong) FROM shadow GROUP BY skill")
    wrong = runlog.read(
        "SELECT at, task, source, skill, detail FROM shadow WHERE wrong ORDER BY at DESC, rowid DESC LIMIT ?", (WRONG_SHOWN,)
    )
    return build(runlog.path, stats, rows, stops, shadow, [WrongReplay(*w) for w in wrong])


def build(
    log: Path,
    stats: Stats | None,
    rows: list[tuple[float, str, str | None, int, int, int]],
    stops: list[tuple[str | None, str, int]],
    shadow: list[tuple[str, int, int]],
    wrong_replays: list[WrongReplay],
) -> Report:
    """The report from the log's rows (pure): ``rows`` are ``(at, source, skill, ok, requests, tokens)``
    in time order, ``stops`` ``(skill, handover, count)``, ``shadow`` ``(skill, checked, wrong)``."""
    overall = stats.overall if stats is not None else _zero(None)
    per = {s.name: s for s in stats.skills} if stats is not None else {}
    # a hit saves what RunLog.stats() estimates for its skill: the same figures as `skillforge stats`
    per_hit = {n: (s.requests_saved / s.hits, s.tokens_saved / s.hits) for n, s in per.items() if s.hits}
    step, periods = _periods(rows, per_hit)
    why: dict[str, Counter[str]] = {}
    for skill, handover, n in stops:
        for name in _names(skill):
            why.setdefault(name, Counter())[_stop_reason(name, handover)] += n
    checked: dict[str, tuple[int, int]] = {}
    for skill, n, bad in shadow:
        for name in _names(skill):
            c, w = checked.get(name, (0, 0))
            checked[name] = (c + n, w + (bad or 0))
    names = sorted(set(per) | set(why) | set(checked))
    skills = [
        SkillReport(
            stats=per.get(name) or _zero(name),
            stops=sorted(why.get(name, Counter()).items(), key=lambda kv: (-kv[1], kv[0])),
            shadow_checked=checked.get(name, (0, 0))[0],
            wrong=checked.get(name, (0, 0))[1],
        )
        for name in names
    ]
    skills.sort(key=lambda s: (-s.stats.solves, s.name))  # the busiest first
    return Report(
        log=log, overall=overall, step=step, periods=periods, skills=skills,
        shadow_checked=sum(n for _s, n, _w in shadow), wrong=sum(w or 0 for _s, _n, w in shadow),
        wrong_replays=wrong_replays,
    )


def _names(skill: str | None) -> list[str]:
    """The skills of a row: a message served by composing skills names each (``a + b``)."""
    return skill.split(" + ") if skill else []


def _stop_reason(name: str, handover: str) -> str:
    """Why ``name`` stopped, without the ``guard failed in NAME:`` its own row already says."""
    return re.sub(rf"^guard failed in {re.escape(name)}: ", "", handover)


def _zero(name: str | None) -> SkillStats:
    return SkillStats(name, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, None)


def _step(span: float) -> float:
    """The finest period of ``_STEPS`` that covers ``span`` seconds in at most ``PERIODS`` periods."""
    for step in _STEPS:
        if span < step * PERIODS:
            return step
    return math.ceil(span / PERIODS / 86400) * 86400


def _periods(
    rows: list[tuple[float, str, str | None, int, int, int]], per_hit: dict[str, tuple[float, float]]
) -> tuple[float, list[Period]]:
    """The solves in periods of time from the first to the last, empty periods included."""
    if not rows:
        return _STEPS[0], []
    first, last = rows[0][0], rows[-1][0]
    step = _step(last - first)
    origin = _index(first, step)  # periods are numbered from the epoch: a period's start is a multiple of step
    count = _index(last, step) - origin + 1
    tallies = [Counter() for _ in range(count)]  # type: ignore[var-annotated]
    for at, source, skill, ok, requests, tokens in rows:
        t = tallies[max(0, min(_index(at, step) - origin, count - 1))]
        kind = "failed" if not ok else "hits" if source == "skill" else "handovers" if source == "skill+agent" else "agent"
        t[kind] += 1
        t["requests"] += requests
        t["tokens"] += tokens
        if kind == "hits":
            for name in _names(skill):
                saved_req, saved_tok = per_hit.get(name, (0.0, 0.0))
                t["requests_saved"] += saved_req
                t["tokens_saved"] += saved_tok
    return step, [Period(start=round((origin + i) * step, 3), **t) for i, t in enumerate(tallies)]


def _index(at: float, step: float) -> int:
    """The period ``at`` falls in, counted from the epoch; a time on a period's edge (to within the
    precision of a float of today's times, ~1e-6 s) starts that period."""
    return math.floor(at / step + 1e-5)


# --- rendering ------------------------------------------------------------------------------------


def render(report: Report) -> str:
    """The page: ``templates/report.html.j2`` with the charts inline (SVG, no script)."""
    import jinja2

    from ._codegen import _templates_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_templates_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["when"] = _when
    env.filters["num"] = lambda v: f"{v:,.0f}"
    charts = {} if report.empty else _charts(report)
    return env.get_template("report.html.j2").render(
        r=report, o=report.overall, charts=charts, labels=LABELS, colours=COLOURS,
        hit_rate=report.overall.hits / report.overall.solves if report.overall.solves else 0.0,
        top=TOP_SKILLS, wrong_shown=WRONG_SHOWN,
    )


def write(runlog: RunLog, path: Path) -> Report:
    """Write the page of ``runlog`` to ``path``; the report it shows."""
    report = gather(runlog)
    page = render(report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return report


def _when(at: float | None, step: float = 60) -> str:
    """``at`` in UTC, to the precision of ``step`` seconds."""
    if at is None:
        return "-"
    if step >= 86400:
        return time.strftime("%Y-%m-%d", time.gmtime(at))
    shown = time.strftime("%Y-%m-%d %H:%M" if step >= 60 else "%Y-%m-%d %H:%M:%S", time.gmtime(at))
    if step < 1:
        shown += f".{int((at % 1) * 10 + 1e-4)}"  # the period's tenth of a second (a start, not rounded up)
    return shown + " UTC"


def _charts(report: Report) -> dict[str, Any]:
    """Each chart as an inline ``<svg>`` element (markup)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        raise UserError(f"skillforge report draws its charts with matplotlib ({e}): pip install 'skillforge[report]'") from e
    from markupsafe import Markup

    out = {}
    o = report.overall
    usage = o.llm_calls or o.tokens or o.requests_saved or o.tokens_saved  # else nothing to draw: the note says why
    for name, draw, label in (
        ("solves", _draw_solves, "Solves per period of time, by how they were served"),
        ("savings", _draw_savings, "Model requests and tokens made and saved, cumulative"),
        ("skills", _draw_skills, "Solves per skill, by how they were served"),
    ):
        if name == "savings" and not usage:
            continue
        fig = draw(Figure, report)
        out[name] = Markup(_svg(fig, name, label))  # matplotlib's own SVG; every text in it is escaped
    return out


def _svg(fig: Any, name: str, label: str) -> str:
    """``fig`` as an ``<svg>`` element to put in the page: same bytes for the same figure, text as text,
    sized by the page (its viewBox keeps the proportions)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"skillforge-{name}", "svg.id": f"chart-{name}"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    svg = text[text.index("<svg"):]
    head, rest = svg.split(">", 1)
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    label = label.replace('"', "&quot;")
    return f'{head} class="chart" role="img" aria-label="{label}">{rest}'


def _ticks(ax: Any, report: Report) -> None:
    """Time labels under the periods: at most 8, without the date when every period is of one day."""
    from matplotlib.ticker import MaxNLocator

    n = len(report.periods)
    every = max(1, math.ceil(n / 8))
    positions = list(range(0, n, every))
    labels = [_when(report.periods[i].start, report.step).removesuffix(" UTC") for i in positions]
    if _one_day(report):
        labels = [label.split(" ", 1)[1] for label in labels]
    ax.set_xticks(positions, labels)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    for t in ax.get_xticklabels():
        t.set_horizontalalignment("right")
    ax.set_xlim(-0.6, n - 0.4)


def _one_day(report: Report) -> str | None:
    """The UTC day every period of ``report`` is in, if they are all in one and shorter than a day."""
    if report.step >= 86400 or not report.periods:
        return None
    first, last = (time.strftime("%Y-%m-%d", time.gmtime(p.start)) for p in (report.periods[0], report.periods[-1]))
    return first if first == last else None


def _style(ax: Any) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)


def _draw_solves(Figure: Any, report: Report) -> Any:
    fig = Figure(figsize=(9, 3.4), layout="constrained")
    ax = fig.add_subplot()
    xs = list(range(len(report.periods)))
    bottom = [0] * len(xs)
    for kind in ("hits", "handovers", "agent", "failed"):
        values = [getattr(p, kind) for p in report.periods]
        if not any(values):
            continue
        ax.bar(xs, values, bottom=bottom, color=COLOURS[kind], label=LABELS[kind], width=0.8)
        bottom = [b + v for b, v in zip(bottom, values)]
    _ticks(ax, report)
    ax.set_ylabel("solves")
    day = _one_day(report)
    ax.set_title(f"Solves per {_period_name(report.step)} (UTC{', ' + day if day else ''})", loc="left", fontsize=10)
    ax.legend(loc="upper left", fontsize=8, frameon=False, ncols=4)
    ax.set_ylim(0, max(bottom) * 1.25 + 1)
    _style(ax)
    return fig


def _draw_savings(Figure: Any, report: Report) -> Any:
    fig = Figure(figsize=(9, 3.2), layout="constrained")
    xs = list(range(len(report.periods)))
    for i, (made, saved, what) in enumerate((("requests", "requests_saved", "model requests"), ("tokens", "tokens_saved", "tokens"))):
        ax = fig.add_subplot(1, 2, i + 1)
        ax.plot(xs, _cumulative(report, made), color=COLOURS["agent"], label=f"{what} made", marker="o", markersize=3)
        ax.plot(xs, _cumulative(report, saved), color=COLOURS["hits"], label=f"{what} saved (estimated)",
                linestyle="--", marker="o", markersize=3)
        _ticks(ax, report)  # whole numbers on y too
        ax.set_title(what.capitalize() + ", cumulative", loc="left", fontsize=10)
        ax.legend(loc="upper left", fontsize=8, frameon=False)
        ax.set_ylim(bottom=0)
        _style(ax)
    return fig


def _draw_skills(Figure: Any, report: Report) -> Any:
    shown = report.skills[:TOP_SKILLS][::-1]  # the busiest at the top
    fig = Figure(figsize=(9, 1.1 + 0.28 * max(len(shown), 1)), layout="constrained")
    ax = fig.add_subplot()
    ys = list(range(len(shown)))
    left = [0] * len(ys)
    for kind, attr in (("hits", "hits"), ("handovers", "handovers"), ("agent", "agent")):
        values = [getattr(s.stats, attr) for s in shown]
        if not any(values):
            continue
        ax.barh(ys, values, left=left, color=COLOURS[kind], label=LABELS[kind] if kind != "agent" else "agent runs that taught it",
                height=0.7)
        left = [a + v for a, v in zip(left, values)]
    from matplotlib.ticker import MaxNLocator

    ax.set_yticks(ys, [s.name for s in shown], fontsize=8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("solves")
    fig.legend(loc="outside upper left", fontsize=8, frameon=False, ncols=3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    return fig


def _cumulative(report: Report, attr: str) -> list[float]:
    total, out = 0.0, []
    for p in report.periods:
        total += getattr(p, attr)
        out.append(total)
    return out


def _period_name(step: float) -> str:
    names = {0.1: "tenth of a second", 0.5: "half second", 1: "second", 5: "5 seconds", 15: "15 seconds", 60: "minute", 300: "5 minutes", 900: "15 minutes", 3600: "hour", 3 * 3600: "3 hours", 6 * 3600: "6 hours",
             86400: "day", 7 * 86400: "week", 30 * 86400: "30 days"}
    return names.get(step, f"{step // 86400:.0f} days")
