"""Tenures, restarts, epoch resets, storms, split-brain candidates and broker failures on plain rows (no Spark)."""

from __future__ import annotations

from zkcontroller.analytics.controller_timeline import (
    DEFAULT_RESTART_GAP_MS,
    Tenure,
    broker_failures,
    build_tenures,
    classify,
)

MIN = 60_000


def _line(ts: int, kind: str, cid: int, epoch: int | None, line: int, cluster: str = "c") -> dict[str, object]:
    return {"cluster": cluster, "ts_ms": ts, "kind": kind, "controller_id": cid, "controller_epoch": epoch,
            "source_file": "c/controller.log", "line_number": line}


def _tenure(cid: int, epoch: int, start: int, end: int, cluster: str = "c", **kw: object) -> Tenure:
    return Tenure(cluster, cid, epoch, elected_ms=start, first_seen_ms=start, last_seen_ms=end,
                  source_file="c/controller.log", line_number=epoch, **kw)


def test_resigned_lines_without_epoch_end_the_tenure_the_controller_held() -> None:
    lifecycle = [_line(0, "controller_elected", 1, 9, 1), _line(100, "controller_ready", 1, 9, 2),
                 _line(5_000, "controller_resigned", 1, None, 3), _line(5_001, "controller_elected", 2, 10, 4)]
    activity = [{"cluster": "c", "controller_id": 1, "controller_epoch": 9, "first_ms": 0, "last_ms": 4_000,
                 "events": 7, "source_file": "c/controller.log", "line_number": 1}]
    tenures = build_tenures(lifecycle, activity)
    assert [(t.controller_id, t.controller_epoch, t.start_ms, t.end_ms, t.events) for t in tenures] == [
        (1, 9, 0, 5_000, 7), (2, 10, 5_001, 5_001, 0)]
    # the resignation keeps its own line, for the incident that reports it (it cited the election's)
    assert (tenures[0].line_number, tenures[0].resigned_source_file, tenures[0].resigned_line_number) == (
        1, "c/controller.log", 3)


def test_a_resigned_line_from_a_broker_that_held_no_tenure_ends_none() -> None:
    """Kafka logs "Resigned" from every broker at shutdown. Broker 2's, before its own later election (a second
    run in the same log dir), once ended that later tenure a minute before it began."""
    lifecycle = [_line(0, "controller_elected", 1, 2, 1), _line(1_000, "controller_resigned", 2, None, 2),
                 _line(60_000, "controller_elected", 2, 3, 3), _line(90_000, "controller_resigned", 2, None, 4)]
    activity = [{"cluster": "c", "controller_id": 2, "controller_epoch": 3, "first_ms": 60_000, "last_ms": 80_000,
                 "events": 3, "source_file": "c/controller.log", "line_number": 3}]
    tenures = build_tenures(lifecycle, activity)
    assert [(t.controller_id, t.controller_epoch, t.start_ms, t.end_ms, t.resigned_ms) for t in tenures] == [
        (1, 2, 0, 0, None), (2, 3, 60_000, 90_000, 90_000)]


def test_a_resigned_line_without_the_election_in_the_logs_ends_the_epoch_acted_with_before() -> None:
    lifecycle = [_line(50_000, "controller_resigned", 1, None, 9)]
    activity = [{"cluster": "c", "controller_id": 1, "controller_epoch": 4, "first_ms": 0, "last_ms": 40_000,
                 "events": 2, "source_file": "c/controller.log", "line_number": 1}]
    [tenure] = build_tenures(lifecycle, activity)
    assert (tenure.controller_epoch, tenure.resigned_ms) == (4, 50_000)


