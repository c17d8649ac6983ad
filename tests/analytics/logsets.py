"""Log sets the analytics tests share, written to a temporary directory and analyzed once per session.

* ``prod/``: Kafka-format logs with a known story (see ``write_scenario``).
* ``kafka-demo/``: what ``zkcontroller demo`` writes (events.jsonl beside Kafka-format logs of the same run).
* ``sim/sim-events.jsonl.gz``: an event log with a split brain and two bad lines.
* four real Kafka samples, clustered by ``SAMPLE_PATTERN``.
* ``broken/``: a truncated ``.gz``, a line that is not UTF-8, our own Python traceback after a record, and a
  membership line whose broker id does not fit 32 bits.
"""

from __future__ import annotations

import gzip
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from zkcontroller.event_schema import validate_record

SIM_T0 = 1_700_000_000_000
SAMPLE_FILES = ("01-guenterh-2.7-broker1-controller.log", "02-guenterh-2.7-broker1-state-change.log",
                "17-andrei-0.10.2-controller-unclean.log", "19-andrei-0.10.2-state-change-unclean-election.log")
SAMPLE_PATTERN = r"/\d+-([a-z0-9]+)-"
T0 = datetime(2024, 3, 1, 10, 0, 0, tzinfo=UTC)
KC, SC = "(kafka.controller.KafkaController)", "(state.change.logger)"
T2 = T0 + timedelta(hours=2)


def _at(t: datetime, ms: int) -> str:
    stamp = t + timedelta(milliseconds=ms)
    return f"[{stamp:%Y-%m-%d %H:%M:%S},{stamp.microsecond // 1000:03d}]"


def naive(t: datetime, ms: int) -> datetime:
    return (t + timedelta(milliseconds=ms)).replace(tzinfo=None)


def write_scenario(directory: Path) -> None:
    c1 = "[Controller id=1 epoch=9]"
    controller_1 = [
        f"{_at(T0, 0)} INFO {c1} 1 successfully elected as the controller. Epoch incremented to 9 and epoch zk "
        f"version is now 9 {KC}",
        f"{_at(T0, 100)} INFO {c1} Ready to serve as the new controller with epoch 9 {KC}",
        f"{_at(T0, 1_000)} INFO {c1} Newly added brokers: , deleted brokers: 3, bounced brokers: , all live "
        f"brokers: 1,2 {KC}",
        f"{_at(T0, 1_001)} INFO {c1} Broker failure callback for 3 {KC}",
        f"{_at(T0, 62_000)} INFO [Controller id=1] Resigned {KC}",
        f"{_at(T2, 0)} INFO [Controller id=1 epoch=1] 1 successfully elected as the controller. Epoch incremented "
        f"to 1 and epoch zk version is now 1 {KC}",
        f"{_at(T2, 50)} INFO [Controller id=1 epoch=1] Ready to serve as the new controller with epoch 1 {KC}",
        f"{_at(T2, 10_000)} INFO [Controller id=1] Resigned {KC}",
    ]
    state_change_1 = [
        f"{_at(T0, 1_010)} TRACE {c1} Changed partition t-0 state from OnlinePartition to OfflinePartition {SC}",
        "[2024-03-01 10:00:01,500] WARN [OfflinePartitionLeaderSelector]: No broker in ISR is alive for [t,0]. "
        "Elect leader 2 from live brokers 2. There's potential data loss. "
        "(kafka.controller.OfflinePartitionLeaderSelector)",
        f"{_at(T0, 1_500)} TRACE {c1} Changed partition t-0 from OfflinePartition to OnlinePartition with state "
        f"LeaderAndIsr(leader=2, leaderEpoch=1, isr=List(2), zkVersion=1) {SC}",
        f"{_at(T0, 60_500)} TRACE {c1} Changed partition t-1 state from OnlinePartition to OfflinePartition {SC}",
        f"{_at(T0, 61_000)} TRACE {c1} Changed partition t-2 state from OnlinePartition to OfflinePartition {SC}",
    ]
    controller_2 = [
        f"{_at(T0, 60_000)} INFO [Controller id=2 epoch=10] 2 successfully elected as the controller. Epoch "
        f"incremented to 10 and epoch zk version is now 10 {KC}",
        f"{_at(T0, 60_300)} INFO [Controller id=2 epoch=10] Ready to serve as the new controller with epoch 10 {KC}",
        f"{_at(T0, 120_000)} INFO [Controller id=2] Resigned {KC}",
    ]
    state_change_2 = [
        f"{_at(T0, 61_500)} WARN [Broker id=2] Ignoring LeaderAndIsr request from controller 1 with correlation id "
        f"7 epoch 9 for partition t-1 since its associated leader epoch 3 is not higher than the current leader "
        f"epoch 3 {SC}",
        f"{_at(T0, 60_400)} TRACE [Controller id=2 epoch=10] Changed partition t-1 from OnlinePartition to "
        f"OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=4, isr=List(2), zkVersion=4) {SC}",
    ]
    controller_3 = [
        f"{_at(T2, 10_005)} INFO [Controller id=3 epoch=2] 3 successfully elected as the controller. Epoch "
        f"incremented to 2 and epoch zk version is now 2 {KC}",
        f"{_at(T2, 10_100)} INFO [Controller id=3 epoch=2] Ready to serve as the new controller with epoch 2 {KC}",
    ]
    directory.mkdir(parents=True)
    for name, lines in (("broker1-controller.log", controller_1), ("broker1-state-change.log", state_change_1),
                        ("broker2-controller.log", controller_2), ("broker2-state-change.log", state_change_2),
                        ("broker3-controller.log", controller_3)):
        (directory / name).write_text("\n".join(lines) + "\n")


