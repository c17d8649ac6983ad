"""The event log's fast encoder writes exactly the text `json` wrote, for every record the schema allows."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.controller.event_log import (
    STATE_CHANGE_LOGGER,
    EventLog,
    StateChangeLogger,
    encode_record,
    encode_records,
)
from zkcontroller.model import LeaderAndIsr, TopicPartition
from zkcontroller.runtime.runtime import AsyncioRuntime

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.text(max_size=12))
values = st.one_of(scalars, st.lists(st.one_of(st.integers(-(2**40), 2**40), st.text(max_size=6)), max_size=4))
records = st.dictionaries(st.text(max_size=10), values, max_size=8)


@given(records)
def test_same_text_as_json(record: dict) -> None:
    expected = json.dumps(record, separators=(",", ":"))
    assert encode_record(record) == expected
    assert encode_record(record).isascii()


def test_non_ascii_and_huge_integers_take_the_json_path() -> None:
    record = {"type": "topic_created", "topic": "café", "big": 2**65, "isr": [1, 2]}
    assert encode_record(record) == (
        '{"type":"topic_created","topic":"caf\\u00e9","big":36893488147419103232,"isr":[1,2]}')


def test_event_log_lines_parse_back() -> None:
    lines: list[str] = []
    EventLog("c1", lambda: 42, lines.append).emit("isr_change", topic="t", partition=0, isr=[1, 2], leader=None)
    assert [json.loads(line) for line in lines] == [
        {"schema_version": json.loads(lines[0])["schema_version"], "type": "isr_change", "ts_ms": 42,
         "cluster": "c1", "topic": "t", "partition": 0, "isr": [1, 2]}]


def test_del_is_escaped_as_json_escapes_it() -> None:
    """DEL is ASCII: the fast path took orjson's raw byte, where `json` writes \\u007f (hypothesis found it)."""
    record = {"\x7f": None, "topic": "a\x7fb"}
    assert encode_record(record) == json.dumps(record, separators=(",", ":")) == '{"\\u007f":null,"topic":"a\\u007fb"}'


@given(st.lists(records, max_size=5))
def test_a_batch_encodes_as_each_record_alone(batch: list[dict]) -> None:
    assert list(encode_records(batch)) == [encode_record(r) for r in batch]


def test_per_partition_records_keep_their_field_order() -> None:
    """The step-wise record methods write the fields in the order the one-record methods always did."""
    lines: list[str] = []
    scl = StateChangeLogger(1, lambda: 3, EventLog("c", lambda: 42, lines.append, validate=True))
    tp, lai = TopicPartition("t", 0), LeaderAndIsr(2, 5, (2, 3), 7)
    scl.partition_changed(tp, "OfflinePartition", "OnlinePartition", lai)
    scl.partition_changed(tp, "NewPartition", "OfflinePartition")
    scl.replica_changed(tp, 1, "OnlineReplica", "OfflineReplica")
    scl.leader_elected(tp, "offline", 1, lai, True, None)
    scl.leader_elected(tp, "preferred", 1, lai, True, "admin")
    scl.isr_changed(tp, lai)
    head = '{"schema_version":1,"type":"%s","ts_ms":42,"cluster":"c","controller_id":1,"controller_epoch":3,' \
           '"topic":"t","partition":0,'
    assert lines == [
        head % "partition_state_change" + '"from_state":"OfflinePartition","to_state":"OnlinePartition",'
                                          '"leader":2,"isr":[2,3],"leader_epoch":5}',
        head % "partition_state_change" + '"from_state":"NewPartition","to_state":"OfflinePartition"}',
        head % "replica_state_change" + '"broker_id":1,"from_state":"OnlineReplica","to_state":"OfflineReplica"}',
        head % "leader_election" + '"strategy":"offline","old_leader":1,"leader":2,"isr":[2,3],"leader_epoch":5,'
                                   '"clean":true}',
        head % "leader_election" + '"strategy":"preferred","trigger":"admin","old_leader":1,"leader":2,'
                                   '"isr":[2,3],"leader_epoch":5,"clean":true}',
        head % "isr_change" + '"leader":2,"isr":[2,3],"leader_epoch":5}',
    ]


ints = st.integers(min_value=-(2**70), max_value=2**70)
texts = st.text(max_size=8)  # any code point: non-ASCII, DEL, quotes, backslashes, control characters
leaderships = st.builds(LeaderAndIsr, ints, ints, st.lists(ints, max_size=4).map(tuple), ints)
partitions = st.builds(TopicPartition, st.sampled_from(["t", "a\x7fb", 'q"\\', "café", "\x01\n"]) | texts, ints)


