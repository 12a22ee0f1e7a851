"""`skillforge report`: one self-contained HTML page of the run log, checked as data, as HTML, from the
command line, and as a person sees it in a real headless browser."""

from __future__ import annotations

import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillforge import Forge, Result, RunLogError
from skillforge._report import PERIODS, Period, build, gather, render, write
from skillforge._runlog import RunLog, SkillStats, Stats
from skillforge.cli import cli

from tests.browser import Browser, find_chromium, in_ci

REPO = Path(__file__).resolve().parent.parent
WHERE_GUARD = "order['status'] is 'processing', as when learned"  # what a delivered order (#1001) fails
TRICKY = "<script>alert('x')</script> & \"quotes\""


@pytest.fixture
def logged(desk_db: Path, make_forge) -> Forge:
    """A forge whose run log holds real solves: two skills learned, hits, handovers, and shadow verdicts."""
    forge = make_forge()
    results = [forge.solve(t) for t in (
        "Where is my order #1002?",  # agent: learns where_order
        "Where is my order #1010?",  # hit
        "Where is my order #1015?",  # hit
        "Where is my order #1001?",  # delivered: where_order's guard stops it, the agent finishes
        "Refund order #1004",  # agent: learns refund_order
        "Refund order #1005",  # a total of another scale: refund_order's guard stops it
    )]
    assert [r.source for r in results] == ["agent", "skill", "skill", "skill+agent", "agent", "skill+agent"]
    assert results[3].handover == f"guard failed in where_order: {WHERE_GUARD}"
    # a shadow run's verdicts: a replay like the agent alone, one that was not (say), and an agent run (not a replay)
    assert forge.runlog.record_shadow(results[1], wrong=False)
    assert forge.runlog.record_shadow(results[2], wrong=True, detail=TRICKY)
    assert not forge.runlog.record_shadow(results[0], wrong=True)
    return forge


def test_gather_reads_what_the_solves_did(logged: Forge) -> None:
    report = gather(logged.runlog)
    stats = logged.stats()
    assert report.overall == stats.overall and not report.empty
    assert (report.overall.solves, report.overall.hits, report.overall.handovers, report.overall.agent) == (6, 2, 2, 2)
    # the periods add up to the totals, the estimated savings to what `skillforge stats` says
    assert sum(p.hits for p in report.periods) == 2 and sum(p.handovers for p in report.periods) == 2
    assert sum(p.agent for p in report.periods) == 2 and sum(p.failed for p in report.periods) == 0
    assert sum(p.requests for p in report.periods) == stats.overall.llm_calls > 0
    assert sum(p.tokens for p in report.periods) == stats.overall.tokens > 0
    assert sum(p.requests_saved for p in report.periods) == pytest.approx(stats.overall.requests_saved) and stats.overall.requests_saved > 0
    assert report.first is not None and report.first <= report.periods[-1].start < report.last  # type: ignore[operator]
    # each skill: its stats, the guard that stopped it (without "guard failed in NAME"), its shadow verdicts
    skills = {s.name: s for s in report.skills}
    assert set(skills) == {"where_order", "refund_order"}
    where, refund = skills["where_order"], skills["refund_order"]
    assert where.stats == next(s for s in stats.skills if s.name == "where_order")
    assert where.stops == [(WHERE_GUARD, 1)]
    assert len(refund.stops) == 1 and refund.stops[0][1] == 1 and "guard failed" not in refund.stops[0][0]
    assert (where.shadow_checked, where.wrong) == (2, 1) and (refund.shadow_checked, refund.wrong) == (0, 0)
    assert (report.shadow_checked, report.wrong) == (2, 1)
    (wrong,) = report.wrong_replays
    assert (wrong.skill, wrong.source, wrong.task, wrong.detail) == ("where_order", "skill", "Where is my order #1015?", TRICKY)