def _story(back: list[dict[str, object]]) -> list[Tenure]:
    """The walkthrough's story: controller 3 (epoch 1) loses its session, broker 1 takes over at epoch 2 and 3
    resigns when it notices; 1 is SIGKILLed (no "Resigned"), 3 takes over at epoch 3; 1 is started again and
    stopped, logging "Resigned" at its shutdown as every Kafka broker does. ``back``: membership rows."""
    lifecycle = [_line(0, "controller_elected", 3, 1, 1), _line(38_000, "controller_elected", 1, 2, 2),
                 _line(52_000, "controller_resigned", 3, None, 3), _line(84_000, "controller_elected", 3, 3, 4),
                 _line(140_000, "controller_resigned", 1, None, 5), _line(150_000, "controller_resigned", 3, None, 6)]
    activity = [{"cluster": "c", "controller_id": cid, "controller_epoch": epoch, "first_ms": first, "last_ms": last,
                 "events": 1, "source_file": "c/controller.log", "line_number": 1}
                for cid, epoch, first, last in ((3, 1, 0, 30_000), (1, 2, 38_000, 53_000), (3, 3, 84_000, 149_000))]
    return build_tenures(lifecycle, activity, membership=back)


def _member(ts: int, kind: str, **kw: object) -> dict[str, object]:
    return {"cluster": "c", "ts_ms": ts, "kind": kind, "source_file": "c/server.log", "line_number": 1, **kw}


def test_a_restarted_controllers_resigned_at_shutdown_ends_no_earlier_tenure() -> None:
    """Broker 1's "Resigned" at 140 s is its restarted process's shutdown: it stretched epoch 2 past epoch 3's
    election (a negative failover gap, two controllers in office on the chart)."""
    for back in ([_member(120_000, "broker_starting", broker_id=1)],  # its own "[KafkaServer id=1] starting"
                 [_member(120_100, "broker_registered", brokers=[1])],  # the controller's startup callback only
                 [_member(120_100, "broker_change", added_brokers=[1], brokers=[], live_brokers=[1, 3])]):
        tenures = _story(back)
        assert [(t.controller_id, t.controller_epoch, t.end_ms, t.resigned_ms) for t in tenures] == [
            (3, 1, 52_000, 52_000), (1, 2, 53_000, None), (3, 3, 150_000, 150_000)], back
        timeline = classify(tenures)
        assert [t.failover_gap_ms for t in timeline.tenures] == [None, 38_000 - 52_000, 84_000 - 53_000]
    # nothing shows broker 1 came back: its line ends its tenure, as a zombie's late resignation would
    assert [t.resigned_ms for t in _story([])] == [52_000, 140_000, 150_000]


def test_a_registration_before_a_later_epoch_or_just_before_the_line_does_not_hide_a_resignation() -> None:
    """Controller 3 resigns on noticing its lost session, then registers again: the controller's callback a few
    ms before the line (two clocks) leaves it the end of epoch 1; and with no later epoch, a registration
    mid-tenure (Kafka before 1.1 registered the broker after starting its controller) ends nothing."""
    tenures = _story([_member(51_500, "broker_registered", brokers=[3])])
    assert tenures[0].resigned_ms == 52_000
    lifecycle = [_line(0, "controller_elected", 1, 1, 1), _line(90_000, "controller_resigned", 1, None, 2)]
    [tenure] = build_tenures(lifecycle, [], membership=[_member(100, "broker_registered", brokers=[1])])
    assert tenure.resigned_ms == 90_000


def test_the_event_logs_resignation_has_its_epoch_and_a_restarted_process_writes_none() -> None:
    """Our event log's ``controller_resigned`` carries the epoch the broker held (``tenure.end`` writes one only
    with an epoch): the same story read from events.jsonl gives the same tenures."""
    lifecycle = [_line(0, "controller_elected", 3, 1, 1), _line(38_000, "controller_elected", 1, 2, 2),
                 _line(52_000, "controller_resigned", 3, 1, 3), _line(84_000, "controller_elected", 3, 3, 4),
                 _line(150_000, "controller_resigned", 3, 3, 6)]
    activity = [{"cluster": "c", "controller_id": cid, "controller_epoch": epoch, "first_ms": first, "last_ms": last,
                 "events": 1, "source_file": "c/controller.log", "line_number": 1}
                for cid, epoch, first, last in ((3, 1, 0, 30_000), (1, 2, 38_000, 53_000), (3, 3, 84_000, 149_000))]
    assert [(t.controller_id, t.end_ms) for t in build_tenures(lifecycle, activity)] == [
        (t.controller_id, t.end_ms) for t in _story([_member(120_000, "broker_starting", broker_id=1)])]


