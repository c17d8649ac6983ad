"""Idempotent producers against ``zkcontroller cluster --zookeeper ... --port-base 0``: kafka-python's
KafkaProducer with its default settings (idempotent since kafka-python 3) and confluent-kafka's Producer with
``enable.idempotence=true`` get a producer id from InitProducerId (API 22), produce, and ``end_offsets()`` shows
their records; ``/latest_producer_id_block`` holds the block the brokers claimed. Every wait is on a condition
with a bound."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator

import pytest
from tests.e2e.cluster_prompt import running_cluster
from tests.e2e.test_cluster_command_listeners import Prompt
from tests.e2e.test_produce_clients import settled

from zkcontroller.cluster.zookeeper_server import ZooKeeperServerProcess

pytestmark = [pytest.mark.zookeeper, pytest.mark.timeout(240)]

TOPIC = "produced"
"""The name `settled` reads; on a cluster of its own (its own ZooKeeper chroot)."""


@pytest.fixture(scope="module")
def cluster(zookeeper_server: ZooKeeperServerProcess, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Prompt, str, str]]:
    """Three in-process brokers with ``produced`` (2 partitions, replication factor 2): the prompt, a bootstrap
    address and the ZooKeeper chroot."""
    chroot = f"/idempotent-{os.getpid()}-{time.monotonic_ns()}"
    with running_cluster(zookeeper_server, tmp_path_factory, "idempotent", chroot) as (prompt, address):
        prompt.send(f"create {TOPIC} 2 2")
        prompt.expect(r"^2 of 2 partitions have a leader\.", 60)
        yield prompt, address, chroot


def latest_block(connect: str, chroot: str) -> dict[str, object]:
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=connect + chroot, timeout=20)
    zk.start(timeout=20)
    try:
        data, _ = zk.get("/latest_producer_id_block")
    finally:
        zk.stop()
        zk.close()
    return json.loads(data)


def test_kafka_pythons_default_producer_is_idempotent_and_produces(
        cluster: tuple[Prompt, str, str], zookeeper_server: ZooKeeperServerProcess) -> None:
    from kafka import KafkaProducer

    _, address, chroot = cluster
    before = settled(address)
    producer = KafkaProducer(bootstrap_servers=address, request_timeout_ms=20000, linger_ms=0)  # defaults
    try:
        assert producer.config["enable_idempotence"]
        futures = [producer.send(TOPIC, value=b"idempotent %d" % i, partition=0) for i in range(6)]
        futures += [producer.send(TOPIC, value=b"other %d" % i, partition=1) for i in range(2)]
        producer.flush(timeout=60)
        metadata = [f.get(timeout=60) for f in futures]
        pid_and_epoch = producer._transaction_manager.producer_id_and_epoch
        assert pid_and_epoch.is_valid and pid_and_epoch.epoch == 0
        producer_id = pid_and_epoch.producer_id
    finally:
        producer.close(timeout=30)
    assert [m.offset for m in metadata if m.partition == 0] == list(range(before[0], before[0] + 6))
    assert [m.offset for m in metadata if m.partition == 1] == list(range(before[1], before[1] + 2))
    assert settled(address) == {0: before[0] + 6, 1: before[1] + 2}
    block = latest_block(zookeeper_server.connect_string, chroot)
    assert block["version"] == 1 and block["broker"] in (1, 2, 3)
    assert int(str(block["block_start"])) <= producer_id <= int(str(block["block_end"]))


def test_confluent_kafkas_idempotent_producer_produces(cluster: tuple[Prompt, str, str]) -> None:
    from confluent_kafka import Producer

    _, address, _ = cluster
    before = settled(address)
    delivered: list[tuple[object, int]] = []
    producer = Producer({"bootstrap.servers": address, "enable.idempotence": True, "linger.ms": 0})
    for i in range(5):
        producer.produce(TOPIC, value=b"c %d" % i, partition=1,
                         on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
    assert producer.flush(60) == 0
    assert delivered == [(None, before[1] + i) for i in range(5)]
    assert settled(address) == {0: before[0], 1: before[1] + 5}