def _fast(cluster: str, controller_id: int, epoch: int, ts: int) -> tuple[list[str], StateChangeLogger]:
    """A logger writing its preformatted lines into the list (no validation: the lines as production writes them);
    each test compares them with `encode_record` of the records they stand for."""
    lines: list[str] = []
    return lines, StateChangeLogger(controller_id, lambda: epoch, EventLog(cluster, lambda: ts, lines.append))


@given(texts, ints, ints, ints, st.lists(st.tuples(partitions, texts, st.none() | leaderships), max_size=6), texts)
def test_preformatted_partition_lines_are_the_records_text(cluster, controller_id, epoch, ts, changes, to_state):
    lines, scl = _fast(cluster, controller_id, epoch, ts)
    scl.partitions_changed(iter(changes), to_state)
    assert lines == [encode_record(r) for r in scl._partition_records(changes, to_state, ts, epoch)]


@given(texts, ints, ints, ints, st.lists(st.tuples(partitions, texts), max_size=6), ints, texts)
def test_preformatted_replica_lines_are_the_records_text(cluster, controller_id, epoch, ts, changes, broker, to_state):
    lines, scl = _fast(cluster, controller_id, epoch, ts)
    scl.replicas_changed(iter(changes), broker, to_state)
    assert lines == [encode_record(r) for r in scl._replica_records(changes, broker, to_state, ts, epoch)]


@given(texts, ints, ints, ints, st.lists(st.tuples(partitions, ints, leaderships, st.booleans()), max_size=6), texts,
       st.none() | texts)
def test_preformatted_election_lines_are_the_records_text(cluster, controller_id, epoch, ts, elections, strategy,
                                                          trigger):
    lines, scl = _fast(cluster, controller_id, epoch, ts)
    scl.leaders_elected(iter(elections), strategy, trigger)
    assert lines == [encode_record(r) for r in scl._election_records(elections, strategy, trigger, ts, epoch)]


@given(texts, ints, ints, ints, st.lists(st.tuples(partitions, leaderships), max_size=6))
def test_preformatted_isr_lines_are_the_records_text(cluster, controller_id, epoch, ts, changes):
    lines, scl = _fast(cluster, controller_id, epoch, ts)
    scl.isrs_changed(iter(changes))
    assert lines == [encode_record(r) for r in scl._isr_records(changes, ts, epoch)]


def test_a_validating_log_refuses_a_line_that_is_not_its_records_text() -> None:
    log = EventLog("c", lambda: 42, [].append, validate=True)
    record = {"schema_version": 1, "type": "isr_change", "ts_ms": 42, "cluster": "c", "controller_id": 1,
              "controller_epoch": 3, "topic": "t", "partition": 0, "leader": 2, "isr": [2], "leader_epoch": 5}
    log.write_lines([encode_record(record)], [record])
    with pytest.raises(ValueError, match="differs"):
        log.write_lines([encode_record(record).replace('"isr":[2]', '"isr":[3]')], [record])


def test_a_step_reads_the_clock_once_for_its_lines_and_the_records_they_are_checked_against() -> None:
    """A validating log checks each line against its record: both must carry the step's one clock reading, or a
    clock that moves between them fails a correct line (it did, in the integration tests)."""
    ticks = iter(range(1000, 2000))
    lines: list[str] = []
    scl = StateChangeLogger(1, lambda: 3, EventLog("c", lambda: next(ticks), lines.append, validate=True))
    tp, lai = TopicPartition("t", 0), LeaderAndIsr(2, 5, (2, 3), 7)
    scl.partitions_changed([(tp, "OfflinePartition", lai), (tp, "NewPartition", None)], "OnlinePartition")
    scl.replicas_changed([(tp, "OnlineReplica")], 1, "OfflineReplica")
    scl.leaders_elected([(tp, 1, lai, True)], "offline", None)
    scl.isrs_changed([(tp, lai)])
    assert [json.loads(line)["ts_ms"] for line in lines] == [1000, 1000, 1001, 1002, 1003]