def test_epoch_reset_is_one_row_and_one_restart_and_later_epochs_are_failovers() -> None:
    tenures = [_tenure(1, 9, 0, 1_000), _tenure(1, 1, 10 * MIN, 11 * MIN), _tenure(2, 2, 11 * MIN + 5, 12 * MIN)]
    timeline = classify(tenures)
    assert [t.started_by for t in tenures] == ["first", "epoch_reset", "failover"]
    assert [(r["controller_epoch"], r["detail"]) for r in timeline.epoch_resets] == [(1, "epoch 1 after epoch 9")]
    assert [r["cause"] for r in timeline.restarts] == ["epoch_reset"]
    assert tenures[2].failover_gap_ms == 5
    assert len(timeline.warnings) == 1 and "--cluster-pattern" in timeline.warnings[0]


def test_a_long_gap_is_a_restart_not_a_failover() -> None:
    tenures = [_tenure(1, 1, 0, 1_000), _tenure(2, 2, 1_000 + DEFAULT_RESTART_GAP_MS + 1, 20 * MIN),
               _tenure(3, 3, 20 * MIN + 300, 21 * MIN)]
    timeline = classify(tenures)
    assert [t.started_by for t in tenures] == ["first", "restart", "failover"]
    assert [t.failover_gap_ms for t in tenures] == [None, None, 300]
    assert [(r["cause"], r["gap_ms"]) for r in timeline.restarts] == [("restart", DEFAULT_RESTART_GAP_MS + 1)]


def test_split_brain_candidate_needs_the_stale_tenure_to_act_after_the_new_one_began() -> None:
    overlapping = [_tenure(1, 9, 0, 5_000), _tenure(2, 10, 4_000, 9_000)]
    assert classify(overlapping).split_brain_candidates == [{
        "cluster": "c", "start_ms": 4_000, "end_ms": 5_000, "stale_controller_id": 1, "stale_epoch": 9,
        "new_controller_id": 2, "new_epoch": 10}]
    handed_over = [_tenure(1, 9, 0, 4_000), _tenure(2, 10, 4_000, 9_000)]
    assert classify(handed_over).split_brain_candidates == []
    reset = [_tenure(1, 9, 0, 5_000 * MIN), _tenure(2, 1, 4_000, 9_000)]  # an older epoch is never the newer tenure
    assert classify(reset).split_brain_candidates == []
    # its last epoch-stated line before the successor began, its resignation after: a refusal stating no epoch
    # ("Controller moved …") may lie between, so the range runs to the resignation (the window table drops it if not)
    resigned_late = [_tenure(1, 9, 0, 3_000, resigned_ms=5_000), _tenure(2, 10, 4_000, 9_000)]
    assert [(c["start_ms"], c["end_ms"]) for c in classify(resigned_late).split_brain_candidates] == [(4_000, 5_000)]


def test_hundreds_of_elections_a_minute_are_one_storm() -> None:
    tenures = [_tenure(1 + i % 3, 10 + i, i * 200, i * 200 + 100) for i in range(300)]
    tenures.append(_tenure(1, 400, 10 * MIN, 11 * MIN))
    storms = classify(tenures, storm_elections=20).storms
    assert [(s["elections"], s["first_epoch"], s["last_epoch"]) for s in storms] == [(300, 10, 309)]
    assert classify(tenures[:5], storm_elections=20).storms == []


def test_a_tenure_spanning_years_warns_of_mixed_clusters() -> None:
    warnings = classify([_tenure(1, 3, 0, 2 * 365 * 24 * 3600 * 1000)]).warnings
    assert len(warnings) == 1 and "spans 730 days" in warnings[0] and "--cluster-pattern" in warnings[0]


