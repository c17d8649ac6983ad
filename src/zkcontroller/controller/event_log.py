"""The controller's two logs: the JSONL event log (our contract with the analytics job) and Kafka-format
``state-change.log`` / ``controller.log`` lines, so tools that read Kafka's logs read ours.

Records follow ``zkcontroller.event_schema`` (``docs/event-log.md``). Kafka-format lines go through
Python logging under Kafka's logger names (``state.change.logger``, ``kafka.controller.KafkaController``)
with Kafka's ``[Controller id=<id> epoch=<e>] `` prefix; `cluster.logs` (`LogFiles`) points those loggers at files
laid out as ``[%d] %p %m (%c)%n``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from zkcontroller.event_schema import SCHEMA_VERSION, validate_record
from zkcontroller.model import LeaderAndIsr, TopicPartition
from zkcontroller.runtime.log_lines import TRACE, write_line
from zkcontroller.runtime.runtime import Runtime

STATE_CHANGE_LOGGER = "state.change.logger"
CONTROLLER_LOGGER = "kafka.controller.KafkaController"
DELETION_LOGGER = "kafka.controller.TopicDeletionManager"

Sink = Callable[[str], None]
LinesSink = Callable[[list[str]], None]
"""Takes a step's preformatted per-partition lines at once (`EventLog.write_lines`), in order."""

_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"))
"""What ``json.dumps(record, separators=(",", ":"))`` uses, built once: ``dumps`` with any non-default
argument builds a new encoder per call, a measurable cost at hundreds of thousands of records."""


_json_text = _COMPACT_JSON.encode
"""A string's JSON text as a record's line carries it: ``json``'s (ASCII, escapes), which orjson's equals for every
ASCII string but those with DEL, and a record with any other string takes ``json`` whole (`encode_records`)."""

FAST_ENCODER = True
"""False: every record through ``json`` (the benchmark's before-figure)."""


def encode_record(record: dict[str, Any]) -> str:
    """One compact JSON line: for what the schema allows (strings, integers, booleans, lists of them) the
    same text ``_COMPACT_JSON`` writes (see `encode_records`)."""
    return next(encode_records((record,)))


