"""The operations tables on a few inline events: deletions, reassignments, ISR changes, controlled shutdowns,
from our event-log kinds and from Kafka's own lines (as the parser maps them)."""

from __future__ import annotations

import pytest
from tests.analytics.test_transform import at, events

from zkcontroller.analytics.kafka_log_parser import KafkaLogParser

pytest.importorskip("pyspark")
from zkcontroller.analytics import admin_tables

pytestmark = pytest.mark.spark


def _rows(df) -> list[dict[str, object]]:
    return [r.asDict() for r in df.orderBy(*df.columns[:4]).collect()]


def test_a_deletion_halted_twice_then_completed_is_one_row_and_a_second_deletion_another(spark) -> None:
    rows = [
        dict(ms=0, kind="topic_deletion", topics="a,b", phase="queued", controller_epoch=3),
        dict(ms=5, kind="topic_deletion", topic="a", phase="started", controller_epoch=3),
        dict(ms=9, kind="topic_deletion", topics="a", phase="halted", deletion_reason="offline replicas"),
        dict(ms=50, kind="topic_deletion", topics="a", phase="halted", deletion_reason="replica deletion failure"),
        dict(ms=70, kind="topic_deletion", topic="a", phase="completed", controller_epoch=4),
        dict(ms=90, kind="topic_deletion", topic="a", phase="queued", controller_epoch=4),
    ]
    got = _rows(admin_tables.topic_deletions(events(spark, rows)))
    a = [(r["requested_at"], r["finished_at"], r["duration_ms"], r["outcome"], r["halts"], r["halt_reasons"],
          r["controller_epochs"]) for r in got if r["topic"] == "a"]
    assert a == [(at(0), at(70), 70, "completed", 2, ["offline replicas", "replica deletion failure"], 2),
                 (at(90), None, None, "in_progress", 0, [], 1)]
    assert [(r["topic"], r["outcome"]) for r in got if r["topic"] == "b"] == [("b", "in_progress")]


def test_a_kafka_reassignment_starts_with_adding_replicas_and_ends_with_rs_alone(spark) -> None:
    rows = [
        dict(ms=0, kind="partition_reassignment", topic="t", partition=0, replicas=[2, 3, 1], adding_replicas=[3],
             removing_replicas=[1], controller_epoch=1),
        dict(ms=40, kind="partition_reassignment", topic="t", partition=0, phase="caught_up", replicas=[2, 3]),
        dict(ms=45, kind="partition_reassignment", topic="t", partition=0, replicas=[2, 3], controller_epoch=2),
        dict(ms=60, kind="partition_reassignment", topic="t", partition=1, phase="started", replicas=[1, 2],
             adding_replicas=[2]),
        dict(ms=80, kind="partition_reassignment", topic="t", partition=1, phase="cancelled", replicas=[1]),
    ]
    got = _rows(admin_tables.partition_reassignments(events(spark, rows)))
    assert [(r["partition"], r["started_at"], r["duration_ms"], r["target_replicas"], r["final_replicas"],
             r["outcome"], r["phases"], r["controller_epochs"]) for r in got] == [
        (0, at(0), 45, [2, 3], [2, 3], "completed", ["started", "caught_up", "completed"], 2),
        (1, at(60), 20, [1, 2], None, "cancelled", ["started", "cancelled"], 0)]


def test_isr_changes_carry_the_isr_before_and_who_changed_it(spark) -> None:
    rows = [
        dict(ms=0, kind="leader_election", topic="t", partition=0, isr=[1, 2, 3], leader=1),
        dict(ms=10, kind="isr_shrink", topic="t", partition=0, isr=[1, 2], broker_id=1),
        dict(ms=20, kind="isr_change", topic="t", partition=0, isr=[1], leader=1, controller_epoch=2),
        dict(ms=25, kind="isr_change", topic="t", partition=0, isr=[1], leader=1, controller_epoch=2),  # epoch bump
        dict(ms=30, kind="isr_expand", topic="t", partition=0, isr=[1, 3], broker_id=1),
        dict(ms=40, kind="isr_update", topic="t", partition=0, isr=[3, 1], broker_id=1),  # confirms it: no row
        dict(ms=50, kind="isr_update", topic="t", partition=0, isr=[1, 2, 3], broker_id=1),  # a 2.8 expansion
    ]
    got = _rows(admin_tables.isr_changes(events(spark, rows)))
    assert [(r["changed_at"], r["change"], r["previous_isr"], r["isr"], r["leader"], r["by"]) for r in got] == [
        (at(10), "shrink", [1, 2, 3], [1, 2], 1, "leader"),
        (at(20), "shrink", [1, 2], [1], 1, "controller"),
        (at(30), "expand", [1], [1, 3], 1, "leader"),
        (at(50), "expand", [3, 1], [1, 2, 3], 1, "leader")]


