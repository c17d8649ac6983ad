"""Two lives of one cluster in one log directory (two runs of the embedded-store cluster, each starting at epoch
1) are a failover, an epoch reset and no split brain: the same (controller, epoch) in each life is two tenures.

Before lives were told apart, controller 1's epoch-1 tenure of the second run was merged with the first run's,
so its activity seemed to follow controller 2's epoch 2: a one-row ``split_brain_windows`` for runs that never
overlapped.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from zkcontroller.analytics.controller_timeline import build_tenures, classify, life_starts, stated_epoch_runs
from zkcontroller.event_schema import validate_record

T0 = 1_800_000_000_000
SECOND_RUN_MS = 3_000
"""Well under the restart gap: only the epoch going back tells the second run from a failover."""


def _record(ms: int, rtype: str, cid: int, epoch: int, **fields: object) -> dict[str, object]:
    record = {"schema_version": 1, "type": rtype, "ts_ms": T0 + ms, "cluster": "lives", "controller_id": cid,
              "controller_epoch": epoch, **fields}
    assert validate_record(record) == [], record
    return record


def _run(at: int, tenures: list[tuple[int, int, int, int]]) -> list[dict[str, object]]:
    """One run: each (controller, epoch, start, end) elected at start, acting until end, resigning at end."""
    records = []
    for cid, epoch, start, end in tenures:
        records += [_record(at + start, "controller_elected", cid, epoch),
                    _record(at + start + 2, "controller_ready", cid, epoch)]
        records += [_record(at + ms, "controller_event", cid, epoch, event="TopicChange", queue_time_ms=0,
                            processing_time_ms=1) for ms in range(start + 10, end, 100)]
        records.append(_record(at + end, "controller_resigned", cid, epoch))
    return records


def _partition(ms: int, frm: str, to: str, leader: int) -> dict[str, object]:
    return _record(ms, "partition_state_change", 1, 1, topic="t", partition=0, from_state=frm, to_state=to,
                   leader=leader, isr=[leader] if leader >= 0 else [], leader_epoch=0)


def two_runs() -> list[dict[str, object]]:
    """Run 1: controller 1 (epoch 1) loses its session, controller 2 takes epoch 2; t-0 was left leaderless at
    900 ms, and run 1's last controller line is at 1500. Run 2: controller 1, epoch 1, creates t-0 again."""
    run_1 = [*_run(0, [(1, 1, 0, 1_000), (2, 2, 1_001, 1_500)]),
             _partition(100, "NewPartition", "OnlinePartition", 1), _partition(900, "OnlinePartition",
                                                                               "OfflinePartition", -1)]
    run_2 = [*_run(SECOND_RUN_MS, [(1, 1, 0, 1_000)]),
             # a broker of run 2 starting before its election line: no controller epoch yet, so not run 1's
             _record(SECOND_RUN_MS - 5, "controller_event", 2, 0, event="Startup", queue_time_ms=0,
                     processing_time_ms=0),
             _partition(SECOND_RUN_MS + 50, "NonExistentPartition", "NewPartition", -1),
             _partition(SECOND_RUN_MS + 60, "NewPartition", "OnlinePartition", 1)]
    return sorted([*run_1, *run_2], key=lambda r: int(r["ts_ms"]))


def _lifecycle(records: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{**{k: r[k] for k in ("cluster", "ts_ms", "controller_id", "controller_epoch")},
             "kind": r["type"], "source_file": "lives/events.jsonl", "line_number": i}
            for i, r in enumerate(records, 1)
            if r["type"] in ("controller_elected", "controller_ready", "controller_resigned")]


def _activity(records: list[dict[str, object]], starts: dict[str, list[int]]) -> list[dict[str, object]]:
    """What the job aggregates in Spark: first, last and count per (life, controller, epoch), epoch 0 (no
    controller yet) left out."""
    summary: dict[tuple[int, int, int], dict[str, object]] = {}
    for i, r in enumerate(records, 1):
        if int(r["controller_epoch"]) <= 0:
            continue
        life = sum(1 for s in starts.get("lives", []) if s <= int(r["ts_ms"]))
        key = (life, int(r["controller_id"]), int(r["controller_epoch"]))
        row = summary.setdefault(key, {"cluster": "lives", "life": life, "controller_id": key[1],
                                       "controller_epoch": key[2], "first_ms": r["ts_ms"], "events": 0,
                                       "source_file": "lives/events.jsonl", "line_number": i})
        row["last_ms"], row["events"] = r["ts_ms"], int(row["events"]) + 1
    return list(summary.values())