def test_controller_deaths_are_broker_failures_and_duplicate_lines_merge() -> None:
    tenures = [_tenure(1, 1, 0, 1_000), _tenure(2, 2, 1_010, 2_000), _tenure(1, 3, 2_010, 3_000),
               _tenure(1, 4, 3_005, 4_000)]
    classify(tenures)
    membership = [
        {"cluster": "c", "ts_ms": 500, "kind": "broker_change", "brokers": [3], "added_brokers": [],
         "source_file": "c/controller.log", "line_number": 10},
        {"cluster": "c", "ts_ms": 501, "kind": "broker_failed", "brokers": [3], "source_file": "c/controller.log",
         "line_number": 11},
        {"cluster": "c", "ts_ms": 502, "kind": "broker_failed", "brokers": [3], "source_file": "c/events.jsonl",
         "line_number": 4},
    ]
    failures = broker_failures(membership, tenures)
    assert [(f["broker_id"], f["detected_ms"], f["line_number"]) for f in failures] == [
        (3, 500, 10),  # three lines, one failure, citing the first
        (1, 1_010, 2),  # controller 1 replaced by 2: broker 1 died
        (2, 2_010, 3),  # then 2 by 1; the re-election of 1 by itself (epoch 4) is no death
    ]
    assert failures[1]["cause"] == "controller failover (epoch 1 -> 2)"


def test_a_broker_listed_live_after_its_failure_came_back_and_can_fail_again_soon_after() -> None:
    """The demo, whose story takes 0.3 s: broker 2's session expires (controller 2 replaced by 3), it registers
    again before controller 3 reads the broker list (so no diff names it added, but the next one lists it live),
    and 90 ms later it stops. The stop was merged into the expiry as one failure; it is a failure of its own."""
    tenures = [_tenure(2, 2, 0, 1_000), _tenure(3, 3, 1_000, 2_000)]
    classify(tenures)

    def change(ts: int, line: int, deleted: list[int], added: list[int], live: list[int]) -> dict[str, object]:
        return {"cluster": "c", "ts_ms": ts, "kind": "broker_change", "brokers": deleted, "added_brokers": added,
                "live_brokers": live, "source_file": "c/controller.log", "line_number": line}

    failures = broker_failures([change(1_010, 7, [], [1], [1, 2, 3]), change(1_090, 9, [2], [], [1, 3])], tenures)
    assert [(f["broker_id"], f["detected_ms"], f["cause"]) for f in failures] == [
        (2, 1_000, "controller failover (epoch 2 -> 3)"), (2, 1_090, "deleted from /brokers/ids")]
    unlisted = broker_failures([change(1_010, 7, [], [1], [1, 3]), change(1_090, 9, [2], [], [1, 3])], tenures)
    assert [(f["broker_id"], f["detected_ms"]) for f in unlisted] == [(2, 1_000)]  # one failure, logged twice


def _shutdown(ts: int, broker: int, line: int) -> dict[str, object]:
    return {"cluster": "c", "ts_ms": ts, "kind": "controlled_shutdown", "broker_id": broker, "brokers": [],
            "source_file": "c/controller.log", "line_number": line}


def test_a_controlled_shutdown_then_deregistration_is_a_clean_stop_not_a_failure() -> None:
    """The demo: controller 1 shuts itself down (controller 2 takes over), then at the end broker 2 stops with a
    controlled shutdown and is deleted from /brokers/ids 8 ms later. Neither is a failure; broker 3, deleted with no
    controlled shutdown, and broker 4, whose controlled shutdown was a minute before it died, are."""
    tenures = [_tenure(1, 1, 0, 1_000), _tenure(2, 2, 1_010, 200_000)]
    classify(tenures)
    membership = [
        _shutdown(990, 1, 5),
        _shutdown(100_000, 2, 20),
        {"cluster": "c", "ts_ms": 100_008, "kind": "broker_change", "brokers": [2], "added_brokers": [],
         "live_brokers": [3, 4], "source_file": "c/controller.log", "line_number": 21},
        {"cluster": "c", "ts_ms": 100_009, "kind": "broker_failed", "brokers": [2], "source_file": "c/events.jsonl",
         "line_number": 9},
        _shutdown(110_000, 4, 30),
        {"cluster": "c", "ts_ms": 170_000, "kind": "broker_change", "brokers": [3, 4], "added_brokers": [],
         "live_brokers": [], "source_file": "c/controller.log", "line_number": 31},
    ]
    failures = broker_failures(membership, tenures)
    assert [(f["broker_id"], f["detected_ms"], f["cause"]) for f in failures] == [
        (3, 170_000, "deleted from /brokers/ids"), (4, 170_000, "deleted from /brokers/ids")]


