"""Produce against ``zkcontroller cluster --zookeeper ... --port-base 0`` as a user runs it: kafka-python's
KafkaProducer with acks='all' gets each record's offset back once its followers have it, and ``end_offsets()``
(ListOffsets) then shows the high watermark moved by as many; confluent-kafka's Producer (acks=1, then acks=0)
and ``kcat -P`` produce lines the same way. The records themselves are not kept (offsets only). Every wait is on a
condition with a bound."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e.cluster_prompt import assert_records_are_not_kept, running_cluster
from tests.e2e.test_cluster_command_listeners import Prompt, wait_for
from tests.helpers import tool_missing

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

KCAT = shutil.which("kcat")
TOPIC = "produced"


@pytest.fixture(scope="module")
def cluster(zookeeper_server: ZooKeeperServerProcess, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Prompt, str]]:
    """Three in-process brokers with ``produced`` (2 partitions, replication factor 2), nothing produced yet: the
    prompt and a bootstrap address."""
    with running_cluster(zookeeper_server, tmp_path_factory, "produce") as (prompt, address):
        prompt.send(f"create {TOPIC} 2 2")
        prompt.expect(r"^2 of 2 partitions have a leader\.", 60)
        yield prompt, address


def end_offsets(address: str) -> dict[int, int]:
    """kafka-python's ``end_offsets()``: each partition's high watermark."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=address, request_timeout_ms=20000)
    try:
        end = consumer.end_offsets([TopicPartition(TOPIC, p) for p in (0, 1)])
        return {tp.partition: o for tp, o in end.items()}
    finally:
        consumer.close()


def settled(address: str) -> dict[int, int]:
    """The end offsets once two reads in a row agree (a follower may still be fetching an acks=1 append)."""
    def stable() -> dict[int, int] | None:
        first = end_offsets(address)
        return first if end_offsets(address) == first else None
    found = wait_for(stable, "stable end offsets")
    assert isinstance(found, dict)
    return found


def test_kafka_python_produces_with_acks_all_and_the_high_watermark_moves(cluster: tuple[Prompt, str]) -> None:
    from kafka import KafkaProducer

    _, address = cluster
    before = settled(address)
    # the non-idempotent path; kafka-python 3's idempotent default is in test_idempotent_producer.py
    producer = KafkaProducer(bootstrap_servers=address, acks="all", request_timeout_ms=20000, linger_ms=0,
                             enable_idempotence=False)
    try:
        futures = [producer.send(TOPIC, value=b"record %d" % i, partition=0) for i in range(7)]
        futures += [producer.send(TOPIC, value=b"other %d" % i, partition=1) for i in range(3)]
        producer.flush(timeout=60)
        metadata = [f.get(timeout=60) for f in futures]
    finally:
        producer.close(timeout=30)
    assert [m.offset for m in metadata if m.partition == 0] == list(range(before[0], before[0] + 7))
    assert [m.offset for m in metadata if m.partition == 1] == list(range(before[1], before[1] + 3))
    # acks=all answered once the HW covered the records: ListOffsets shows it at once
    assert end_offsets(address) == {0: before[0] + 7, 1: before[1] + 3}


def test_confluent_kafka_produces_with_acks_1_and_0(cluster: tuple[Prompt, str]) -> None:
    from confluent_kafka import Producer

    _, address = cluster
    before = settled(address)
    delivered: list[tuple[object, int]] = []
    producer = Producer({"bootstrap.servers": address, "acks": "1", "linger.ms": 0})
    for i in range(4):
        producer.produce(TOPIC, value=b"c %d" % i, partition=1,
                         on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
    assert producer.flush(60) == 0
    assert delivered == [(None, before[1] + i) for i in range(4)]
    no_acks = Producer({"bootstrap.servers": address, "acks": "0", "linger.ms": 0})
    for i in range(5):
        no_acks.produce(TOPIC, value=b"z %d" % i, partition=0)
    assert no_acks.flush(60) == 0
    found = wait_for(lambda: end_offsets(address) == {0: before[0] + 5, 1: before[1] + 4}, "end offsets +5, +4")
    assert found


def test_kcat_produces_lines(cluster: tuple[Prompt, str], tmp_path: Path) -> None:
    if KCAT is None:
        tool_missing("kcat", "not on PATH (produces through librdkafka)")
    _, address = cluster
    before = settled(address)
    done = subprocess.run([KCAT, "-P", "-b", address, "-t", TOPIC, "-p", "1", "-X", "acks=all"],
                          input="one\ntwo\nthree\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert end_offsets(address) == {0: before[0], 1: before[1] + 3}


def test_a_consumer_is_still_told_records_are_not_kept(cluster: tuple[Prompt, str]) -> None:
    """The data plane stays offsets-only: records produced to partition 0 cannot be read back. The test produces
    its own (run alone, the module's other tests have not): from an empty partition's offset 0, at its high
    watermark, Kafka answers no records and no error, and the consumer would poll nothing."""
    from kafka import KafkaProducer

    _, address = cluster
    producer = KafkaProducer(bootstrap_servers=address, acks="all", request_timeout_ms=20000, linger_ms=0,
                             enable_idempotence=False)
    try:
        sent = [producer.send(TOPIC, value=b"kept? %d" % i, partition=0) for i in range(2)]
        producer.flush(timeout=60)
        for future in sent:
            future.get(timeout=60)
    finally:
        producer.close(timeout=30)
    assert_records_are_not_kept(address, TOPIC)