def test_an_isr_write_the_leaders_own_line_confirms_is_the_leaders_change(spark) -> None:
    """The demo's broker 1 rejoining every ISR read "8 expand by the controller": the controller only wrote
    what the leaders asked for (AlterIsr), which each leader's ``ISR updated to`` line confirms. A controller
    write that no leader line follows (a replica removed as its broker went offline) stays the controller's."""
    rows = [
        dict(ms=0, kind="leader_election", topic="t", partition=0, isr=[3, 2], leader=3),
        dict(ms=10, kind="isr_change", topic="t", partition=0, isr=[3, 2, 1], leader=3, controller_epoch=3,
             source_file="d/events.jsonl"),
        dict(ms=10, kind="isr_update", topic="t", partition=0, isr=[3, 2, 1], broker_id=3,
             source_file="d/server.log"),
        dict(ms=20, kind="isr_change", topic="t", partition=0, isr=[3, 1], leader=3, controller_epoch=3,
             source_file="d/events.jsonl"),
        dict(ms=2_000, kind="isr_update", topic="t", partition=0, isr=[3, 1], broker_id=3,
             source_file="d/server.log"),  # too late to be that write's confirmation: no row either
    ]
    got = _rows(admin_tables.isr_changes(events(spark, rows)))
    assert [(r["changed_at"], r["change"], r["isr"], r["leader"], r["by"]) for r in got] == [
        (at(10), "expand", [3, 2, 1], 3, "leader"),
        (at(20), "shrink", [3, 1], 3, "controller")]


def test_an_expansion_read_from_the_event_log_alone_is_its_leaders(spark) -> None:
    """Our event log's ``isr_change`` is the controller's write; one that adds a member applied the leader's
    AlterIsr (Kafka's controller never adds to an ISR), yet with no leader line to confirm it, it read "expand by
    controller". A shrink under the leader epoch before it is an AlterIsr too (the controller's removal of a
    replica bumps the epoch); one that bumps it, or whose epochs are not known, stays the controller's, and so
    does a Kafka controller line that states more members than the ISR before it (it removed a replica; the
    expansion before it was not logged)."""
    jsonl = dict(topic="t", source_file="d/events.jsonl", source_format="jsonl", controller_epoch=3)
    rows = [
        dict(ms=0, kind="leader_election", partition=0, isr=[3, 2], leader=3, leader_epoch=4, **jsonl),
        dict(ms=10, kind="isr_change", partition=0, isr=[3, 2, 1], leader=3, leader_epoch=4, **jsonl),
        dict(ms=20, kind="isr_change", partition=0, isr=[3, 1], leader=3, leader_epoch=5, **jsonl),  # a removal
        dict(ms=30, kind="isr_change", partition=0, isr=[3, 2], leader=3, leader_epoch=5, **jsonl),  # replaced
        dict(ms=35, kind="isr_change", partition=0, isr=[3], leader=3, leader_epoch=5, **jsonl),  # AlterIsr shrink
        dict(ms=0, kind="leader_election", partition=1, isr=[1], leader=1, **jsonl),
        dict(ms=40, kind="isr_change", partition=1, isr=[1, 2, 3], leader=1, **jsonl),
        dict(ms=45, kind="isr_change", partition=1, isr=[1, 2], leader=1, **jsonl),  # no leader epoch: unknown
        dict(ms=0, kind="partition_state_change", topic="t", partition=2, isr=[2], leader=2, leader_epoch=1),
        dict(ms=50, kind="isr_change", topic="t", partition=2, isr=[2, 1], leader=2, leader_epoch=1, broker_id=3),
    ]
    got = _rows(admin_tables.isr_changes(events(spark, rows)))
    assert [(r["partition"], r["changed_at"], r["change"], r["previous_isr"], r["isr"], r["leader"], r["by"])
            for r in got] == [
        (0, at(10), "expand", [3, 2], [3, 2, 1], 3, "leader"),
        (0, at(20), "shrink", [3, 2, 1], [3, 1], 3, "controller"),
        (0, at(30), "replaced", [3, 1], [3, 2], 3, "leader"),
        (0, at(35), "shrink", [3, 2], [3], 3, "leader"),
        (1, at(40), "expand", [1], [1, 2, 3], 1, "leader"),
        (1, at(45), "shrink", [1, 2, 3], [1, 2], 1, "controller"),
        (2, at(50), "expand", [2], [2, 1], 2, "controller")]