def test_the_same_controller_and_epoch_in_two_lives_is_two_tenures_and_no_split_brain() -> None:
    records = two_runs()
    starts = life_starts(_lifecycle(records))
    assert starts == {"lives": [T0 + SECOND_RUN_MS]}
    timeline = classify(build_tenures(_lifecycle(records), _activity(records, starts), starts))
    assert [(t.controller_id, t.controller_epoch, t.started_by, t.start_ms - T0, t.end_ms - T0)
            for t in timeline.tenures] == [(1, 1, "first", 0, 1_000), (2, 2, "failover", 1_001, 1_500),
                                           (1, 1, "epoch_reset", SECOND_RUN_MS, SECOND_RUN_MS + 1_000)]
    assert timeline.split_brain_candidates == []
    assert [r["detail"] for r in timeline.epoch_resets] == ["epoch 1 after epoch 2"]


def test_an_epoch_equal_to_the_last_one_by_another_controller_is_a_reset_not_a_failover() -> None:
    """Run 2 elects controller 2 with epoch 1 after run 1's controller 1 with epoch 1: not a failover (which
    would take epoch 2), and not controller 1's death."""
    records = [*_run(0, [(1, 1, 0, 1_000)]), *_run(SECOND_RUN_MS, [(2, 1, 0, 1_000)])]
    starts = life_starts(_lifecycle(records))
    timeline = classify(build_tenures(_lifecycle(records), _activity(records, starts), starts))
    assert [(t.controller_id, t.started_by) for t in timeline.tenures] == [(1, "first"), (2, "epoch_reset")]


def test_one_election_in_two_files_and_a_stale_ready_line_are_not_new_lives() -> None:
    """The event log and controller.log of one run both log the election; a controller that finishes its
    failover after its successor was elected (a real split brain) logs its ready line late: one life."""
    line = {"cluster": "c", "controller_id": 1, "controller_epoch": 9, "line_number": 1}
    lifecycle = [
        {**line, "ts_ms": 0, "kind": "controller_elected", "source_file": "c/events.jsonl"},
        {**line, "ts_ms": 1, "kind": "controller_elected", "source_file": "c/controller.log"},
        {**line, "ts_ms": 500, "kind": "controller_elected", "controller_id": 2, "controller_epoch": 10,
         "source_file": "c/controller.log"},
        {**line, "ts_ms": 900, "kind": "controller_ready", "source_file": "c/controller.log"},
    ]
    assert life_starts(lifecycle) == {}
    again = {**line, "ts_ms": 60_000, "kind": "controller_elected", "source_file": "c/controller.log"}
    assert life_starts([*lifecycle, again]) == {"c": [60_000]}


def test_a_lower_epoch_logged_just_after_a_higher_one_by_another_host_is_clock_skew_not_a_new_life() -> None:
    """Broker 1's election at epoch 5 logged 40 ms after broker 2's at epoch 6 (broker 2's clock ahead): the
    rows sort by time, so epoch 5 came second, and it read as an epoch reset, splitting the cluster in two."""
    line = {"cluster": "c", "kind": "controller_elected", "line_number": None}
    lifecycle = [
        {**line, "ts_ms": 1_000, "controller_id": 2, "controller_epoch": 6, "source_file": "b2/controller.log"},
        {**line, "ts_ms": 1_040, "controller_id": 1, "controller_epoch": 5, "source_file": "b1/controller.log"},
    ]
    assert life_starts(lifecycle) == {}
    restarted = {**line, "ts_ms": 30_000, "controller_id": 1, "controller_epoch": 1, "source_file": "b1/controller.log"}
    assert life_starts([*lifecycle, restarted]) == {"c": [30_000]}