def _end(ts: int, broker: int, phase: str, line: int) -> dict[str, object]:
    """A broker's own server.log line on how its controlled shutdown ended."""
    return {"cluster": "c", "ts_ms": ts, "kind": "controlled_shutdown_end", "broker_id": broker, "brokers": [],
            "phase": phase, "source_file": f"b{broker}/server.log", "line_number": line}


def test_a_controlled_shutdown_that_failed_then_a_crash_is_a_failure_not_a_clean_stop() -> None:
    """Broker 2's retries all failed ("Proceeding to do an unclean shutdown as all the controlled shutdown attempts
    failed") and it was gone 4 s later: within 30 s of its last request, but no clean stop. Broker 3's shutdown
    succeeded; broker 4's failed line is of an earlier shutdown, before the request that preceded its leaving; broker
    5's controller log is missing, its own "Controlled shutdown succeeded" makes its leaving a clean stop."""
    tenures = [_tenure(1, 1, 0, 200_000)]
    classify(tenures)
    gone = {"cluster": "c", "kind": "broker_change", "added_brokers": [], "live_brokers": [1],
            "source_file": "c/controller.log"}
    membership = [
        _shutdown(100_000, 2, 20), _shutdown(105_000, 2, 21), _end(115_400, 2, "failed", 7),
        {**gone, "ts_ms": 119_000, "brokers": [2], "line_number": 22},
        _shutdown(100_000, 3, 23), _end(100_020, 3, "succeeded", 3),
        _end(50_000, 4, "failed", 4), _shutdown(120_000, 4, 24), _end(120_010, 4, "succeeded", 5),
        _end(120_000, 5, "succeeded", 9),
        {**gone, "ts_ms": 121_000, "brokers": [3, 4, 5], "line_number": 25},
    ]
    failures = broker_failures(membership, tenures)
    assert [(f["broker_id"], f["detected_ms"], f["cause"]) for f in failures] == [
        (2, 119_000, "deleted from /brokers/ids")]


def test_a_crash_a_minute_after_a_shutdown_request_is_a_failure_though_the_controller_logs_removed() -> None:
    """One ControlledShutdown at 0 with no outcome seen, then broker 2 is deleted from /brokers/ids at 60 s and the
    controller logs "Removed 2 from list of shutting down brokers." as it handles the failure: the removal ends the
    shutdown (the table's ``ended_at``) but is no clean stop, so the crash, 60 s after the last request (more than
    ``CLEAN_SHUTDOWN_MS``), is a failure. It was excused while the removal counted as the shutdown's end."""
    tenures = [_tenure(1, 1, 0, 200_000)]
    classify(tenures)
    membership = [
        _shutdown(10_000, 2, 20),
        {"cluster": "c", "ts_ms": 70_000, "kind": "broker_change", "brokers": [2], "added_brokers": [],
         "live_brokers": [1], "source_file": "c/controller.log", "line_number": 21},
        {"cluster": "c", "ts_ms": 70_001, "kind": "controlled_shutdown_end", "broker_id": None, "brokers": [2],
         "phase": "removed", "source_file": "c/controller.log", "line_number": 22},
    ]
    failures = broker_failures(membership, tenures)
    assert [(f["broker_id"], f["detected_ms"]) for f in failures] == [(2, 70_000)]