def test_an_empty_or_missing_log_is_an_empty_report_and_nothing_is_created(tmp_path: Path) -> None:
    missing = RunLog(tmp_path / "state" / "runs.sqlite3")
    report = gather(missing)
    assert report.empty and report.periods == [] and report.skills == [] and report.shadow_checked == 0
    assert not (tmp_path / "state").exists()  # a report reads; it makes no state directory
    page = render(report)
    assert "No solves recorded yet" in page and "skillforge demo --dir demo" in page and "<svg" not in page
    made = RunLog(tmp_path / "made.sqlite3")
    made.read("SELECT 1")  # an existing log with no rows
    assert gather(made).empty


def test_a_file_that_is_not_a_run_log_says_how_to_fix_it(tmp_path: Path) -> None:
    bad = tmp_path / "runs.sqlite3"
    bad.write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(RunLogError, match="delete it and a new one is started"):
        gather(RunLog(bad))
    hit = Result(task="Where is my order #1010?", output="Order 1010 is processing.", source="skill", skill="where_order")
    with pytest.raises(RunLogError, match="could not record a shadow verdict"):
        RunLog(bad).record_shadow(hit, wrong=False)


def test_an_old_log_gains_the_shadow_table_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    conn = sqlite3.connect(path)  # a log written before the shadow table existed
    conn.execute("CREATE TABLE hits (at REAL NOT NULL, task TEXT NOT NULL, skill TEXT NOT NULL, n_calls INTEGER NOT NULL,"
                 " duration REAL NOT NULL)")
    conn.execute("INSERT INTO hits VALUES (1700000000.0, 'Where is my order #1010?', 'where_order', 1, 0.001)")
    conn.commit()
    conn.close()
    report = gather(RunLog(path))
    assert report.overall.hits == 1 and report.shadow_checked == 0
    assert [s.name for s in report.skills] == ["where_order"]


def test_periods_cover_the_span_in_at_most_PERIODS_steps_with_empty_ones_kept() -> None:
    t0 = 1_699_999_800.0  # a multiple of 300: the first period starts there
    rows = [  # (at, source, skill, ok, requests, tokens)
        (t0 + 10, "agent", None, 1, 3, 300),
        (t0 + 20, "skill", "a", 1, 0, 0),
        (t0 + 3600, "skill", "a + b", 1, 0, 0),  # a message served by composing two skills: a hit of each
        (t0 + 3601, "skill", "a", 0, 0, 0),  # a hit that failed
        (t0 + 3 * 3600, "skill+agent", "b", 1, 1, 100),
    ]

    stats = Stats(  # what each hit saves comes from RunLog.stats(): a's 6 requests over 2 hits, b's 2 over 1
        overall=SkillStats(None, 5, 2, 1, 1, 1, 4, 400, 0.0, 0.0, None),
        skills=[SkillStats("a", 3, 2, 0, 0, 1, 0, 0, 6.0, 600.0, 1.0), SkillStats("b", 2, 1, 0, 1, 0, 1, 100, 2.0, 50.0, 1.0)],
    )
    report = build(Path("x"), stats, rows, [("b", "guard failed in b: x is 1, as when learned", 2)], [], [])
    assert report.step == 300 and len(report.periods) == 37 <= PERIODS  # 3 hours in 5-minute periods, the empty ones too
    first, hour, last = report.periods[0], report.periods[12], report.periods[-1]
    assert (first.start, first.agent, first.hits, first.requests, first.tokens) == (t0, 1, 1, 3, 300)
    assert (hour.hits, hour.failed) == (1, 1)
    assert hour.requests_saved == pytest.approx(3.0 + 2.0)  # a hit of a and of b
    assert first.requests_saved == pytest.approx(3.0)
    assert (last.handovers, last.start) == (1, t0 + 3 * 3600)
    assert all(p == Period(start=p.start) for p in report.periods[1:12])
    assert {s.name: s.stops for s in report.skills} == {"a": [], "b": [("x is 1, as when learned", 2)]}
    # a burst of solves within two seconds is drawn in tenths of a second
    burst = build(Path("x"), None, [(t0 + i / 10, "agent", None, 1, 1, 1) for i in range(16)], [], [], [])
    assert burst.step == 0.1 and len(burst.periods) == 16


