"""Round trips of every codec, and key-order insensitivity: Jackson writes maps in hash order, so a decoder
must accept any permutation of the keys we (or Kafka) write."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.model import (
    Broker,
    BrokerInfo,
    EndPoint,
    FeatureZNodeData,
    FeatureZNodeStatus,
    FinalizedVersionRange,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    SupportedVersionRange,
    TopicId,
    TopicPartition,
    sorted_features,
)
from zkcontroller.zk.znodes import (
    BrokerIdZNode,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityZNode,
    ControllerEpochZNode,
    ControllerZNode,
    FeatureZNode,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)

int32 = st.integers(-(2**31), 2**31 - 1)
broker_ids = st.integers(0, 2**31 - 1)
replica_lists = st.lists(broker_ids, max_size=6).map(tuple)
topics = st.text(alphabet="abcXYZ019._-", min_size=1, max_size=20)
names = st.text(min_size=1, max_size=12)  # any unicode: config keys, feature names
topic_ids = st.binary(min_size=16, max_size=16).map(TopicId)
topic_partitions = st.builds(TopicPartition, topics, st.integers(0, 10_000))


def shuffled(data: bytes, rnd: random.Random) -> bytes:
    """The same JSON with every object's keys in a random order."""

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            items = list(value.items())
            rnd.shuffle(items)
            return {k: walk(v) for k, v in items}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return json.dumps(walk(json.loads(data))).encode()


@st.composite
def brokers(draw: st.DrawFn) -> Broker:
    listeners = draw(st.lists(st.from_regex(r"[A-Z][A-Z_]{0,9}", fullmatch=True), unique=True, max_size=4))
    hosts = st.none() | st.from_regex(r"[a-z0-9][a-z0-9.\-]{0,20}", fullmatch=True) | st.just("::1")
    endpoints = tuple(
        EndPoint(draw(hosts), draw(st.integers(-1, 65535)), name,
                 draw(st.sampled_from(("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"))))
        for name in listeners
    )
    ranges = st.integers(1, 100).flatmap(lambda lo: st.builds(SupportedVersionRange, st.just(lo),
                                                              st.integers(lo, 200)))
    features = sorted_features(draw(st.dictionaries(names, ranges, max_size=3)))
    return Broker(draw(broker_ids), endpoints, draw(st.none() | names), features)


@given(brokers(), int32, st.integers(0, 2**62), st.randoms())
def test_broker_v5_round_trip(broker: Broker, jmx_port: int, ts: int, rnd: random.Random) -> None:
    info = BrokerInfo(broker, 5, jmx_port)
    data = BrokerIdZNode.encode(info, ts)
    path = BrokerIdZNode.path(broker.id)
    assert BrokerIdZNode.decode(data, path) == info
    assert BrokerIdZNode.decode(shuffled(data, rnd), path) == info


@given(broker_ids, st.integers(0, 2**62), st.randoms())
def test_controller_round_trip(broker_id: int, ts: int, rnd: random.Random) -> None:
    data = ControllerZNode.encode(broker_id, ts)
    assert ControllerZNode.decode(shuffled(data, rnd)) == broker_id
    assert json.loads(data)["timestamp"] == str(ts)


@given(int32)
def test_controller_epoch_round_trip(epoch: int) -> None:
    assert ControllerEpochZNode.decode(ControllerEpochZNode.encode(epoch)) == epoch


@st.composite
def assignments(draw: st.DrawFn, topic: str) -> dict[TopicPartition, ReplicaAssignment]:
    parts = draw(st.lists(st.integers(0, 5000), unique=True, max_size=8))
    return {TopicPartition(topic, p): ReplicaAssignment(draw(replica_lists), draw(replica_lists),
                                                        draw(replica_lists)) for p in parts}


@given(topics.flatmap(lambda t: st.tuples(st.just(t), assignments(t))), st.none() | topic_ids, st.randoms())
def test_topic_round_trip(topic_and_assignment: tuple[str, dict[TopicPartition, ReplicaAssignment]],
                          topic_id: TopicId | None, rnd: random.Random) -> None:
    topic, assignment = topic_and_assignment
    data = TopicZNode.encode(topic_id, assignment)
    for raw in (data, shuffled(data, rnd)):
        value = TopicZNode.decode(raw, TopicZNode.path(topic))
        assert (value.topic, value.topic_id, dict(value.assignment)) == (topic, topic_id, assignment)


