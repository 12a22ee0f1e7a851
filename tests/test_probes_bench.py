"""bench.probes: phrasings a stream never used, shadowed after the stream is learned."""

from __future__ import annotations

import pytest

from bench.probes import PROBES, probe


def test_probes_after_a_day_of_the_retail_stream_replay_nothing_wrongly() -> None:
    report = probe("retail", days=1, per=1)
    assert report.probes == 6 * 7 + 3 * 7  # six cancels with seven reasons each, seven other asks three times
    assert report.wrong == [], report.render()
    assert "WRONG REPLAYS:      0" in report.render()


def test_a_workload_without_probes_is_refused_with_the_ones_that_have_them() -> None:
    with pytest.raises(ValueError, match="probes exist for helpdesk, retail, storefront"):
        probe("demo", days=1)
    assert sorted(PROBES) == ["helpdesk", "retail", "storefront"]