def _record(ms: int, rtype: str, **fields: object) -> dict[str, object]:
    record = {"schema_version": 1, "type": rtype, "ts_ms": SIM_T0 + ms, "cluster": "sim", **fields}
    assert validate_record(record) == [], record
    return record


def sim_event_log() -> list[str]:
    """A split-brain story: controller 1 (epoch 1) keeps acting after controller 2 (epoch 2) took over."""
    c1, c2 = {"controller_id": 1, "controller_epoch": 1}, {"controller_id": 2, "controller_epoch": 2}
    records = [
        _record(0, "controller_elected", **c1), _record(200, "controller_ready", **c1),
        _record(300, "partition_state_change", **c1, topic="orders", partition=0, from_state="NewPartition",
                to_state="OnlinePartition", leader=3, isr=[3, 1], leader_epoch=0),
        _record(1000, "broker_failed", **c1, broker_id=3),
        _record(1010, "partition_state_change", **c1, topic="orders", partition=0, from_state="OnlinePartition",
                to_state="OfflinePartition"),
        _record(1500, "leader_election", **c1, topic="orders", partition=0, strategy="offline", trigger="BrokerChange",
                old_leader=3, leader=1, isr=[1], leader_epoch=1, clean=True),
        _record(1500, "partition_state_change", **c1, topic="orders", partition=0, from_state="OfflinePartition",
                to_state="OnlinePartition", leader=1, isr=[1], leader_epoch=1),
        _record(1600, "controller_event", **c1, event="BrokerChange", queue_time_ms=5, processing_time_ms=595),
        _record(5000, "controller_elected", **c2), _record(5400, "controller_ready", **c2),
        _record(6000, "controller_event", **c1, event="TopicChange", queue_time_ms=1500, processing_time_ms=20),
    ]
    lines = [json.dumps(r) for r in records]
    lines.insert(3, '{"schema_version": 1, "type": "broker_failed", "ts_ms": "yesterday"')  # line 4: cut off
    lines.append(json.dumps({**records[0], "schema_version": 2}))  # line 13: a future writer
    lines.append(json.dumps({**records[0], "ts_ms": 10**17}))  # line 14: beyond year 9999 (Spark overflows)
    lines.append(json.dumps({**records[0], "controller_epoch": 2**40}))  # line 15: beyond the int column
    return lines




def write_sim(directory: Path) -> None:
    directory.mkdir(parents=True)
    with gzip.open(directory / "sim-events.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(sim_event_log()) + "\n")


BROKEN_GOOD_LINES = 200
BROKEN_BIG_BROKER_ID = 99999999999
BROKEN_NOISE_BYTES = 4096


def write_broken(directory: Path) -> None:
    """A .gz cut off half-way, a line of Latin-1 bytes, a record followed by one of our tracebacks, a file of random
    bytes and a line with a broker id beyond int32."""
    directory.mkdir(parents=True)
    lines = "".join(f"[2024-05-01 00:00:{i % 60:02d},{i % 1000:03d}] INFO [Controller id=1 epoch=3] Shutting down "
                    f"broker {i} {KC}\n" for i in range(BROKEN_GOOD_LINES))
    data = gzip.compress(lines.encode() * 40)
    (directory / "controller.log.gz").write_bytes(data[: len(data) // 2])
    latin = f"[2024-05-01 00:01:00,000] INFO [Controller id=1 epoch=3] Topic caf\xe9 {KC}".encode("latin-1")
    traceback = [
        f"[2024-05-01 00:02:00,000] ERROR [Controller id=1 epoch=3] Error processing event BrokerChange {KC}",
        "Traceback (most recent call last):",
        '  File "/srv/zkcontroller/controller/events.py", line 88, in process',
        "    handler(event)",
        "    ~~~~~~~^^^^^^^",
        "KeyError: 'broker 7'",
        f"[2024-05-01 00:02:01,000] INFO [Controller id=1 epoch=3] Resigned {KC}",
    ]
    (directory / "state-change.log").write_bytes(b"\n".join([latin, *(t.encode() for t in traceback)]) + b"\n")
    # a whole file of random bytes: every line rejected, a warning naming the file
    (directory / "noise.log").write_bytes(random.Random(7).randbytes(BROKEN_NOISE_BYTES))
    (directory / "membership.log").write_text(  # one deleted broker id beyond int32 beside a good one
        f"[2024-05-01 00:03:00,000] INFO [Controller id=1 epoch=3] Newly added brokers: , deleted brokers: "
        f"4,{BROKEN_BIG_BROKER_ID}, all live brokers: 1,2 {KC}\n")