def test_the_page_shows_the_figures_tables_and_charts_and_escapes_what_it_quotes(logged: Forge, tmp_path: Path) -> None:
    report = gather(logged.runlog)
    page = render(report)
    assert page == render(report)  # the same log gives the same bytes: no timestamps or random ids
    assert "<script" not in page.lower()  # no script of its own, and what it quotes is quoted, never run:
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &#34;quotes&#34;" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # loads nothing: self-contained, offline
    charts = re.findall(r'<svg[^>]* id="(chart-\w+)"[^>]*class="chart"', page)
    assert charts == ["chart-solves", "chart-savings", "chart-skills"]
    rows = re.findall(r"<tr>\s*<td><code>(\w+)</code></td>\s*((?:<td[^>]*>.*?</td>\s*)+)</tr>", page, re.S)
    cells = {name: [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tds, re.S)] for name, tds in rows}
    assert set(cells) == {"where_order", "refund_order"}
    where = cells["where_order"]
    assert where[:4] == ["2", "1", "1", "0"]  # hits, agent runs, handovers, failed
    assert where[7] == "1 of 2"  # wrong in shadow
    assert WHERE_GUARD.replace("'", "&#39;") + " (1)" in where[8]
    assert cells["refund_order"][0] == "0" and cells["refund_order"][7] == "-"
    assert "2 tasks served by skills were checked against the agent alone" in page and "1 wrong replay<" in page
    out = write(logged.runlog, tmp_path / "deep" / "report.html")
    assert out == report and (tmp_path / "deep" / "report.html").read_text(encoding="utf-8") == page


def test_a_log_without_shadow_verdicts_says_none_were_recorded(desk_db: Path, make_forge) -> None:
    forge = make_forge()
    forge.solve("Where is my order #1002?")
    page = render(gather(forge.runlog))
    assert 'id="no-shadow"' in page and "No shadow runs recorded" in page and "record_shadow" in page
    assert 'id="wrong-table"' not in page


def test_a_shadow_run_records_its_verdicts_for_the_report(tmp_path: Path) -> None:
    from bench import shadow

    with pytest.raises(ValueError, match="pass a workdir"):
        shadow.run("helpdesk", days=1, run_log=True)
    result = shadow.run("helpdesk", days=1, workdir=tmp_path / "shadow", run_log=True)
    report = gather(RunLog(tmp_path / "shadow" / "state" / "runs.sqlite3"))
    assert report.overall.solves == result.tasks
    assert report.shadow_checked == result.served + result.handed_over > 0
    assert report.wrong == len(result.wrong_replays) == 0
    assert sum(s.shadow_checked for s in report.skills) >= report.shadow_checked
    # the workload's agent is plain Python and reports no model usage: the page says so instead of a flat chart
    page = render(report)
    assert 'id="no-usage"' in page and 'id="chart-savings"' not in page and page.count('class="chart"') == 2
    assert 'id="no-shadow"' not in page and f"{report.shadow_checked} tasks served by skills were checked" in page