@pytest.mark.parametrize("validate", [False, True])
def test_a_lines_sink_takes_each_steps_lines_at_once_in_order(validate: bool) -> None:
    """With a ``lines_sink`` a step's per-partition lines arrive as one list; the two sinks together see every
    line once, in the order written."""
    written: list[str] = []
    batches: list[int] = []

    def lines_sink(lines: list[str]) -> None:
        batches.append(len(lines))
        written.extend(lines)

    log = EventLog("c", lambda: 42, written.append, validate=validate, lines_sink=lines_sink)
    scl = StateChangeLogger(1, lambda: 3, log)
    tps = [TopicPartition("t", p) for p in range(3)]
    log.emit("broker_failed", controller_id=1, controller_epoch=3, broker_id=2)
    scl.replicas_changed([(tp, "OnlineReplica") for tp in tps], 2, "OfflineReplica")
    log.emit("broker_failed", controller_id=1, controller_epoch=3, broker_id=3)
    scl.isrs_changed([(tp, LeaderAndIsr(1, 5, (1,), 7)) for tp in tps[:2]])
    log.flush()  # the last step's lines are held back until then (or the next record) without ``validate``
    assert batches == [3, 2]
    assert [json.loads(line)["type"] for line in written] == [
        "broker_failed", *["replica_state_change"] * 3, "broker_failed", *["isr_change"] * 2]
    plain: list[str] = []
    plain_scl = StateChangeLogger(1, lambda: 3, EventLog("c", lambda: 42, plain.append, validate=validate))
    plain_scl.event_log.emit("broker_failed", controller_id=1, controller_epoch=3, broker_id=2)
    plain_scl.replicas_changed([(tp, "OnlineReplica") for tp in tps], 2, "OfflineReplica")
    plain_scl.event_log.emit("broker_failed", controller_id=1, controller_epoch=3, broker_id=3)
    plain_scl.isrs_changed([(tp, LeaderAndIsr(1, 5, (1,), 7)) for tp in tps[:2]])
    assert plain == written


def test_a_lines_sink_gets_a_steps_lines_built_at_the_flush_with_later_records_queued_behind() -> None:
    """With a ``lines_sink`` (and no ``validate``) a step's lines are formatted only when written, at `flush` (the
    controller's event ends with `flush_soon`); a record written meanwhile (the event's own ``controller_event``, as
    it ends) is encoded at once but queued behind them, so the order stays that of the calls. The broker failure's
    ~60,000 lines were formatted before its last LeaderAndIsr was handed, a controlled shutdown's before its answer."""
    written: list[str] = []
    log = EventLog("c", lambda: 42, written.append, lines_sink=written.extend)
    scl = StateChangeLogger(1, lambda: 3, log)
    tps = [TopicPartition("t", p) for p in range(3)]
    read: list[TopicPartition] = []

    def changes(partitions: list[TopicPartition]) -> Iterator[tuple[TopicPartition, str]]:
        for tp in partitions:
            read.append(tp)
            yield tp, "OnlineReplica"

    log.emit("broker_failed", controller_id=1, controller_epoch=3, broker_id=9)  # nothing held: written at once
    assert len(written) == 1
    scl.replicas_changed(changes(tps[:2]), 2, "OfflineReplica")
    log.emit("broker_failed", controller_id=1, controller_epoch=3, broker_id=2)
    scl.replicas_changed(changes(tps[2:]), 3, "OfflineReplica")
    assert (len(written), read) == (1, [])  # nothing built yet, the record queued behind the step
    log.flush()
    assert read == tps
    assert [(r["type"], r.get("partition"), r.get("broker_id")) for r in map(json.loads, written)] == [
        ("broker_failed", None, 9), ("replica_state_change", 0, 2), ("replica_state_change", 1, 2),
        ("broker_failed", None, 2), ("replica_state_change", 2, 3)]
    log.flush()  # nothing held: nothing written again
    assert len(written) == 5


def test_flush_soon_writes_the_held_lines_in_the_loops_next_turn() -> None:
    """The controller's event ends with `flush_soon`: what the event made ready (the tasks a LeaderAndIsr or an
    answer woke) runs before the lines are built; with nothing held nothing is scheduled."""
    written: list[str] = []
    log = EventLog("c", lambda: 42, written.append, lines_sink=written.extend)
    scl = StateChangeLogger(1, lambda: 3, log)

    async def event() -> list[int]:
        loop = asyncio.get_running_loop()
        runtime = AsyncioRuntime()
        log.flush_soon(runtime)
        assert len(loop._ready) == 0  # type: ignore[attr-defined]  # nothing held: nothing scheduled
        seen: list[int] = []
        loop.call_soon(lambda: seen.append(len(written)))  # ready before the event ends, as a woken task
        scl.replicas_changed([(TopicPartition("t", 0), "OnlineReplica")], 2, "OfflineReplica")
        log.flush_soon(runtime)
        seen.append(len(written))
        await asyncio.sleep(0)
        seen.append(len(written))
        return seen

    assert asyncio.run(event()) == [0, 0, 1]


@pytest.mark.parametrize(("epoch", "prefix"), [(0, "[Controller id=1] "), (3, "[Controller id=1 epoch=3] "),
                                               (-(2**31), "[Controller id=1 epoch=-2147483648] ")])
def test_the_state_change_ident_names_any_epoch_but_none(epoch: int, prefix: str,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    """An epoch wrapped past Int.MaxValue (Kafka's Int overflow) is printed, as Kafka's StateChangeLogger does."""
    caplog.set_level(logging.INFO, STATE_CHANGE_LOGGER)
    StateChangeLogger(1, lambda: epoch, EventLog("c", lambda: 42, [].append)).info("x")
    assert [r.getMessage() for r in caplog.records] == [prefix + "x"]