@pytest.fixture(scope="module")
def analyzed_lives(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from zkcontroller.analytics.job import JobConfig, run

    root = tmp_path_factory.mktemp("lives")
    (root / "lives").mkdir()
    (root / "lives" / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in two_runs()))
    run(spark, JobConfig(inputs=[str(root / "lives")], out=root / "out", report=False))
    return root / "out"


@pytest.mark.spark
def test_two_runs_into_one_log_dir_give_no_split_brain_window(spark, analyzed_lives: Path) -> None:
    def rows(name: str) -> list[dict[str, object]]:
        return [r.asDict() for r in spark.read.parquet(str(analyzed_lives / name)).collect()]

    assert rows("split_brain_windows") == []
    tenures = sorted(rows("controller_tenures"), key=lambda t: t["start_at"])
    assert [(t["controller_id"], t["controller_epoch"], t["started_by"], t["events"]) for t in tenures] == [
        (1, 1, "first", 15), (2, 2, "failover", 8), (1, 1, "epoch_reset", 15)]
    assert sorted(a["anomaly"] for a in rows("anomalies")) == ["controller_epoch_reset", "leaderless_partition"]


@pytest.mark.spark
def test_a_partitions_state_ends_with_its_life_not_at_the_next_runs_lines(spark, analyzed_lives: Path) -> None:
    """Run 1 left t-0 leaderless at 900 ms; its lines end at 1500. That stretch ran on to run 2's re-creation of
    t-0 (3050 ms): leaderless through the time between the runs, and the charts carried run 1's leaders over."""
    def rows(name: str) -> list[dict[str, object]]:
        return [r.asDict() for r in spark.read.parquet(str(analyzed_lives / name)).collect()]

    [leaderless] = [a for a in rows("anomalies") if a["anomaly"] == "leaderless_partition"]
    assert (leaderless["duration_ms"], leaderless["detail"]) == (
        600, "leader -1 until its cluster's last line before the epoch reset")
    [unavailable] = [u for u in rows("partition_unavailability") if u["partition"] == 0]
    assert unavailable["leaderless_seconds"] == pytest.approx(0.61)  # 0.6 s, and run 2's 10 ms between New and Online
    offline = [(i["duration_ms"], i["open"]) for i in rows("partition_state_intervals") if i["state"] ==
               "OfflinePartition"]
    assert offline == [(600, False)]


def _stated(*runs: tuple[int, int, int, int, str]) -> list[dict[str, object]]:
    """Broker-side lines naming a controller and epoch: (controller, epoch, from ms, to ms, file), one each 100 ms."""
    lines = [{"cluster": "c", "controller_id": cid, "controller_epoch": epoch, "ts_ms": ms, "source_file": where,
              "line_number": None}
             for cid, epoch, start, end, where in runs for ms in range(start, end + 1, 100)]
    return stated_epoch_runs(lines)


def test_a_broker_side_state_change_log_alone_shows_an_epoch_reset() -> None:
    """No election or ready line at all, only brokers naming the controller of each request: run 2 begins again
    at controller 1's epoch 1 after run 1's epoch 2. Before, lives came from election lines only: one life, in
    which controller 1's epoch-1 tenure seemed to act after epoch 2's (a split brain).

    The new life shows itself by going on: its next failover climbs to epoch 2 under another controller. Epoch 1
    alone after epoch 2, with nothing after it, is what a deposed controller acting late looks like: no new life
    (this test's input had only that, before stale lines were kept from starting a life on their own)."""
    run_1 = [(1, 1, 0, 1_000, "b1/state-change.log"), (2, 2, 1_200, 1_500, "b1/state-change.log")]
    assert life_starts([], _stated(*run_1, (1, 1, 3_000, 3_500, "b1/state-change.log"),
                                   (3, 2, 4_000, 4_500, "b1/state-change.log"))) == {"c": [3_000]}
    assert life_starts([], _stated(*run_1, (1, 1, 3_000, 4_000, "b1/state-change.log"))) == {}