@pytest.fixture
def app(tmp_path: Path, desk_db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user app (module ``myapp``) whose forge holds the desk tools and a copy of the committed skills."""
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    (tmp_path / "myapp.py").write_text(
        "from skillforge import Forge\nfrom skillforge.demo import desk\n"
        f"desk.open_desk({str(desk_db)!r})\n"
        f"forge = Forge(skills_dir={str(tmp_path / 'skills')!r}, state_dir={str(tmp_path / 'state')!r}, tools=desk.TOOLS)\n"
        f"unlogged = Forge(skills_dir={str(tmp_path / 'skills')!r}, state_dir={str(tmp_path / 'state2')!r}, run_log=False)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "myapp", raising=False)
    return tmp_path


def test_cli_report_writes_the_page_of_the_forges_run_log(app: Path) -> None:
    runner = CliRunner()
    empty = runner.invoke(cli, ["report", "--app", "myapp:forge", "-o", "empty.html"])
    assert empty.exit_code == 0, empty.output
    assert "holds no solves yet" in empty.output and "No solves recorded yet" in (app / "empty.html").read_text()
    for order in ("1010", "1015"):
        assert "source: skill" in runner.invoke(cli, ["solve", f"Where is my order #{order}?", "--app", "myapp:forge"]).output
    out = runner.invoke(cli, ["report", "--app", "myapp:forge"])
    assert out.exit_code == 0, out.output
    assert "wrote report.html: 2 solves, 2 served by skills, 1 skills" in out.output
    page = (app / "report.html").read_text(encoding="utf-8")
    assert "<code>where_order</code>" in page and 'id="chart-skills"' in page and 'id="chart-solves"' in page
    assert 'id="no-usage"' in page  # two hits of committed skills: no request made, none to estimate a saving from
    # the same log read by its path
    by_path = runner.invoke(cli, ["report", "--log", str(app / "state" / "runs.sqlite3"), "-o", "again.html"])
    assert by_path.exit_code == 0, by_path.output
    assert (app / "again.html").read_text(encoding="utf-8") == page


def test_cli_report_says_how_to_fix_a_wrong_request(app: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["report", "--log", "nowhere.sqlite3"])
    assert missing.exit_code == 1 and "no run log at nowhere.sqlite3" in missing.output and not (app / "report.html").exists()
    both = runner.invoke(cli, ["report", "--log", "x.sqlite3", "--app", "myapp:forge"])
    assert both.exit_code == 2 and "not both" in both.output
    unlogged = runner.invoke(cli, ["report", "--app", "myapp:unlogged"])
    assert unlogged.exit_code == 1 and "keeps no run log (run_log=False)" in unlogged.output
    (app / "junk.sqlite3").write_bytes(b"not a database" * 100)
    junk = runner.invoke(cli, ["report", "--log", "junk.sqlite3"])
    assert junk.exit_code == 1 and "cannot be read" in junk.output and "delete it" in junk.output


# --- in a real browser -----------------------------------------------------------------------------

SEEN = """(() => {
  const size = e => { const r = e.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; };
  const shown = e => { const s = getComputedStyle(e); const [w, h] = size(e); return w > 0 && h > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const table = id => { const t = document.getElementById(id); return t && shown(t) ? [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.innerText.trim())) : null; };
  return {
    title: document.title,
    scripts: document.scripts.length,
    heading: document.querySelector('h1').innerText,
    charts: [...document.querySelectorAll('svg.chart')].map(e => ({
      id: e.id, size: size(e), shown: shown(e), label: e.getAttribute('aria-label'),
      marks: [...e.querySelectorAll('path')].filter(p => { const [w, h] = size(p); return w > 0 && h > 0; }).length,
      text: [...e.querySelectorAll('text')].map(t => t.textContent).join(' '),
    })),
    skills: table('skills-table'),
    wrong: table('wrong-table'),
    cards: [...document.querySelectorAll('.card')].map(c => c.innerText.replace(/\\s+/g, ' ').trim()),
    empty: document.getElementById('empty') ? document.getElementById('empty').innerText : null,
    noShadow: document.getElementById('no-shadow') ? shown(document.getElementById('no-shadow')) : false,
    sideways: document.documentElement.scrollWidth > window.innerWidth,
  };
})()"""


@pytest.fixture(scope="module")
def browser():
    executable, why = find_chromium()
    if executable is None:
        if in_ci():
            pytest.fail(f"CI must run the browser tests, and {why} (.ci/run installs it)")
        pytest.skip(why)
    with Browser(executable, width=1280, height=900) as b:
        yield b


def test_a_person_sees_the_charts_and_tables_in_a_browser(logged: Forge, tmp_path: Path, browser: Browser) -> None:
    path = tmp_path / "report.html"
    write(logged.runlog, path)
    page = browser.open(path.as_uri(), SEEN)
    (tmp_path / "report.png").write_bytes(page.screenshot)
    seen = page.seen
    assert page.errors == [] and seen["scripts"] == 0  # no script, so no script error; nothing failed to load
    assert page.requests == [path.as_uri()]  # the page loaded nothing else: it works offline
    assert seen["title"] == "skillforge report" and seen["heading"] == "skillforge report"
    assert [c["id"] for c in seen["charts"]] == ["chart-solves", "chart-savings", "chart-skills"]
    for chart in seen["charts"]:  # drawn, at the page's width, with its bars or lines
        assert chart["shown"] and chart["size"][0] >= 1000 and chart["size"][1] >= 120 and chart["marks"] >= 5, chart
    by_id = {c["id"]: c for c in seen["charts"]}
    assert "where_order" in by_id["chart-skills"]["text"] and "refund_order" in by_id["chart-skills"]["text"]
    assert "served by a skill" in by_id["chart-solves"]["text"] and "model requests made" in by_id["chart-savings"]["text"]
    assert sorted(row[0] for row in seen["skills"]) == ["refund_order", "where_order"]
    where = next(row for row in seen["skills"] if row[0] == "where_order")
    assert where[1:5] == ["2", "1", "1", "0"] and where[8] == "1 of 2" and WHERE_GUARD + " (1)" in where[9]
    assert seen["wrong"] == [[seen["wrong"][0][0], "where_order", "skill", "Where is my order #1015?", TRICKY]]
    assert "6 solves" in seen["cards"] and "2 served by a skill (33%)" in seen["cards"]
    assert "1 of 2 wrong replays found by shadow runs" in seen["cards"]
    assert not seen["sideways"] and seen["empty"] is None and not seen["noShadow"]
    assert page.screenshot.startswith(b"\x89PNG") and len(page.screenshot) > 20_000


def test_a_person_sees_an_empty_log_explained_in_a_browser(tmp_path: Path, browser: Browser) -> None:
    path = tmp_path / "empty.html"
    write(RunLog(tmp_path / "state" / "runs.sqlite3"), path)
    page = browser.open(path.as_uri(), SEEN)
    seen = page.seen
    assert page.errors == [] and seen["charts"] == [] and seen["skills"] is None
    assert "No solves recorded yet" in seen["empty"] and "skillforge report --log demo/state/runs.sqlite3" in seen["empty"]
    assert seen["noShadow"] and not seen["sideways"]


def test_the_browser_check_catches_a_script_error_and_a_request(tmp_path: Path, browser: Browser) -> None:
    """The checks above can fail: a page with a script error and an outside request is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><title>t</title><h1>x</h1><script>console.error("boom"); nope();</script>'
                   '<img src="http://127.0.0.1:9/x.png">')
    page = browser.open(bad.as_uri(), SEEN)
    assert len(page.exceptions) == 1 and "nope is not defined" in str(page.exceptions[0])
    assert page.console_errors and page.console_errors[0]["args"][0]["value"] == "boom"
    assert "http://127.0.0.1:9/x.png" in page.requests and page.errors != []
    assert page.seen["scripts"] == 1


def test_without_matplotlib_the_report_says_what_to_install(logged: Forge, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillforge import UserError

    report = gather(logged.runlog)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if it were not installed: importing it fails
    with pytest.raises(UserError, match=r"pip install 'skillforge\[report\]'"):
        render(report)
    assert "No solves recorded yet" in render(gather(RunLog(Path(logged.state_dir) / "none.sqlite3")))  # no chart to draw