def test_controlled_shutdowns_over_its_lines_alone_equal_those_over_every_event(spark) -> None:
    """The job persists ``shutdown_lines`` (its branches read ``events`` once) and builds the table over them:
    the same rows as over every event, and no row of another kind or election is kept."""
    from tests.analytics.test_shutdown_start import ROWS

    move = dict(kind="leader_election", strategy="controlled_shutdown", old_leader=2, topic="t")
    end = dict(kind="controlled_shutdown_end")
    rows = [
        *ROWS,
        dict(ms=0, kind="controlled_shutdown", broker_id=2, controller_epoch=1, cluster="d"),
        {**move, "ms": 3, "partition": 0, "cluster": "d"},
        {**move, "ms": 4, "partition": 1, "cluster": "d", "old_leader": None},  # names no broker
        dict(ms=5, kind="leader_election", strategy="offline", old_leader=2, topic="t", partition=2, cluster="d"),
        {**end, "ms": 10, "broker_id": 2, "phase": "succeeded", "cluster": "d"},
        {**end, "ms": 900, "brokers": [2, 3], "phase": "removed", "controller_id": 1, "cluster": "d"},
        dict(ms=950, kind="broker_change", brokers=[], added_brokers=[2], live_brokers=[2], cluster="d"),
        dict(ms=2_000, kind="broker_registered", broker_id=3, cluster="d"),
        dict(ms=3_000, kind="controlled_shutdown", broker_id=2, controller_epoch=2, cluster="d"),
        {**move, "ms": 3_004, "partition": 1, "cluster": "d"},
        dict(ms=3_005, kind="other", broker_id=2, cluster="d"),
        {**end, "ms": 13_100, "broker_id": 2, "phase": "failed", "cluster": "d"},
    ]
    df = events(spark, rows)
    lines = admin_tables.shutdown_lines(df)
    assert lines.count() == len(rows) - 3
    got = _rows(admin_tables.controlled_shutdowns(lines))
    assert sorted(map(str, got)) == sorted(map(str, _rows(admin_tables.controlled_shutdowns(df))))
    assert len(got) == 13 and {r["cluster"] for r in got} == {"c", "d"}


