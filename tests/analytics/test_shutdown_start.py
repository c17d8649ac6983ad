"""The broker's own "Starting controlled shutdown" (``controlled_shutdown_started``): when a shutdown known only
from its server.log began, in the ``controlled_shutdowns`` table and the driver's spans (incidents) alike; the
controller's requests, where read, still say when and how many."""

from __future__ import annotations

from tests.analytics.test_transform import T0, at

from zkcontroller.analytics.controller_timeline import SHUTDOWN_START, shutdown_spans
from zkcontroller.analytics.timeline_tables import failure_windows

END = dict(kind="controlled_shutdown_end")
START = dict(kind=SHUTDOWN_START)
ROWS = [
    # broker 2: the controller's request (its clock) decides; the broker's start line 12 ms before changes nothing
    {**START, "ms": -12, "broker_id": 2}, dict(ms=0, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
    {**END, "ms": 20, "broker_id": 2, "phase": "succeeded"},
    # broker 5: server.log only, started 30 ms before it succeeded (choopong 1.1's sample: 27,765 then 27,795)
    {**START, "ms": 970, "broker_id": 5}, {**END, "ms": 1_000, "broker_id": 5, "phase": "succeeded"},
    # broker 6: started, every attempt failed 40 s later; a second stop with a start of its own
    {**START, "ms": 2_000, "broker_id": 6}, {**END, "ms": 42_000, "broker_id": 6, "phase": "failed"},
    {**START, "ms": 299_000, "broker_id": 6}, {**END, "ms": 300_000, "broker_id": 6, "phase": "succeeded"},
    # broker 7: a start more than SHUTDOWN_END_MS (120 s) before the line is not this stop's
    {**START, "ms": 10_000, "broker_id": 7}, {**END, "ms": 140_001, "broker_id": 7, "phase": "succeeded"},
    # broker 8: the start before its previous line began that one; the second line has none
    {**START, "ms": 100, "broker_id": 8}, {**END, "ms": 200, "broker_id": 8, "phase": "succeeded"},
    {**END, "ms": 5_000, "broker_id": 8, "phase": "succeeded"},
    # broker 9: started twice (killed during the first), the latest start is this stop's
    {**START, "ms": 10_000, "broker_id": 9}, {**START, "ms": 10_500, "broker_id": 9},
    {**END, "ms": 11_000, "broker_id": 9, "phase": "succeeded"},
    # broker 4: a start with no end line and no request: no row (nothing says it stopped)
    {**START, "ms": 50_000, "broker_id": 4},
]
EXPECTED = [  # broker, requested at, attempts, outcome, ended at, line number (of the requested-at line)
    (2, 0, 1, "succeeded", 20, 2),
    (5, 970, 0, "succeeded", 1_000, 4),
    (6, 2_000, 0, "failed", 42_000, 6), (6, 299_000, 0, "succeeded", 300_000, 8),
    (7, 140_001, 0, "succeeded", 140_001, 11),
    (8, 100, 0, "succeeded", 200, 12), (8, 5_000, 0, "succeeded", 5_000, 14),
    (9, 10_500, 0, "succeeded", 11_000, 16),
]


def _membership() -> list[dict[str, object]]:
    """``ROWS`` as the job collects membership rows (line numbers from 1, as ``events`` numbers them)."""
    return [{"cluster": "c", "source_file": "f.log", "line_number": n, "brokers": [], "broker_id": None,
             "phase": None, **{k: v for k, v in row.items() if k != "ms"}, "ts_ms": T0 + int(row["ms"])}
            for n, row in enumerate(ROWS, start=1)]


def test_the_driver_spans_begin_at_the_brokers_start_line() -> None:
    got = [(s["broker_id"], int(s["first_ms"]) - T0, s["attempts"], s["outcome"], int(s["ended_ms"]) - T0,
            s["row"]["line_number"]) for s in shutdown_spans(_membership())]
    assert got == EXPECTED


def test_a_start_line_is_no_membership_change_that_ends_a_failure_window() -> None:
    membership = [{"cluster": "c", "kind": SHUTDOWN_START, "ts_ms": 500, "broker_id": 3, "brokers": None}]
    failures = [{"cluster": "c", "broker_id": 2, "detected_ms": 0}]
    assert [w["until_ms"] for w in failure_windows(failures, membership, [], 60_000)] == [60_000]


def test_the_table_begins_server_log_only_stops_at_the_brokers_start_line(spark) -> None:
    from tests.analytics.test_admin_tables import _rows, _shutdown_incidents
    from tests.analytics.test_transform import events

    from zkcontroller.analytics import admin_tables

    table = _rows(admin_tables.controlled_shutdowns(events(spark, ROWS)))
    expected = [(b, at(first), n, outcome, at(end), line) for b, first, n, outcome, end, line in EXPECTED]
    assert [(r["broker_id"], r["requested_at"], r["attempts"], r["outcome"], r["ended_at"], r["line_number"])
            for r in table] == expected
    assert all(r["last_attempt_at"] is None and r["duration_ms"] is None for r in table if r["attempts"] == 0)
    incidents = [(b, when) for b, when, _ in _shutdown_incidents(spark, ROWS)]
    assert incidents == [(b, at(first)) for b, first, *_ in EXPECTED]
