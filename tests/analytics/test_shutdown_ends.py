"""Which controlled shutdown a broker's end line ends: the latest one requested by then while it is open (the
broker not registered again since); the clock slack that lets a line be stamped before its request only for a
line no earlier shutdown can take. And our brokers' "Not retrying controlled shutdown (…)" is an ``unclean`` end."""

from __future__ import annotations

import pytest
from tests.analytics.test_controller_timeline import _tenure
from tests.analytics.test_transform import T0, at

from zkcontroller.analytics.controller_timeline import broker_failures, classify, shutdown_spans
from zkcontroller.analytics.kafka_log_parser import KafkaLogParser


def r(kind: str, ms: int, line: int, **fields: object) -> dict[str, object]:
    """A membership row as the job collects it."""
    return {"cluster": "c", "ts_ms": T0 + ms, "kind": kind, "broker_id": None, "brokers": None, "phase": None,
            "source_file": "f.log", "line_number": line, **fields}


# The demo's broker 1: stopped, "succeeded" 14 ms later, registered again, stopped again 167 ms after it succeeded.
STOP_START_STOP = [r("controlled_shutdown", 1309, 1, broker_id=1),
                   r("controlled_shutdown_end", 1323, 2, broker_id=1, phase="succeeded"),
                   r("broker_registered", 1358, 3, brokers=[1]), r("controlled_shutdown", 1476, 4, broker_id=1)]
# (broker, requested at, attempts, outcome, ended at), ms after T0
STOP_START_STOP_SPANS = [(1, 1309, 1, "succeeded", 1323), (1, 1476, 1, None, None)]


def _spans(membership: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(s["broker_id"], int(s["first_ms"]) - T0, s["attempts"], s["outcome"],
             None if s["ended_ms"] is None else int(s["ended_ms"]) - T0) for s in shutdown_spans(membership)]


def test_a_line_is_of_the_open_shutdown_before_it_not_the_one_requested_just_after() -> None:
    assert _spans(STOP_START_STOP) == STOP_START_STOP_SPANS


def test_a_registration_closes_a_shutdown_and_bounds_the_slack_before_the_next() -> None:
    """Broker 2 registered again after its stop at 0: its "succeeded" at 200 is of a stop whose request was not
    read. Broker 3's "failed" at 20,000 is 500 ms before a request, but it registered in between: not that one's.
    Broker 4's "succeeded" 300 ms before its only request (its clock behind the controller's) is still that one's."""
    membership = [r("controlled_shutdown", 0, 1, broker_id=2), r("broker_registered", 100, 2, brokers=[2]),
                  r("controlled_shutdown_end", 200, 3, broker_id=2, phase="succeeded"),
                  r("controlled_shutdown_end", 20_000, 4, broker_id=3, phase="failed"),
                  r("broker_change", 20_100, 5, brokers=[], added_brokers=[3], live_brokers=[3]),
                  r("controlled_shutdown", 20_500, 6, broker_id=3),
                  r("controlled_shutdown_end", 29_700, 7, broker_id=4, phase="succeeded"),
                  r("controlled_shutdown", 30_000, 8, broker_id=4)]
    assert _spans(membership) == [(2, 0, 1, None, None), (2, 200, 0, "succeeded", 200),
                                  (3, 20_000, 0, "failed", 20_000), (3, 20_500, 1, None, None),
                                  (4, 30_000, 1, "succeeded", 29_700)]


@pytest.mark.spark
def test_the_table_matches_as_the_driver_does(spark) -> None:
    from tests.analytics.test_admin_tables import _rows
    from tests.analytics.test_transform import events

    from zkcontroller.analytics import admin_tables

    rows = [{k: v for k, v in row.items() if k not in ("ts_ms", "cluster", "source_file", "line_number")}
            | {"ms": int(row["ts_ms"]) - T0} for row in STOP_START_STOP]
    table = _rows(admin_tables.controlled_shutdowns(events(spark, rows)))
    assert [(t["broker_id"], t["requested_at"], t["attempts"], t["outcome"], t["ended_at"]) for t in table] == [
        (b, at(first), n, outcome, None if end is None else at(end)) for b, first, n, outcome, end in
        STOP_START_STOP_SPANS]


GAVE_UP = ("[2026-11-29 08:37:31,452] INFO [KafkaServer id=1] Not retrying controlled shutdown (broker 1 is the "
           "last one running, so its leadership has nowhere to go); proceeding to do an unclean shutdown "
           "(kafka.server.KafkaServer)")


def test_our_brokers_give_up_line_is_an_unclean_end_and_no_failure() -> None:
    """A teardown's broker that stops without retrying (retrying could not help) ended its controlled shutdown
    uncleanly, on purpose: the table's outcome says so (it was blank), and its leaving is no broker failure."""
    parsed = KafkaLogParser().parse_line(1, GAVE_UP)
    assert (parsed.kind, parsed.fields["broker_id"], parsed.fields["phase"]) == (
        "controlled_shutdown_end", 1, "unclean")
    reason = GAVE_UP.replace("broker 1 is the last one running, so its leadership has nowhere to go",
                             "the controller, broker 2, was killed and cannot answer; no other broker becomes "
                             "controller until its session expires")
    assert KafkaLogParser().parse_line(1, reason).fields["phase"] == "unclean"
    tenures = [_tenure(1, 2, T0 - 1000, T0 + 200_000)]
    classify(tenures)
    membership = [r("controlled_shutdown", 0, 1, broker_id=1),
                  r("controlled_shutdown_end", 3, 2, broker_id=1, phase="unclean"),
                  r("broker_change", 5, 3, brokers=[1], added_brokers=[], live_brokers=[2])]
    assert _spans(membership) == [(1, 0, 1, "unclean", 3)]
    assert broker_failures(membership, tenures) == []