def test_a_stale_controllers_requests_and_a_slow_clock_are_not_a_new_life() -> None:
    """Brokers log a deposed controller's requests (epoch 5) while its successor (epoch 6) acts: a split brain
    within one life, which must stay one. So are a lower epoch's lines just after the higher one's last (another
    host's clock behind), and the stale lines when the successor is followed by a third controller."""
    zombie = _stated((1, 5, 0, 1_000, "b1/sc.log"), (2, 6, 2_000, 20_000, "b2/sc.log"),
                     (1, 5, 8_000, 8_300, "b3/sc.log"))
    assert life_starts([], zombie) == {}
    skewed = _stated((1, 5, 0, 900, "b1/sc.log"), (2, 6, 1_000, 1_000, "b2/sc.log"), (1, 5, 1_300, 1_300, "b1/sc.log"),
                     (2, 6, 2_000, 9_000, "b1/sc.log"))
    assert life_starts([], skewed) == {}
    then_another = _stated((1, 5, 0, 1_000, "b1/sc.log"), (2, 6, 2_000, 5_000, "b2/sc.log"),
                           (1, 5, 8_000, 8_000, "b3/sc.log"), (3, 7, 9_000, 12_000, "b3/sc.log"))
    assert life_starts([], then_another) == {}


def test_the_event_logs_election_and_the_brokers_lines_of_one_run_are_one_life() -> None:
    """Two runs into one directory, each with its election lines and brokers' lines: one reset, at the second
    run's election, not another at its brokers' first line."""
    records = two_runs()
    lines = [{"cluster": "lives", "controller_id": cid, "controller_epoch": epoch, "ts_ms": T0 + ms,
              "source_file": "lives/b1/state-change.log", "line_number": None}
             for cid, epoch, start, end in ((1, 1, 5, 995), (2, 2, 1_005, 1_495),
                                            (1, 1, SECOND_RUN_MS + 5, SECOND_RUN_MS + 995))
             for ms in range(start, end + 1, 50)]
    assert life_starts(_lifecycle(records), stated_epoch_runs(lines)) == {"lives": [T0 + SECOND_RUN_MS]}


