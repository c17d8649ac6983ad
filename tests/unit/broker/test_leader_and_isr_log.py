"""The broker's Kafka 2.8 INFO lines for a LeaderAndIsr request (state-change.log and the fetcher manager's), with
Kafka's text, and read back by our own analytics parser as the became_leader / became_follower rows."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, ParsedLine
from zkcontroller.broker.leader_and_isr_log import LeaderAndIsrLog
from zkcontroller.cluster.logs import KafkaFormatter
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import LeaderAndIsrPartitionState

from .helpers import leader_and_isr
from .replica_helpers import Brokers

LOGGERS = ("state.change.logger", "kafka.server.ReplicaFetcherManager")


@pytest.fixture
def brokers() -> Iterator[Brokers]:
    b = Brokers()
    yield b
    b.close()


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.name, r.getMessage()) for r in caplog.records if r.name in LOGGERS]


def st(partition: int, leader: int, epoch: int, isr: tuple[int, ...] = (2, 1, 3),
       adding: tuple[int, ...] = (), removing: tuple[int, ...] = ()) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState("t", partition, 4, leader, epoch, isr, 0, (1, 2, 3),
                                      adding_replicas=adding, removing_replicas=removing)


async def test_become_leader_and_follower_write_kafkas_lines_in_kafkas_order(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "state.change.logger")
    caplog.set_level(logging.INFO, "kafka.server.ReplicaFetcherManager")
    rm = brokers.rms[2]
    rm.handle_control_request(leader_and_isr(st(0, 2, 5, adding=(3,), removing=(1,)), st(1, 1, 7)),
                              correlation_id=9)
    sc, fm = LOGGERS
    assert lines(caplog) == [
        (sc, "[Broker id=2] Handling LeaderAndIsr request correlationId 9 from controller 9 for 2 partitions"),
        (fm, "[ReplicaFetcherManager on broker 2] Removed fetcher for partitions Set(t-0)"),
        (sc, "[Broker id=2] Stopped fetchers as part of LeaderAndIsr request correlationId 9 from controller 9 "
             "epoch 1 as part of the become-leader transition for 1 partitions"),
        (sc, "[Broker id=2] Leader t-0 starts at leader epoch 5 from offset 0 with high watermark 0 ISR [2,1,3] "
             "addingReplicas [3] removingReplicas [1]. Previous leader epoch was -1."),
        (sc, "[Broker id=2] Follower t-1 starts at leader epoch 7 from offset 0 with high watermark 0. Previous "
             "leader epoch was -1."),
        (fm, "[ReplicaFetcherManager on broker 2] Removed fetcher for partitions HashSet(t-1)"),
        (sc, "[Broker id=2] Stopped fetchers as part of become-follower request from controller 9 epoch 1 with "
             "correlation id 9 for 1 partitions"),
        (fm, "[ReplicaFetcherManager on broker 2] Added fetcher to broker 1 for partitions "
             "Map(t-1 -> InitialFetchState(BrokerEndPoint(id=1, host=host1:9092),7,0))"),
        (sc, "[Broker id=2] Finished LeaderAndIsr request in 0ms correlationId 9 from controller 9 for 2 partitions"),
    ]
    # the next leader epoch: the previous one is reported; a stale request still ends with "Finished"
    rm.partition(TopicPartition("t", 0)).append_as_leader(4, 0)  # type: ignore[union-attr]
    caplog.clear()
    rm.handle_control_request(leader_and_isr(st(0, 2, 6, isr=(2,))), correlation_id=10)
    assert (sc, "[Broker id=2] Leader t-0 starts at leader epoch 6 from offset 4 with high watermark 0 ISR [2] "
                "addingReplicas [] removingReplicas []. Previous leader epoch was 5.") in lines(caplog)
    assert (sc, "[Broker id=2] Skipped the become-leader state change after marking its partition as leader with "
                "correlation id 10 from controller 9 epoch 1 for partition t-0 (last update controller epoch 4) "
                "since it is already the leader for the partition.") in lines(caplog)
    caplog.clear()
    rm.handle_control_request(leader_and_isr(st(0, 2, 6), controller_epoch=0), correlation_id=11)
    assert [m for _, m in lines(caplog)][-1] == ("[Broker id=2] Finished LeaderAndIsr request in 0ms correlationId "
                                                 "11 from controller 9 for 1 partitions")
    assert not any("Stopped fetchers" in m for _, m in lines(caplog))


def unavailable(partition: int, leader: int) -> str:
    return (f"[Broker id=2] Received LeaderAndIsrRequest with correlation id 9 from controller 9 epoch 1 for "
            f"partition t-{partition} (last update controller epoch 4) but cannot become follower since the new "
            f"leader {leader} is unavailable.")


async def test_a_follower_whose_leader_is_unavailable_is_reported_among_the_followers_after_the_leaders(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's ``makeFollowers`` writes the ERROR in its loop, after ``makeLeaders``' lines and before its own
    "Stopped fetchers" line (which does not count the partition left alone)."""
    caplog.set_level(logging.INFO, "state.change.logger")
    brokers.rms[2].handle_control_request(leader_and_isr(st(0, 2, 5), st(1, 9, 7), st(2, 1, 3)), correlation_id=9)
    messages = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "state.change.logger"]
    texts = [m for _, m in messages]
    assert texts[1].startswith("[Broker id=2] Stopped fetchers as part of LeaderAndIsr request")
    assert texts[2].startswith("[Broker id=2] Leader t-0 starts")
    assert messages[3] == (logging.ERROR, unavailable(1, 9))
    assert texts[4].startswith("[Broker id=2] Follower t-2 starts")
    assert texts[5] == ("[Broker id=2] Stopped fetchers as part of become-follower request from controller 9 epoch 1 "
                        "with correlation id 9 for 1 partitions")