def test_a_failure_follows_the_shutdowns_own_outcome_as_the_table_gives_it() -> None:
    """Broker 2's three attempts end with its "… unclean shutdown" line stamped 1.7 s after the controller saw it
    leave (its clock runs ahead): the table's rule (``ends_shutdown``) makes that line the shutdown's outcome, so
    leaving is a failure, where a window of its own (1 s after the detection at most) once called it a clean stop.
    Broker 3's shutdown succeeded, and its failed line of over 120 s later is of a shutdown not in the logs read."""
    tenures = [_tenure(1, 1, 0, 500_000)]
    classify(tenures)
    gone = {"cluster": "c", "kind": "broker_change", "added_brokers": [], "live_brokers": [1],
            "source_file": "c/controller.log"}
    membership = [
        _shutdown(100_000, 2, 20), _shutdown(105_000, 2, 21), _shutdown(110_000, 2, 22),
        {**gone, "ts_ms": 115_300, "brokers": [2], "line_number": 23}, _end(117_000, 2, "failed", 7),
        _shutdown(200_000, 3, 24), _end(200_020, 3, "succeeded", 3),
        {**gone, "ts_ms": 200_500, "brokers": [3], "line_number": 25}, _end(400_000, 3, "failed", 4),
    ]
    failures = broker_failures(membership, tenures)
    assert [(f["broker_id"], f["detected_ms"]) for f in failures] == [(2, 115_300)]
    from zkcontroller.analytics.controller_timeline import shutdown_spans

    assert [(s["broker_id"], s["first_ms"], s["attempts"], s["outcome"]) for s in shutdown_spans(membership)] == [
        (2, 100_000, 3, "failed"), (3, 200_000, 1, "succeeded"), (3, 400_000, 0, "failed")]


def test_a_controlled_shutdown_after_a_failover_does_not_excuse_it() -> None:
    """The demo: controller 2's session expires (controller 3 takes over at 660 ms), and 82 ms later the run's
    end stops broker 2 with a controlled shutdown. That later request is no clean stop of the earlier leaving: the
    failover stays a failure (the broker's clock slack is for its own end lines, not the controller's requests)."""
    tenures = [_tenure(2, 2, 0, 659), _tenure(3, 3, 660, 1_000)]
    classify(tenures)
    membership = [_shutdown(742, 2, 20), _end(746, 2, "succeeded", 3)]
    assert [(f["broker_id"], f["detected_ms"]) for f in broker_failures(membership, tenures)] == [(2, 660)]


def test_the_controllers_removed_line_in_the_same_ms_as_the_brokers_own_line() -> None:
    """guenterh: the controller's "Removed 2 from list of shutting down brokers." and the broker's line share a
    millisecond; the shutdown still ends there, with the broker's word as its outcome."""
    from zkcontroller.analytics.controller_timeline import shutdown_spans

    removed = {"cluster": "c", "ts_ms": 5, "kind": "controlled_shutdown_end", "broker_id": None, "brokers": [2],
               "phase": "removed", "source_file": "c/controller.log", "line_number": 21}
    spans = shutdown_spans([_shutdown(0, 2, 20), removed, _end(5, 2, "succeeded", 3)])
    assert [(s["first_ms"], s["attempts"], s["ended_ms"], s["outcome"]) for s in spans] == [(0, 1, 5, "succeeded")]


def test_a_sighting_counts_as_back_after_the_failure_it_follows_and_up_to_the_next_one() -> None:
    """Between two failures of one broker within ``merge_ms``: a sighting at the first failure's own instant is not
    a return (the two are one failure), one at the second's instant is (two failures). The membership rows come in
    any order: the sightings are searched, not scanned in the order given."""
    tenures = [_tenure(9, 1, 0, 10_000)]
    classify(tenures)

    def deleted(ts: int, line: int) -> dict[str, object]:
        return {"cluster": "c", "ts_ms": ts, "kind": "broker_change", "brokers": [2], "added_brokers": [],
                "live_brokers": [9], "source_file": "c/controller.log", "line_number": line}

    def registered(ts: int, line: int) -> dict[str, object]:
        return {"cluster": "c", "ts_ms": ts, "kind": "broker_registered", "brokers": [2],
                "source_file": "c/controller.log", "line_number": line}

    far = [registered(9_000, 8), registered(200, 1)]  # outside (1000, 1500]: never a return between them
    same_instant = broker_failures([*far, deleted(1_500, 3), registered(1_000, 2), deleted(1_000, 2)], tenures)
    assert [f["detected_ms"] for f in same_instant] == [1_000]
    at_the_next = broker_failures([*far, registered(1_500, 4), deleted(1_500, 3), deleted(1_000, 2)], tenures)
    assert [f["detected_ms"] for f in at_the_next] == [1_000, 1_500]