@given(broker_ids, int32, replica_lists, int32, st.integers(0, 2**31 - 1), st.randoms())
def test_partition_state_round_trip(leader: int, leader_epoch: int, isr: tuple[int, ...],
                                    controller_epoch: int, zk_version: int, rnd: random.Random) -> None:
    value = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, leader_epoch, isr, zk_version), controller_epoch)
    data = TopicPartitionStateZNode.encode(value)
    path = TopicPartitionStateZNode.path(TopicPartition("t", 0))
    assert TopicPartitionStateZNode.decode(shuffled(data, rnd), path, zk_version) == value


@given(st.dictionaries(topic_partitions, replica_lists, max_size=10), st.randoms())
def test_reassign_partitions_round_trip(value: dict[TopicPartition, tuple[int, ...]],
                                        rnd: random.Random) -> None:
    assert ReassignPartitionsZNode.decode(shuffled(ReassignPartitionsZNode.encode(value), rnd)) == value


@given(st.frozensets(topic_partitions, max_size=10), st.randoms())
def test_partition_set_round_trips(value: frozenset[TopicPartition], rnd: random.Random) -> None:
    preferred = PreferredReplicaElectionZNode.encode(value)
    assert PreferredReplicaElectionZNode.decode(shuffled(preferred, rnd)) == value
    path = IsrChangeNotificationSequenceZNode.path("0000000001")
    data = IsrChangeNotificationSequenceZNode.encode(value)
    assert IsrChangeNotificationSequenceZNode.decode(shuffled(data, rnd), path) == value


@given(broker_ids, st.randoms())
def test_log_dir_event_round_trip(broker_id: int, rnd: random.Random) -> None:
    path = LogDirEventNotificationSequenceZNode.path("0000000001")
    data = LogDirEventNotificationSequenceZNode.encode(broker_id)
    assert LogDirEventNotificationSequenceZNode.decode(shuffled(data, rnd), path) == broker_id


@given(st.dictionaries(names, st.text(max_size=30), max_size=8), st.randoms())
def test_config_round_trip(config: dict[str, str], rnd: random.Random) -> None:
    data = ConfigEntityZNode.encode(config)
    assert ConfigEntityZNode.decode(shuffled(data, rnd), "/config/topics/t") == config


@given(st.text(min_size=1, max_size=40), st.randoms())
def test_config_change_and_cluster_id_round_trip(text: str, rnd: random.Random) -> None:
    path = ConfigEntityChangeNotificationSequenceZNode.path("0000000001")
    data = ConfigEntityChangeNotificationSequenceZNode.encode(text)
    assert ConfigEntityChangeNotificationSequenceZNode.decode(shuffled(data, rnd), path) == text
    assert ClusterIdZNode.decode(shuffled(ClusterIdZNode.encode(text), rnd)) == text


finalized = st.integers(1, 100).flatmap(
    lambda lo: st.builds(FinalizedVersionRange, st.just(lo), st.integers(lo, 200)))


@given(st.sampled_from(FeatureZNodeStatus), st.dictionaries(names, finalized, max_size=4), st.randoms())
def test_feature_round_trip(status: FeatureZNodeStatus, features: dict[str, FinalizedVersionRange],
                            rnd: random.Random) -> None:
    value = FeatureZNodeData(status, sorted_features(features))
    assert FeatureZNode.decode(shuffled(FeatureZNode.encode(value), rnd)) == value


@given(topic_ids)
def test_topic_id_text_round_trip(topic_id: TopicId) -> None:
    text = str(topic_id)
    assert len(text) == 22 and "=" not in text
    assert TopicId.from_string(text) == topic_id


def test_generated_topic_ids_are_v4_deterministic_and_valid() -> None:
    ids = [TopicId.generate(random.Random(42)) for _ in range(2)]
    assert ids[0] == ids[1]
    many = {TopicId.generate(r) for r in [random.Random(7)] for _ in range(500)}
    assert len(many) == 500
    for t in many:
        assert t.raw[6] >> 4 == 4 and t.raw[8] >> 6 == 0b10
        assert not str(t).startswith("-")
