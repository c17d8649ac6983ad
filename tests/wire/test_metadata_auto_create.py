"""Metadata's topic auto-creation (Kafka 2.8.2's ``AutoTopicCreationManager.createTopicsInZk``) on in-process
brokers that listen on the wire, over the embedded store: a kafka-python producer's Metadata creates the topic
with ``num.partitions`` and ``default.replication.factor`` (answering LEADER_NOT_AVAILABLE until leaders exist);
INVALID_REPLICATION_FACTOR with too few brokers; nothing when the request or ``auto.create.topics.enable``
says no. Every wait is on a condition with a bound."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import logging
import re
from collections.abc import AsyncIterator

import pytest
from kio.schema.metadata.v9.request import MetadataRequest, MetadataRequestTopic
from kio.schema.metadata.v9.response import MetadataResponse
from kio.serial import entity_reader, entity_writer
from tests.integration.listening import Cluster, listening_cluster

from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.cluster.admin_apis.create_topics import MetadataTopicCreator
from zkcontroller.cluster.kafka_server import AutoCreateConfig
from zkcontroller.cluster.listener import ListenerPorts
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.server_properties import broker_properties
from zkcontroller.protocol.wire.frames import decode_response_header
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

from .server_fixture import connect, read_frame, request_frame

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def running() -> AsyncIterator[Cluster]:
    """Three in-process brokers on free loopback ports, with num.partitions=3 and default.replication.factor=2."""
    async with listening_cluster([1, 2, 3], ListenerPorts(base=None), 4000) as (cluster, zk):
        configure(cluster, AutoCreateConfig(num_partitions=3, default_replication_factor=2,
                                            offsets_topic_num_partitions=4))
        yield cluster, zk


def configure(cluster: LocalCluster, auto_create: AutoCreateConfig) -> None:
    """Each running broker's server.properties auto-creation keys (read per Metadata request)."""
    for server in cluster.running_brokers():
        server.config = dataclasses.replace(server.config, auto_create=auto_create)


def bootstrap(cluster: LocalCluster) -> str:
    return cluster.listeners[1].address or ""


def metadata_frame(topic: str, allow: bool = True) -> bytes:
    """A Metadata v9 request frame's payload (no size prefix) for ``topic``."""
    buf = io.BytesIO()
    entity_writer(MetadataRequest)(buf, MetadataRequest(
        topics=(MetadataRequestTopic(name=topic),), allow_auto_topic_creation=allow,
        include_cluster_authorized_operations=False, include_topic_authorized_operations=False))
    return request_frame(3, 9, 1, buf.getvalue())[4:]


def decode_v9(payload: bytes | None) -> tuple[int, int]:
    """The one topic's error code and partition count in a Metadata v9 response payload."""
    assert payload is not None
    _, offset = decode_response_header(payload, 3, 9)
    response, _ = entity_reader(MetadataResponse)(payload[offset:], 0)
    (answer,) = response.topics
    return int(answer.error_code), len(answer.partitions)


def metadata_v9(address: str, topic: str, allow: bool) -> tuple[int, int]:
    """A Metadata v9 for ``topic`` on a real socket: its error code and partition count."""
    with connect(int(address.rsplit(":", 1)[1])) as sock:
        frame = metadata_frame(topic, allow)
        sock.sendall(len(frame).to_bytes(4, "big") + frame)
        return decode_v9(read_frame(sock))


