"""A controller epoch past Int.MaxValue wraps to Int.MinValue (Kafka's Int, written -2147483648): the parsers read it
and the tenures keep it, ordered as a number (no wrap-aware ordering: the election after a wrap is a new life)."""

from __future__ import annotations

from tests.analytics.test_controller_timeline import _line
from tests.analytics.test_transform import T0, events

from zkcontroller.analytics import job
from zkcontroller.analytics.controller_timeline import build_tenures, life_starts

MIN_INT, MAX_INT = -(2**31), 2**31 - 1


def test_tenures_after_the_wrap_are_tenures_and_no_reset() -> None:
    """A log that begins after the wrap: two failovers with negative epochs, no epoch reset at its first line."""
    lifecycle = [_line(0, "controller_elected", 1, MIN_INT, 1), _line(100, "controller_ready", 1, MIN_INT, 2),
                 _line(60_000, "controller_elected", 2, MIN_INT + 1, 3)]
    starts = life_starts(lifecycle)
    tenures = build_tenures(lifecycle, [], starts)
    assert starts == {}
    assert [(t.controller_id, t.controller_epoch, t.life) for t in tenures] == [(1, MIN_INT, 0), (2, MIN_INT + 1, 0)]


def test_the_wrap_itself_is_ordered_as_a_number() -> None:
    """Documented (docs/analytics.md): Int.MaxValue then Int.MinValue is read as an epoch gone back, a new life."""
    lifecycle = [_line(0, "controller_elected", 1, MAX_INT, 1), _line(60_000, "controller_elected", 2, MIN_INT, 2)]
    assert life_starts(lifecycle) == {"c": [60_000]}


def test_the_job_keeps_lines_of_a_negative_epoch(spark) -> None:
    """The activity summaries and stated runs the job collects keep a negative epoch (they kept only epochs > 0);
    epoch 0 (a broker that is not controller) is still left out."""
    rows = [dict(ms=0, kind="controller_ready", controller_id=1, controller_epoch=MIN_INT),
            dict(ms=10, kind="partition_state_change", controller_id=1, controller_epoch=MIN_INT, topic="t",
                 partition=0),
            dict(ms=20, kind="partition_state_change", controller_id=3, controller_epoch=0, topic="t", partition=0),
            dict(ms=30, kind="fetchers_stopped", controller_id=1, controller_epoch=MIN_INT, broker_id=2)]
    _, starts, activity, _ = job._tenure_rows(events(spark, rows))
    assert [(a["controller_id"], a["controller_epoch"], a["events"], a["first_ms"] - T0) for a in activity] == [
        (1, MIN_INT, 3, 0)]
    runs = job._collect(job._stated_runs(events(spark, rows)))
    assert [(r["controller_id"], r["controller_epoch"]) for r in runs] == [(1, MIN_INT)]
    assert starts == {}