async def test_the_unavailable_leader_error_is_written_when_info_is_off(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, "state.change.logger")
    caplog.set_level(logging.ERROR, "kafka.server.ReplicaFetcherManager")
    brokers.rms[2].handle_control_request(leader_and_isr(st(0, 2, 5), st(1, 9, 7)), correlation_id=9)
    assert lines(caplog) == [(LOGGERS[0], unavailable(1, 9))]


async def test_five_or_more_partitions_print_as_scala_hash_collections(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "kafka.server.ReplicaFetcherManager")
    brokers.rms[2].handle_control_request(leader_and_isr(*(st(p, 1, 0) for p in range(5))))
    messages = [m for _, m in lines(caplog)]
    # an immutable HashSet (``partitionStates.keySet.map(_.topicPartition)``) in its trie's order, as
    # scala-library 2.13.18 prints t-0..t-4 with Kafka's TopicPartition.hashCode
    assert messages[0] == ("[ReplicaFetcherManager on broker 2] Removed fetcher for partitions "
                           "HashSet(t-4, t-3, t-2, t-1, t-0)")
    assert messages[1].startswith("[ReplicaFetcherManager on broker 2] Added fetcher to broker 1 for partitions "
                                  "HashMap(t-0 -> InitialFetchState(BrokerEndPoint(id=1, host=host1:9092),0,0), t-1")


async def test_nothing_is_collected_when_info_is_off(brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "state.change.logger")
    caplog.set_level(logging.WARNING, "kafka.server.ReplicaFetcherManager")
    assert LeaderAndIsrLog.start(2, leader_and_isr(st(0, 2, 0)), 0) is None
    brokers.rms[2].handle_control_request(leader_and_isr(st(0, 2, 0), st(1, 1, 0)))
    assert lines(caplog) == []


async def test_our_parser_reads_the_lines_as_became_leader_and_became_follower(
        brokers: Brokers, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "state.change.logger")
    brokers.rms[2].handle_control_request(leader_and_isr(st(0, 2, 5), st(1, 3, 7)))
    formatter = KafkaFormatter(clock=lambda: 1_700_000_000_123)
    text = [formatter.format(r) for r in caplog.records if r.name == "state.change.logger"]
    assert text[2].startswith("[2023-11-14 22:13:20,123] INFO [Broker id=2] Leader t-0 starts at leader epoch 5")
    assert text[2].endswith(" (state.change.logger)")
    parsed = [p for p in KafkaLogParser().parse_lines(text) if isinstance(p, ParsedLine)]
    assert len(parsed) == len(text)
    rows = {p.kind: p.fields for p in parsed if p.kind in ("became_leader", "became_follower")}
    assert {k: rows["became_leader"][k] for k in ("broker_id", "topic", "partition", "leader_epoch", "isr")} == {
        "broker_id": 2, "topic": "t", "partition": 0, "leader_epoch": 5, "isr": [2, 1, 3]}
    assert {k: rows["became_follower"][k] for k in ("broker_id", "topic", "partition", "leader_epoch")} == {
        "broker_id": 2, "topic": "t", "partition": 1, "leader_epoch": 7}
    assert all(p.ts_ms == 1_700_000_000_123 for p in parsed)