def test_retries_are_one_shutdown_and_a_restart_begins_the_next(spark) -> None:
    move = dict(kind="leader_election", strategy="controlled_shutdown", old_leader=2, topic="t")
    rows = [
        dict(ms=0, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
        {**move, "ms": 3, "partition": 0},
        dict(ms=5_000, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
        {**move, "ms": 5_004, "partition": 1},
        dict(ms=9_000, kind="broker_registered", broker_id=2),
        dict(ms=12_000, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
        {**move, "ms": 99_000, "partition": 2},  # long after: not this shutdown's
    ]
    got = _rows(admin_tables.controlled_shutdowns(events(spark, rows)))
    assert [(r["requested_at"], r["last_attempt_at"], r["attempts"], r["leaders_moved"], r["duration_ms"])
            for r in got] == [(at(0), at(5_000), 2, 2, 5_004), (at(12_000), at(12_000), 1, 0, 0)]
    assert [(r["outcome"], r["ended_at"]) for r in got] == [(None, None), (None, None)]


def test_a_leader_move_counts_for_one_shutdown_when_the_next_follows_within_the_tail(spark) -> None:
    """A fast stop-start-stop run: the second shutdown 2 s after the first, inside its 5 s tail. Each move
    counts once, for the shutdown it followed (the tail used to reach into the next shutdown's moves)."""
    move = dict(kind="leader_election", strategy="controlled_shutdown", old_leader=2, topic="t")
    rows = [
        dict(ms=0, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
        {**move, "ms": 3, "partition": 0},
        dict(ms=1_000, kind="broker_registered", broker_id=2),
        dict(ms=2_000, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
        {**move, "ms": 2_003, "partition": 1},
        {**move, "ms": 2_004, "partition": 2},
    ]
    got = _rows(admin_tables.controlled_shutdowns(events(spark, rows)))
    assert [(r["requested_at"], r["leaders_moved"], r["duration_ms"]) for r in got] == [
        (at(0), 1, 3), (at(2_000), 2, 4)]


def test_the_end_line_says_how_a_shutdown_ended_and_bounds_its_moves(spark) -> None:
    """The broker's server.log says whether its controlled shutdown completed; the controller's "Removed n from
    list of shutting down brokers" that it left, which also ends the shutdown: the next request, 3 s later and
    with no registration seen, is another shutdown, and a move after the end line is not the first one's."""
    move = dict(kind="leader_election", strategy="controlled_shutdown", old_leader=2, topic="t")
    end = dict(kind="controlled_shutdown_end")
    rows = [
        dict(ms=0, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
        {**move, "ms": 3, "partition": 0},
        {**end, "ms": 10, "broker_id": 2, "phase": "succeeded"},
        {**end, "ms": 900, "brokers": [2, 3], "phase": "removed", "controller_id": 1},
        {**move, "ms": 2_500, "partition": 5},  # after the end: no move of the first shutdown's
        dict(ms=3_000, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
        {**move, "ms": 3_004, "partition": 1},
        dict(ms=8_000, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
        {**end, "ms": 13_100, "broker_id": 2, "phase": "failed"},
        dict(ms=30_000, kind="controlled_shutdown", broker_id=3, controller_epoch=1),
    ]
    got = _rows(admin_tables.controlled_shutdowns(events(spark, rows)))
    assert [(r["broker_id"], r["requested_at"], r["attempts"], r["leaders_moved"], r["outcome"], r["ended_at"])
            for r in got] == [
        (2, at(0), 1, 1, "succeeded", at(10)),
        (2, at(3_000), 2, 1, "failed", at(13_100)),
        (3, at(30_000), 1, 0, None, None)]  # the removal of 3 was 29 s before its request: another shutdown's


def test_kafka_lines_become_the_same_kinds_as_the_event_log() -> None:
    parser = KafkaLogParser()
    cases = {
        "[Topic Deletion Manager 1] Halted deletion of topics ledger due to offline replicas":
            ("kafka.controller.TopicDeletionManager", "topic_deletion",
             {"controller_id": 1, "topic": "ledger", "topics": "ledger", "phase": "halted",
              "deletion_reason": "offline replicas"}),
        "[Controller id=1 epoch=1] Starting topic deletion for topics a,b":
            ("kafka.controller.KafkaController", "topic_deletion",
             {"controller_id": 1, "controller_epoch": 1, "topics": "a,b", "phase": "queued"}),
        "[Controller id=1 epoch=1] Successfully updated assignment of partition t-3 to ReplicaAssignment(replicas="
        "2,1,3, addingReplicas=2, removingReplicas=3)":
            ("kafka.controller.KafkaController", "partition_reassignment",
             {"controller_id": 1, "controller_epoch": 1, "topic": "t", "partition": 3, "replicas": [2, 1, 3],
              "adding_replicas": [2], "removing_replicas": [3]}),
        "[Partition my-topic-0 broker=0] Expanding ISR from 0 to 0,2":
            ("kafka.cluster.Partition", "isr_expand", {"broker_id": 0, "topic": "my-topic", "partition": 0,
                                                       "isr": [0, 2]}),
        "[Partition my-topic-0 broker=0] ISR updated to 0,2 and version updated to [4]":
            ("kafka.cluster.Partition", "isr_update", {"broker_id": 0, "topic": "my-topic", "partition": 0,
                                                       "isr": [0, 2]}),
    }
    for message, (logger, kind, fields) in cases.items():
        line = f"[2021-02-08 16:05:43,120] INFO {message} ({logger})"
        parsed = parser.parse_line(1, line)
        assert parsed.kind == kind, line
        assert {k: v for k, v in parsed.fields.items() if v is not None} == fields, line


def test_the_incident_of_a_controlled_shutdown_that_failed_says_so(spark) -> None:
    """The timeline marks each controlled shutdown as a clean stop, unless the broker's server.log says every
    attempt failed ("Proceeding to do an unclean shutdown …"): then the broker stopped uncleanly."""
    from tests.analytics.test_transform import T0

    from zkcontroller.analytics import transform
    from zkcontroller.analytics.controller_timeline import Timeline
    from zkcontroller.analytics.timeline_tables import incident_rows

    def line(ms: int, kind: str, broker: int, **fields: object) -> dict[str, object]:
        return {"cluster": "c", "ts_ms": T0 + ms, "kind": kind, "broker_id": broker, "brokers": [],
                "source_file": "f.log", "line_number": ms, **fields}

    membership = [line(0, "controlled_shutdown", 2), line(5_000, "controlled_shutdown", 2),
                  line(15_200, "controlled_shutdown_end", 2, phase="failed"),
                  line(1_000, "controlled_shutdown", 3), line(1_020, "controlled_shutdown_end", 3, phase="succeeded")]
    unclean = transform.leader_elections(events(spark, [dict(ms=0, kind="other")])).where("false")
    got = incident_rows(spark, Timeline(), [], membership, unclean, []).collect()
    assert sorted((r["broker_id"], r["detail"]) for r in got if r["incident"] == "controlled_shutdown") == [
        (2, "broker 2 asked to stop (controlled shutdown): every attempt failed, the broker stopped uncleanly"),
        (3, "broker 3 asked to stop (controlled shutdown): a clean stop, not a failure, when it leaves soon after")]


def _shutdown_incidents(spark, rows: list[dict[str, object]]) -> list[tuple[object, ...]]:
    """(broker, ms, detail) of the ``controlled_shutdown`` incidents of ``rows`` (as ``events`` takes them)."""
    from tests.analytics.test_transform import T0

    from zkcontroller.analytics import transform
    from zkcontroller.analytics.controller_timeline import Timeline
    from zkcontroller.analytics.timeline_tables import incident_rows

    membership = [{"cluster": "c", "source_file": "f.log", "line_number": n, "brokers": [], "broker_id": None,
                   **{k: v for k, v in row.items() if k != "ms"}, "ts_ms": T0 + int(row["ms"])}
                  for n, row in enumerate(rows, start=1)]
    unclean = transform.leader_elections(events(spark, [dict(ms=0, kind="other")])).where("false")
    got = incident_rows(spark, Timeline(), [], membership, unclean, []).collect()
    return sorted((r["broker_id"], r["at"], r["detail"]) for r in got if r["incident"] == "controlled_shutdown")


CLEAN = "a clean stop, not a failure, when it leaves soon after"
UNCLEAN = "every attempt failed, the broker stopped uncleanly"


def test_a_failed_line_is_of_the_next_shutdown_not_the_one_a_minute_before(spark) -> None:
    """Broker 2 stops cleanly at 0 s, registers again at 30 s, stops again at 60 s and gives up at 75 s: only the
    second shutdown failed, in the table and in the incidents alike (the incident once took the failed line of any
    shutdown within 120 s of its first attempt, so both said "every attempt failed")."""
    end = dict(kind="controlled_shutdown_end", source_file="b2/server.log")
    rows = [dict(ms=0, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
            {**end, "ms": 20, "broker_id": 2, "phase": "succeeded"},
            dict(ms=500, kind="broker_change", brokers=[2], added_brokers=[], live_brokers=[1]),
            dict(ms=30_000, kind="broker_change", brokers=[], added_brokers=[2], live_brokers=[1, 2]),
            *(dict(ms=ms, kind="controlled_shutdown", broker_id=2, controller_epoch=1)
              for ms in (60_000, 65_000, 70_000)),
            {**end, "ms": 75_000, "broker_id": 2, "phase": "failed"}]
    table = _rows(admin_tables.controlled_shutdowns(events(spark, rows)))
    assert [(r["requested_at"], r["attempts"], r["outcome"]) for r in table] == [
        (at(0), 1, "succeeded"), (at(60_000), 3, "failed")]
    assert _shutdown_incidents(spark, rows) == [
        (2, at(0), f"broker 2 asked to stop (controlled shutdown): {CLEAN}"),
        (2, at(60_000), f"broker 2 asked to stop (controlled shutdown): {UNCLEAN}")]


def test_the_controllers_removed_line_splits_the_incidents_as_it_splits_the_table(spark) -> None:
    """The controller's "Removed 2 from list of shutting down brokers." ends broker 2's first shutdown (no
    registration seen); its request 4 s later is another one, which failed. The incidents once merged the two
    (requests 15 s apart or closer) and gave the first the second's failure."""
    end = dict(kind="controlled_shutdown_end")
    rows = [dict(ms=0, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
            {**end, "ms": 20, "broker_id": 2, "phase": "succeeded"},
            {**end, "ms": 500, "brokers": [2], "phase": "removed"},
            *(dict(ms=ms, kind="controlled_shutdown", broker_id=2, controller_epoch=1)
              for ms in (4_000, 9_000, 14_000)),
            {**end, "ms": 19_000, "broker_id": 2, "phase": "failed"}]
    table = _rows(admin_tables.controlled_shutdowns(events(spark, rows)))
    assert [(r["requested_at"], r["attempts"], r["outcome"], r["ended_at"]) for r in table] == [
        (at(0), 1, "succeeded", at(20)), (at(4_000), 3, "failed", at(19_000))]
    assert _shutdown_incidents(spark, rows) == [
        (2, at(0), f"broker 2 asked to stop (controlled shutdown): {CLEAN}"),
        (2, at(4_000), f"broker 2 asked to stop (controlled shutdown): {UNCLEAN}")]


def test_a_stop_known_only_from_the_brokers_server_log_is_a_shutdown_with_no_attempts(spark) -> None:
    """Broker 5's "Controlled shutdown succeeded" and broker 6's "… unclean shutdown" with no controller log of
    their requests: each is a ``controlled_shutdowns`` row (0 attempts, no last attempt or duration) and an
    incident, where they once vanished. Broker 2's line is its request's, no row of its own; an empty "Removed
    ArrayBuffer()" names no broker and counts for none."""
    end = dict(kind="controlled_shutdown_end")
    rows = [dict(ms=0, kind="controlled_shutdown", broker_id=2, controller_epoch=1),
            {**end, "ms": 20, "broker_id": 2, "phase": "succeeded"},
            {**end, "ms": 1_000, "broker_id": 5, "phase": "succeeded"},
            {**end, "ms": 2_000, "broker_id": 6, "phase": "failed"},
            {**end, "ms": 3_000, "brokers": [], "phase": "removed"}]
    table = _rows(admin_tables.controlled_shutdowns(events(spark, rows)))
    assert [(r["broker_id"], r["requested_at"], r["last_attempt_at"], r["attempts"], r["leaders_moved"],
             r["duration_ms"], r["outcome"], r["ended_at"], r["line_number"]) for r in table] == [
        (2, at(0), at(0), 1, 0, 0, "succeeded", at(20), 1),
        (5, at(1_000), None, 0, 0, None, "succeeded", at(1_000), 3),
        (6, at(2_000), None, 0, 0, None, "failed", at(2_000), 4)]
    request = "stopped with a controlled shutdown (request not in the logs read): its server.log says"
    assert _shutdown_incidents(spark, rows) == [
        (2, at(0), f"broker 2 asked to stop (controlled shutdown): {CLEAN}"),
        (5, at(1_000), f"broker 5 {request} it succeeded"),
        (6, at(2_000), f"broker 6 {request} {UNCLEAN}")]