def encode_records(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """`encode_record` of each record, in one loop (a broker failure writes about 60,000 records).

    orjson encodes several times faster (the event log was 7–9 % of a broker failure). It writes non-ASCII as
    UTF-8 where ``json`` escapes it (``\\u00e9``), writes DEL raw, and refuses integers beyond 64 bits; such a
    record (rare: topic names are ASCII) takes the ``json`` path, so every line stays ASCII and identical to
    before.
    """
    slow = _COMPACT_JSON.encode
    if not FAST_ENCODER:
        yield from map(slow, records)
        return
    dumps = orjson.dumps
    for record in records:
        try:
            out = dumps(record)
        except TypeError:  # orjson.JSONEncodeError: integers beyond 64 bits, unsupported types
            yield slow(record)
            continue
        # DEL is ASCII, but `json` escapes it (\u007f) where orjson writes it raw
        yield out.decode("ascii") if out.isascii() and b"\x7f" not in out else slow(record)


class EventLog:
    """Writes one JSON line per record to ``sink``; ``validate`` checks each against the schema (tests)."""

    def __init__(self, cluster: str, clock: Callable[[], int], sink: Sink | None, *, validate: bool = False,
                 lines_sink: LinesSink | None = None):
        self.cluster = cluster
        self.clock = clock
        self.sink = sink
        """None: nothing is recorded (callers test it before building a record)."""
        self.lines_sink = lines_sink
        """Optional, with ``sink``: takes the per-partition state-change records of one step (`write_lines`,
        ``partition_state_change``, ``replica_state_change``, ``leader_election``, ``isr_change``) as one list,
        where ``sink`` would be called once per line, 60,000 times per broker failure. Every other record
        still goes to ``sink``; the two together see every line once, in the order written.

        With it, a step's lines are built when they are written: at `flush` (each controller event ends with
        `flush_soon`); records written meanwhile (the event's own ``controller_event``, written as it ends) queue
        behind them, so the file's order is that of the calls. A broker failure's ~60,000 lines (~25 ms) are then
        formatted after its last LeaderAndIsr is handed, a controlled shutdown's after its answer, not before. The sink
        without it (the simulator's) still gets each line at once: its trace interleaves the lines with records
        the world makes while the controller awaits."""
        self._pending: list[tuple[Iterable[str], bool]] = []
        """Lines not yet written (with ``lines_sink``), in order: a step's, not yet built (True: for ``lines_sink``),
        or a record's written after it (False: for ``sink``, encoded when written, queued behind them)."""
        self._validate = validate

    @property
    def enabled(self) -> bool:
        return self.sink is not None

    def record(self, record_type: str) -> dict[str, Any]:
        """A new record's common fields, in the order every record starts with; callers add the rest."""
        return {"schema_version": SCHEMA_VERSION, "type": record_type, "ts_ms": self.clock(), "cluster": self.cluster}

    def emit(self, record_type: str, **fields: Any) -> None:
        """One record; fields that are None are left out."""
        if self.sink is None:
            return
        record = self.record(record_type)
        record.update((k, v) for k, v in fields.items() if v is not None)
        self.write(record)

    def write(self, record: dict[str, Any]) -> None:
        """A whole record begun by ``record``."""
        self.write_all((record,))

    def write_all(self, records: Iterable[dict[str, Any]]) -> None:
        """Whole records, in order: the per-partition records (tens of thousands per broker failure) come as one
        generator per step, so each costs its dict and its encoding, not a chain of method calls."""
        sink = self.sink
        if sink is None:
            return
        if self._validate:
            records = map(self._validated, records)
        if self._pending:  # behind the held lines, encoded now (a record may be a view of what changes later)
            self._pending.append((list(encode_records(records)), False))
            return
        for line in encode_records(records):
            sink(line)

    @property
    def validates(self) -> bool:
        return self._validate

    @property
    def writes_lines(self) -> bool:
        """Whether the per-partition records may come as preformatted lines (`StateChangeLogger`'s fast path):
        not in the benchmark's ``json`` before-figure (`FAST_ENCODER` off)."""
        return FAST_ENCODER

    def write_lines(self, lines: Iterable[str], records: Iterable[dict[str, Any]]) -> None:
        """Preformatted lines, one per record of ``records`` (built only here, with ``validate``: then each line
        must be the very text `encode_record` gives for its record, which must pass the schema). With
        ``lines_sink`` and without ``validate``, held back until `flush` (see ``lines_sink``)."""
        sink = self.sink
        if sink is None:
            return
        lines_sink = self.lines_sink
        if not self._validate:
            if lines_sink is not None:
                self._pending.append((lines, True))  # built and written at `flush` (see ``lines_sink``)
                return
            for line in lines:
                sink(line)
            return
        if self._pending:  # never with ``validate`` (nothing is held then); kept for order all the same
            self.flush()
        lines, records = list(lines), list(records)
        if len(lines) != len(records):
            raise ValueError(f"{len(lines)} preformatted lines for {len(records)} records")
        for line, record in zip(lines, records, strict=True):
            expected = encode_record(self._validated(record))
            if line != expected:
                raise ValueError(f"preformatted line {line!r} differs from the record's {expected!r}")
            if lines_sink is None:
                sink(line)
        if lines_sink is not None:
            lines_sink(lines)

    def flush_soon(self, runtime: Runtime) -> None:
        """`flush` in the loop's next turn (a task of ``runtime``'s), if any step's lines are held: what the event
        made ready (a LeaderAndIsr on its way, the answer to a ControlledShutdown) runs first. Order is kept all the
        same: any record or step written meanwhile queues behind the held lines. Nothing is scheduled when nothing
        is held (the simulator's log never holds any: its loop steps stay as they were)."""
        if self._pending:
            runtime.spawn(self._flush_now(), "event-log flush")

    async def _flush_now(self) -> None:
        self.flush()

    def flush(self) -> None:
        """Build and write the steps' lines `write_lines` holds back (with ``lines_sink``) and the records queued
        behind them, in order."""
        sink, lines_sink = self.sink, self.lines_sink
        while self._pending:
            pending, self._pending = self._pending, []
            if sink is None or lines_sink is None:
                continue
            for lines, as_step in pending:
                if as_step:
                    lines_sink(list(lines))
                else:
                    for line in lines:
                        sink(line)

    @staticmethod
    def _validated(record: dict[str, Any]) -> dict[str, Any]:
        problems = validate_record(record)
        if problems:
            raise ValueError(f"invalid event-log record {record}: {problems}")
        return record


class PrefixedLogger:
    """A Kafka-style logger: every line starts with its class's fixed ``logIdent`` (``prefix``):
    ``[Controller id=<id>] `` for ``KafkaController`` (without the epoch, which only the state-change logger
    prints), ``[Topic Deletion Manager <id>] `` for ``TopicDeletionManager``, none for
    ``ControllerBrokerRequestBatch``."""

    def __init__(self, name: str, prefix: str) -> None:
        self._log = logging.getLogger(name)
        self._fixed_prefix = prefix

    def _prefix(self) -> str:
        return self._fixed_prefix

    def is_enabled_for(self, level: int) -> bool:
        """Callers check this before building a per-partition line, so a disabled TRACE costs no formatting."""
        return self._log.isEnabledFor(level)

    def log(self, level: int, msg: str, exc: BaseException | None = None) -> None:
        logger = self._log
        if not logger.isEnabledFor(level):
            return
        write_line(logger, level, self._prefix() + msg, exc)

    def trace(self, msg: str) -> None:
        self.log(TRACE, msg)

    def debug(self, msg: str) -> None:
        self.log(logging.DEBUG, msg)

    def info(self, msg: str) -> None:
        self.log(logging.INFO, msg)

    def warn(self, msg: str) -> None:
        self.log(logging.WARNING, msg)

    def error(self, msg: str, exc: BaseException | None = None) -> None:
        self.log(logging.ERROR, msg, exc)


class StateChangeLogger(PrefixedLogger):
    """Kafka's ``state.change.logger`` plus the matching JSONL records for every transition."""

    def __init__(self, controller_id: int, epoch: Callable[[], int], event_log: EventLog) -> None:
        super().__init__(STATE_CHANGE_LOGGER, f"[Controller id={controller_id}] ")
        self.controller_id = controller_id
        self.epoch = epoch
        self.event_log = event_log

    def _prefix(self) -> str:
        """Kafka's ``StateChangeLogger`` ident: the controller's epoch once it has one (0 is none; an epoch wrapped
        past Int.MaxValue is negative, and printed as Kafka prints it)."""
        epoch = self.epoch()
        return f"[Controller id={self.controller_id} epoch={epoch}] " if epoch != 0 else self._fixed_prefix

    # One method per record type, each taking a step's partitions at once: a broker failure writes about 60,000
    # of these records. The common fields (``EventLog.record``'s, then who wrote it and which partition) are in
    # each literal. The epoch and the clock are read once per call: a step runs within one event, and its
    # records share the step's timestamp.
    #
    # Each record is written as a preformatted line (about a quarter of the time of a dict encoded by orjson):
    # the text up to the topic's value once per step, each topic's and state's JSON once per step, then the
    # integers. That is the text `encode_record` writes for the dict literal beside it, field for field: a
    # string's JSON text is `_json_text`'s (see there), an integer's is ``str`` (for ``int``s of any size; the
    # fields are ints from the controller's NamedTuples, never bools), a list of ints is "[" + their texts + "]".
    # The dict literals stay as the definition: with ``validate`` (the tests) every line is checked against its
    # record's text (`EventLog.write_lines`), and without `FAST_ENCODER` they are what is written.
    #
    # With a ``lines_sink`` the lines are built later (`EventLog.flush`, after the event): the items a caller
    # passes (often a lazy ``zip`` or generator over its own lists) must not change after the call. Every caller
    # passes lists or tuples it built for the call, or iterators over such, and immutable NamedTuples in them.

    def _line_start(self, record_type: str, ts: int, epoch: int) -> str:
        """A step's records' common text, up to the topic's value."""
        return (f'{{"schema_version":{SCHEMA_VERSION},"type":{_json_text(record_type)},"ts_ms":{ts},'
                f'"cluster":{_json_text(self.event_log.cluster)},"controller_id":{self.controller_id},'
                f'"controller_epoch":{epoch},"topic":')

    def _step_clock(self) -> tuple[int, int]:
        """The step's timestamp and the controller's epoch, read once: its lines and (when validating) the
        records they are checked against carry the same."""
        return self.event_log.clock(), self.epoch()

    def _write_step(self, kind: str, items: Iterable[Any], lines: Callable[[Iterable[Any], str], Iterator[str]],
                    records: Callable[[Iterable[Any], int, int], Iterator[dict[str, Any]]]) -> None:
        """One step's per-partition records of ``kind``, all at one clock reading: as preformatted ``lines`` (given
        the items and the start every line of this kind and step shares), or as dict ``records`` where the sink
        takes no lines; a validating log gets both, to check each line against its record."""
        log = self.event_log
        if log.sink is None:
            return
        if not log.writes_lines:
            log.write_all(records(items, *self._step_clock()))
            return
        if log.validates:
            items = list(items)
        ts, epoch = self._step_clock()
        log.write_lines(lines(items, self._line_start(kind, ts, epoch)),
                        records(items, ts, epoch) if log.validates else ())

    def partition_changed(
        self, tp: TopicPartition, from_state: str, to_state: str, leader_and_isr: LeaderAndIsr | None = None
    ) -> None:
        self.partitions_changed(((tp, from_state, leader_and_isr),), to_state)

    def partitions_changed(self, changes: Iterable[tuple[TopicPartition, str, LeaderAndIsr | None]],
                           to_state: str) -> None:
        """``partition_state_change`` records: (partition, from state, new leadership if any) → ``to_state``."""
        def lines(changes: Iterable[tuple[TopicPartition, str, LeaderAndIsr | None]], start: str) -> Iterator[str]:
            to_text = _json_text(to_state)
            topics: dict[str, str] = {}
            states: dict[str, str] = {}
            isrs: dict[tuple[int, ...], str] = {}
            for (topic, partition), from_state, lai in changes:
                head = topics.get(topic)
                if head is None:
                    head = topics[topic] = f'{start}{_json_text(topic)},"partition":'
                middle = states.get(from_state)
                if middle is None:
                    middle = states[from_state] = f',"from_state":{_json_text(from_state)},"to_state":{to_text}'
                if lai is None:
                    yield f"{head}{partition}{middle}}}"
                else:
                    isr = isrs.get(lai.isr)
                    if isr is None:
                        isr = isrs[lai.isr] = _ints_text(lai.isr)
                    yield (f'{head}{partition}{middle},"leader":{lai.leader},"isr":[{isr}],'
                           f'"leader_epoch":{lai.leader_epoch}}}')

        self._write_step("partition_state_change", changes, lines,
                         lambda changes, ts, epoch: self._partition_records(changes, to_state, ts, epoch))

    def _partition_records(self, changes: Iterable[tuple[TopicPartition, str, LeaderAndIsr | None]],
                           to_state: str, ts: int, epoch: int) -> Iterator[dict[str, Any]]:
        cluster, controller_id = self.event_log.cluster, self.controller_id
        return (
            {"schema_version": SCHEMA_VERSION, "type": "partition_state_change", "ts_ms": ts,
             "cluster": cluster, "controller_id": controller_id, "controller_epoch": epoch, "topic": topic,
             "partition": partition, "from_state": from_state, "to_state": to_state}
            if lai is None else
            {"schema_version": SCHEMA_VERSION, "type": "partition_state_change", "ts_ms": ts,
             "cluster": cluster, "controller_id": controller_id, "controller_epoch": epoch, "topic": topic,
             "partition": partition, "from_state": from_state, "to_state": to_state, "leader": lai.leader,
             "isr": list(lai.isr), "leader_epoch": lai.leader_epoch}
            for (topic, partition), from_state, lai in changes)

    def replica_changed(self, tp: TopicPartition, broker_id: int, from_state: str, to_state: str) -> None:
        self.replicas_changed(((tp, from_state),), broker_id, to_state)

    def replicas_changed(self, changes: Iterable[tuple[TopicPartition, str]], broker_id: int,
                         to_state: str) -> None:
        """``replica_state_change`` records of one broker's replicas: (partition, from state) → ``to_state``."""
        def lines(changes: Iterable[tuple[TopicPartition, str]], start: str) -> Iterator[str]:
            to_text = _json_text(to_state)
            topics: dict[str, str] = {}
            states: dict[str, str] = {}
            for (topic, partition), from_state in changes:
                head = topics.get(topic)
                if head is None:
                    head = topics[topic] = f'{start}{_json_text(topic)},"partition":'
                tail = states.get(from_state)
                if tail is None:
                    tail = states[from_state] = (f',"broker_id":{broker_id},"from_state":{_json_text(from_state)},'
                                                 f'"to_state":{to_text}}}')
                yield f"{head}{partition}{tail}"

        self._write_step("replica_state_change", changes, lines,
                         lambda changes, ts, epoch: self._replica_records(changes, broker_id, to_state, ts, epoch))

    def _replica_records(self, changes: Iterable[tuple[TopicPartition, str]], broker_id: int,
                         to_state: str, ts: int, epoch: int) -> Iterator[dict[str, Any]]:
        cluster, controller_id = self.event_log.cluster, self.controller_id
        return (
            {"schema_version": SCHEMA_VERSION, "type": "replica_state_change", "ts_ms": ts, "cluster": cluster,
             "controller_id": controller_id, "controller_epoch": epoch, "topic": topic, "partition": partition,
             "broker_id": broker_id, "from_state": from_state, "to_state": to_state}
            for (topic, partition), from_state in changes)

    def leader_elected(
        self, tp: TopicPartition, strategy: str, old_leader: int, new: LeaderAndIsr, clean: bool, trigger: str | None
    ) -> None:
        self.leaders_elected(((tp, old_leader, new, clean),), strategy, trigger)

    def leaders_elected(self, elections: Iterable[tuple[TopicPartition, int, LeaderAndIsr, bool]], strategy: str,
                        trigger: str | None) -> None:
        """``leader_election`` records: (partition, old leader, new leadership, clean)."""
        def lines(elections: Iterable[tuple[TopicPartition, int, LeaderAndIsr, bool]], start: str) -> Iterator[str]:
            middle = f',"strategy":{_json_text(strategy)}'
            if trigger is not None:
                middle += f',"trigger":{_json_text(trigger)}'
            middle += ',"old_leader":'
            topics: dict[str, str] = {}
            isrs: dict[tuple[int, ...], str] = {}
            for (topic, partition), old_leader, new, clean in elections:
                head = topics.get(topic)
                if head is None:
                    head = topics[topic] = f'{start}{_json_text(topic)},"partition":'
                isr = isrs.get(new.isr)
                if isr is None:
                    isr = isrs[new.isr] = _ints_text(new.isr)
                yield (f'{head}{partition}{middle}{old_leader},"leader":{new.leader},"isr":[{isr}],'
                       f'"leader_epoch":{new.leader_epoch},"clean":{"true" if clean else "false"}}}')

        self._write_step("leader_election", elections, lines,
                         lambda elections, ts, epoch: self._election_records(elections, strategy, trigger, ts, epoch))

    def _election_records(self, elections: Iterable[tuple[TopicPartition, int, LeaderAndIsr, bool]], strategy: str,
                          trigger: str | None, ts: int, epoch: int) -> Iterator[dict[str, Any]]:
        cluster, controller_id = self.event_log.cluster, self.controller_id
        return (
            {"schema_version": SCHEMA_VERSION, "type": "leader_election", "ts_ms": ts, "cluster": cluster,
             "controller_id": controller_id, "controller_epoch": epoch, "topic": topic, "partition": partition,
             "strategy": strategy, "old_leader": old_leader, "leader": new.leader, "isr": list(new.isr),
             "leader_epoch": new.leader_epoch, "clean": clean}
            if trigger is None else
            {"schema_version": SCHEMA_VERSION, "type": "leader_election", "ts_ms": ts, "cluster": cluster,
             "controller_id": controller_id, "controller_epoch": epoch, "topic": topic, "partition": partition,
             "strategy": strategy, "trigger": trigger, "old_leader": old_leader, "leader": new.leader,
             "isr": list(new.isr), "leader_epoch": new.leader_epoch, "clean": clean}
            for (topic, partition), old_leader, new, clean in elections)

    def isr_changed(self, tp: TopicPartition, leader_and_isr: LeaderAndIsr) -> None:
        self.isrs_changed(((tp, leader_and_isr),))

    def isrs_changed(self, changes: Iterable[tuple[TopicPartition, LeaderAndIsr]]) -> None:
        """``isr_change`` records: (partition, the leadership written)."""
        def lines(changes: Iterable[tuple[TopicPartition, LeaderAndIsr]], start: str) -> Iterator[str]:
            topics: dict[str, str] = {}
            isrs: dict[tuple[int, ...], str] = {}
            for (topic, partition), lai in changes:
                head = topics.get(topic)
                if head is None:
                    head = topics[topic] = f'{start}{_json_text(topic)},"partition":'
                isr = isrs.get(lai.isr)
                if isr is None:
                    isr = isrs[lai.isr] = _ints_text(lai.isr)
                yield f'{head}{partition},"leader":{lai.leader},"isr":[{isr}],"leader_epoch":{lai.leader_epoch}}}'

        self._write_step("isr_change", changes, lines, self._isr_records)

    def _isr_records(self, changes: Iterable[tuple[TopicPartition, LeaderAndIsr]], ts: int, epoch: int
                     ) -> Iterator[dict[str, Any]]:
        cluster, controller_id = self.event_log.cluster, self.controller_id
        return (
            {"schema_version": SCHEMA_VERSION, "type": "isr_change", "ts_ms": ts, "cluster": cluster,
             "controller_id": controller_id, "controller_epoch": epoch, "topic": topic, "partition": partition,
             "leader": lai.leader, "isr": list(lai.isr), "leader_epoch": lai.leader_epoch}
            for (topic, partition), lai in changes)


def _ints_text(values: Iterable[int]) -> str:
    """A list of ints' JSON text without its brackets (made once per distinct ISR of a step: a tuple of ints,
    so equal ISRs have one text)."""
    return ",".join(map(str, values))


def render_leader_and_isr(lai: LeaderAndIsr) -> str:
    """Kafka's LeaderAndIsr.toString: ``LeaderAndIsr(leader=2, leaderEpoch=5, isr=List(2, 3), zkVersion=7)``."""
    isr = ", ".join(str(r) for r in lai.isr)
    return (
        f"LeaderAndIsr(leader={lai.leader}, leaderEpoch={lai.leader_epoch}, isr=List({isr}), "
        f"zkVersion={lai.zk_version})"
    )


def render_leader_isr_and_epoch(lai: LeaderAndIsr, controller_epoch: int) -> str:
    """Kafka 2.8's ``LeaderIsrAndControllerEpoch.toString``, e.g. ``(Leader:2,ISR:2,3,LeaderEpoch:5,ControllerEpoch:3)``
    (Kafka's own 2.x and 3.0 logs; ``ZkVersion:`` joined the string only in 3.1)."""
    isr = ",".join(str(r) for r in lai.isr)
    return f"(Leader:{lai.leader},ISR:{isr},LeaderEpoch:{lai.leader_epoch},ControllerEpoch:{controller_epoch})"