def _broker_lines() -> str:
    """A broker's state-change.log over two runs of its cluster, in two Kafka versions' wording (1.0-2.3 with
    the ``[Broker id=1]`` ident; 0.10.2-0.11 starting ``Broker 1``): no controller line at all."""
    def stamp(ms: int) -> str:
        at = datetime(2024, 5, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
        return f"[{at:%Y-%m-%d %H:%M:%S},{at.microsecond // 1000:03d}]"

    received = ("TRACE [Broker id=1] Received LeaderAndIsr request PartitionState(controllerEpoch={e}, leader=1, "
                "leaderEpoch={le}, isr=1, zkVersion={le}, replicas=1, isNew=false) correlation id {n} from controller "
                "{c} epoch {e} for partition t-0 (state.change.logger)")
    cached = ("TRACE [Broker id=1] Cached leader info PartitionState(controllerEpoch={e}, leader=1, leaderEpoch={le}, "
              "isr=1, zkVersion={le}, replicas=1, offlineReplicas=) for partition t-0 in response to UpdateMetadata "
              "request sent by controller {c} epoch {e} with correlation id {n} (state.change.logger)")
    old = ("TRACE Broker 1 received LeaderAndIsr request PartitionState(controllerEpoch={e}, leader=1, "
           "leaderEpoch={le}, isr=[1], zkVersion={le}, replicas=[1]) correlation id {n} from controller {c} epoch {e} "
           "for partition [t,0] (state.change.logger)")
    lines = [(0, received, 1, 1, 0), (10, cached, 1, 1, 0), (2_000, received, 2, 2, 1), (2_010, cached, 2, 2, 1),
             (2_500, cached, 2, 2, 1),
             (8_000, old, 1, 1, 0), (8_010, cached, 1, 1, 0), (9_000, old, 1, 1, 1), (9_500, cached, 1, 1, 1),
             (10_000, old, 3, 2, 2), (10_010, cached, 3, 2, 2)]  # run 2 fails over: epoch 1 began a life
    return "".join(f"{stamp(ms)} {text.format(c=c, e=e, le=le, n=n)}\n"
                   for n, (ms, text, c, e, le) in enumerate(lines, 1))


@pytest.mark.spark
def test_a_brokers_state_change_log_alone_gives_two_lives_and_no_split_brain(spark, tmp_path: Path) -> None:
    from zkcontroller.analytics.job import JobConfig, read_events, run

    (tmp_path / "logs" / "c").mkdir(parents=True)
    (tmp_path / "logs" / "c" / "state-change.log").write_text(_broker_lines())
    out = tmp_path / "out"
    result = run(spark, JobConfig(inputs=[str(tmp_path / "logs")], out=out, report=False))
    assert result.rows["rejected_lines"] == 0
    stated = sorted((r["controller_id"], r["controller_epoch"]) for r in read_events(spark, out).collect())
    assert stated == [(1, 1)] * 6 + [(2, 2)] * 3 + [(3, 2)] * 2  # every line names its controller and epoch

    def rows(name: str) -> list[dict[str, object]]:
        return [r.asDict() for r in spark.read.parquet(str(out / name)).collect()]

    tenures = sorted(rows("controller_tenures"), key=lambda t: t["start_at"])
    assert [(t["controller_id"], t["controller_epoch"], t["started_by"], t["events"]) for t in tenures] == [
        (1, 1, "first", 2), (2, 2, "failover", 3), (1, 1, "epoch_reset", 4), (3, 2, "failover", 2)]
    assert rows("split_brain_windows") == []
    assert [a["anomaly"] for a in rows("anomalies")] == ["controller_epoch_reset"]


def test_a_stale_controller_acting_seconds_after_its_successor_went_quiet_is_no_new_life() -> None:
    """Controllers are quiet between changes, so a deposed controller (or a broker thawed from a pause) logging
    a lower epoch a few seconds after its successor's last line, with nothing newer after it, is the normal
    shape of a split brain. It began a new life (an epoch reset), and the split brain was lost."""
    t = 100_000
    lifecycle = [{"cluster": "c", "kind": kind, "controller_id": cid, "controller_epoch": epoch, "ts_ms": ms,
                  "source_file": "controller.log", "line_number": None}
                 for kind, cid, epoch, ms in (("controller_elected", 1, 1, 0), ("controller_ready", 1, 1, 10),
                                              ("controller_elected", 2, 2, t), ("controller_ready", 2, 2, t + 50))]
    paused_broker = _stated((1, 1, 20, 30, "sc.log"), (2, 2, t + 60, t + 70, "sc.log"),
                            (1, 1, t + 5_000, t + 5_000, "b3/sc.log"), (2, 2, t + 5_010, t + 5_010, "b3/sc.log"))
    assert life_starts(lifecycle, paused_broker) == {}
    late_at_the_end = _stated((1, 1, 20, 20, "sc.log"), (2, 2, t + 60, t + 60, "sc.log"),
                              (1, 1, t + 3_000, t + 3_000, "b3/sc.log"))
    assert life_starts(lifecycle, late_at_the_end) == {}
    # the new life shows itself: an election at an epoch seen before (its lines before it, another host's clock)
    rerun = {**lifecycle[0], "ts_ms": t + 3_500}
    assert life_starts([*lifecycle, rerun], late_at_the_end) == {"c": [t + 3_000]}
    # a lower epoch stated by the very controller that held the highest: it never goes back on its own
    own = _stated((2, 2, t + 60, t + 60, "sc.log"), (2, 1, t + 3_000, t + 3_000, "sc.log"))
    assert life_starts(lifecycle, own) == {"c": [t + 3_000]}


def test_a_brokers_refusal_of_a_stale_request_never_states_an_epoch() -> None:
    """A broker's "Ignoring LeaderAndIsr request from controller C ... epoch E" refuses a stale controller:
    no line of a new life even with a climb after it."""
    refused = {"cluster": "c", "controller_id": 1, "controller_epoch": 1, "ts_ms": 5_000, "source_file": "sc.log",
               "line_number": 9, "kind": "leader_and_isr_ignored"}
    rows = [{**r, "kind": "leader_and_isr_received"} for r in _stated((2, 3, 0, 1_000, "sc.log"))]
    climb = {**refused, "controller_id": 3, "controller_epoch": 2, "ts_ms": 6_000, "kind": "fetchers_stopped"}
    assert life_starts([], stated_epoch_runs([*rows, refused, climb])) == {}
    assert life_starts([], stated_epoch_runs([*rows, {**refused, "kind": "cached_leader"}, climb])) == {"c": [5_000]}


@pytest.mark.spark
def test_a_zombie_acting_two_seconds_after_failover_is_a_split_brain_not_an_epoch_reset(
        spark, tmp_path: Path) -> None:
    """``logsets.write_scenario`` with the zombie's (controller 1, epoch 9) two state changes moved from
    10:01:00.5/01.0 to 10:01:02.0/02.5, after its successor's last stated line (10:01:00.4) by more than 1 s and
    with broker 2 refusing its request before: tenures gained (1, 9, epoch_reset), the window was gone."""
    from tests.analytics import logsets

    from zkcontroller.analytics.job import JobConfig, run

    logsets.write_scenario(tmp_path / "prod")
    changes = tmp_path / "prod" / "broker1-state-change.log"
    text = changes.read_text()
    for before, after in (("10:01:00,500", "10:01:02,000"), ("10:01:01,000", "10:01:02,500")):
        assert text.count(f"[2024-03-01 {before}] TRACE [Controller id=1 epoch=9]") == 1
        text = text.replace(f"[2024-03-01 {before}]", f"[2024-03-01 {after}]")
    changes.write_text(text)
    out = tmp_path / "out"
    run(spark, JobConfig(inputs=[str(tmp_path / "prod")], out=out, report=False))

    def rows(name: str) -> list[dict[str, object]]:
        return [r.asDict() for r in spark.read.parquet(str(out / name)).collect()]

    tenures = sorted(rows("controller_tenures"), key=lambda t: t["start_at"])
    assert [(t["controller_id"], t["controller_epoch"], t["started_by"]) for t in tenures] == [
        (1, 9, "first"), (2, 10, "failover"), (1, 1, "epoch_reset"), (3, 2, "failover")]
    [window] = rows("split_brain_windows")
    assert (window["stale_controller_id"], window["stale_epoch"], window["new_controller_id"], window["new_epoch"],
            window["stale_actions"], window["stale_refused"]) == (1, 9, 2, 10, 2, 1)
    resets = [a for a in rows("anomalies") if a["anomaly"] == "controller_epoch_reset"]
    assert [a["detail"] for a in resets] == ["epoch 1 after epoch 10"]


@pytest.mark.spark
def test_a_real_single_broker_state_change_log_over_a_zookeeper_wipe_gives_two_lives(
        spark, samples: Path, tmp_path: Path) -> None:
    """Sample 34: broker 0, controller of its one-broker cluster at epoch 39, then at epoch 1 six minutes later,
    with no election line and no failover after: only the controller that held epoch 39 going back to epoch 1
    shows the new life (a controller never returns to an older epoch of its own)."""
    from zkcontroller.analytics.job import JobConfig, _tenure_rows, read_events, run

    name = "34-bitterdone-2.3.1-state-change-deletion-failure-epoch-reset.log"
    if not (samples / name).is_file():
        pytest.skip(f"{name} not among the samples")
    out = tmp_path / "out"
    run(spark, JobConfig(inputs=[str(samples / name)], out=out, report=False))

    def rows(table: str) -> list[dict[str, object]]:
        return [r.asDict() for r in spark.read.parquet(str(out / table)).collect()]

    tenures = sorted(rows("controller_tenures"), key=lambda t: t["start_at"])
    assert [(t["controller_id"], t["controller_epoch"], t["started_by"]) for t in tenures] == [
        (0, 39, "first"), (0, 1, "epoch_reset")]
    assert rows("split_brain_windows") == []
    # the epoch going back alone gives "epoch_reset"; the second life is what ends the first life's partitions
    _, starts, _, _ = _tenure_rows(read_events(spark, out))
    epoch_1 = int(datetime(2019, 11, 24, 22, 11, 34, 935_000, tzinfo=UTC).timestamp() * 1000)
    assert list(starts.values()) == [[epoch_1]]