def producer_partitions(address: str, topic: str) -> set[int]:
    """What a kafka-python producer finds for ``topic``: it asks Metadata allowing auto-creation, and retries
    on LEADER_NOT_AVAILABLE until ``max_block_ms``."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=address, max_block_ms=30000, request_timeout_ms=10000)
    try:
        return set(producer.partitions_for(topic))
    finally:
        producer.close(timeout=5)


async def zk_assignment(zk: KafkaZkClient, topic: str) -> dict[int, list[int]]:
    found = await zk.get_topic_assignments([topic])
    return {tp.partition: list(r.replicas) for a in found.values.values() for tp, r in a.assignment.items()}


async def test_a_producer_creates_the_topic_it_asks_for(running: Cluster) -> None:
    cluster, zk = running
    assert await zk_assignment(zk, "auto-created") == {}
    assert await asyncio.to_thread(producer_partitions, bootstrap(cluster), "auto-created") == {0, 1, 2}
    assignment = await zk_assignment(zk, "auto-created")
    assert sorted(assignment) == [0, 1, 2] and all(len(set(r)) == 2 for r in assignment.values())


async def test_the_first_answer_is_leader_not_available_and_a_lost_race_is_not_an_error(running: Cluster) -> None:
    """``createTopicsInZk``: created answers LEADER_NOT_AVAILABLE (5) with no partitions; a topic already in
    ZooKeeper but not yet in a broker's cache (another broker won the race) answers the same, not
    TOPIC_ALREADY_EXISTS."""
    cluster, zk = running
    assert await asyncio.to_thread(metadata_v9, cluster.listeners[2].address or "", "raced", True) == (5, 0)
    assert sorted(await zk_assignment(zk, "raced")) == [0, 1, 2]
    broker3 = next(s for s in cluster.running_brokers() if s.broker_id == 3)
    assert await MetadataTopicCreator(lambda: broker3).create(["raced"]) == {"raced": 5}
    assert sorted(await zk_assignment(zk, "raced")) == [0, 1, 2]


async def test_a_topic_being_created_is_unknown_to_a_concurrent_request() -> None:
    """Kafka's ``inflightTopics``: while one Metadata creates a topic, another naming it gets
    UNKNOWN_TOPIC_OR_PARTITION and does not create it again."""
    class Blocking:
        def __init__(self) -> None:
            self.calls: list[list[str]] = []
            self.entered = asyncio.Event()
            self.release = asyncio.Event()

        def enabled(self) -> bool:
            return True

        async def create(self, topics: list[str]) -> dict[str, int]:
            self.calls.append(topics)
            self.entered.set()
            await self.release.wait()
            return dict.fromkeys(topics, 5)

    creator = Blocking()
    control_plane = BrokerControlPlane(1, 10)
    apis = KafkaApis(1, control_handler=lambda: None, metadata_cache=lambda: control_plane.metadata_cache,
                     cluster_id=lambda: "c", auto_create_topics=creator)
    first = asyncio.ensure_future(apis.handle(metadata_frame("slow")))
    await asyncio.wait_for(creator.entered.wait(), 10)
    assert decode_v9(await apis.handle(metadata_frame("slow"))) == (3, 0)
    creator.release.set()
    assert decode_v9(await first) == (5, 0)
    assert creator.calls == [["slow"]]


async def test_too_few_brokers_for_the_replication_factor(running: Cluster, caplog: pytest.LogCaptureFixture,
                                                           ) -> None:
    cluster, zk = running
    configure(cluster, AutoCreateConfig(num_partitions=1, default_replication_factor=4))
    with caplog.at_level(logging.INFO, "kafka.server.ZkAdminManager"):
        assert await asyncio.to_thread(metadata_v9, bootstrap(cluster), "too-wide", True) == (38, 0)
    assert await zk_assignment(zk, "too-wide") == {}
    [line] = [r.getMessage() for r in caplog.records if r.name == "kafka.server.ZkAdminManager"]
    assert re.fullmatch(r"\[Admin Manager on Broker \d+\]: Error processing create topic request "
                        r"CreatableTopic\(name='too-wide', numPartitions=1, replicationFactor=4, assignments=\[\], "
                        r"configs=\[\]\)\norg\.apache\.kafka\.common\.errors\.InvalidReplicationFactorException: .+",
                        line)


async def test_nothing_is_created_when_the_request_or_the_broker_says_no(running: Cluster) -> None:
    cluster, zk = running
    assert await asyncio.to_thread(metadata_v9, bootstrap(cluster), "not-asked", False) == (3, 0)
    assert await asyncio.to_thread(metadata_v9, bootstrap(cluster), "bad/name", True) == (17, 0)
    configure(cluster, AutoCreateConfig(enable=False))
    assert await asyncio.to_thread(metadata_v9, bootstrap(cluster), "not-enabled", True) == (3, 0)
    assert await zk.get_all_topics_in_cluster() == set()


async def test_an_internal_topic_gets_its_own_size_and_configs(running: Cluster) -> None:
    """``creatableTopic``: __consumer_offsets takes offsets.topic.num.partitions / replication.factor and the
    group coordinator's configs, not num.partitions."""
    cluster, zk = running
    assert await asyncio.to_thread(metadata_v9, bootstrap(cluster), "__consumer_offsets", True) == (5, 0)
    assignment = await zk_assignment(zk, "__consumer_offsets")
    assert sorted(assignment) == [0, 1, 2, 3] and all(len(r) == 3 for r in assignment.values())
    configs = await zk.get_entity_configs("topics", "__consumer_offsets")
    assert configs == {"cleanup.policy": "compact", "segment.bytes": "104857600", "compression.type": "producer"}


def test_server_properties_keys() -> None:
    base = {"broker.id": "1", "zookeeper.connect": "localhost:2181"}
    assert broker_properties(base).auto_create == AutoCreateConfig()
    props = broker_properties({**base, "auto.create.topics.enable": "false", "num.partitions": "6",
                               "default.replication.factor": "3", "offsets.topic.replication.factor": "1"})
    assert props.auto_create == AutoCreateConfig(enable=False, num_partitions=6, default_replication_factor=3,
                                                 offsets_topic_replication_factor=1)
    assert props.unknown == {}


def create_with_defaults(address: str, topic: str) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    client = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=10000)
    try:
        client.create_topics([NewTopic(topic, -1, -1)])
    finally:
        client.close()


async def test_create_topics_without_sizes_takes_the_same_defaults(running: Cluster) -> None:
    """``ZkAdminManager.createTopics``: -1 partitions / replication factor mean num.partitions /
    default.replication.factor (it used Kafka's defaults, 1 and 1, whatever server.properties said)."""
    cluster, zk = running
    await asyncio.to_thread(create_with_defaults, bootstrap(cluster), "defaulted")
    assignment = await zk_assignment(zk, "defaulted")
    assert sorted(assignment) == [0, 1, 2] and all(len(r) == 2 for r in assignment.values())
