"""``kafka-topics --describe/--list`` output, filters, brokers and controller status on both backends.

Leaders and ISRs are written by hand as partition-state znodes, as a controller would have written them.
"""

from __future__ import annotations

import random

import pytest

from zkcontroller.admin.describe import (
    DescribeFilter,
    broker_line,
    controller_status,
    count_corrupt,
    describe_lines,
    describe_topics,
    list_topic_lines,
    live_brokers,
    select_topics,
)
from zkcontroller.admin.errors import AdminOperationError, UnknownTopicError
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkcontroller.zk.kafka_zk_client import NO_FENCING, KafkaZkClient


async def write_states(zk: KafkaZkClient, topic: str, states: dict[int, tuple[int, list[int]]]) -> None:
    """partition → (leader, isr), written at leader epoch 0 by controller epoch 1."""
    await zk.create_topic_partition_states(
        {TopicPartition(topic, p): LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, tuple(isr)), 1)
         for p, (leader, isr) in states.items()},
        NO_FENCING)


@pytest.fixture
async def cluster(zk: KafkaZkClient, admin: TopicAdmin) -> KafkaZkClient:
    """Brokers 1–3 live; ``events`` with a healthy, an under-replicated, a leaderless, a dead-leader and a
    not-yet-initialised partition; ``audit`` with a config override."""
    await admin.create_topic_with_assignment(
        "events", {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3], 4: [2, 1]}, check_brokers=False)
    await write_states(zk, "events", {0: (1, [1, 2]), 1: (2, [2]), 2: (-1, [3]), 3: (7, [1, 3])})
    await admin.create_topic_with_assignment("audit", {0: [1, 2, 3]}, {"retention.ms": "1000",
                                                                        "cleanup.policy": "compact"})
    await write_states(zk, "audit", {0: (3, [3, 1, 2])})
    return zk


async def describe(zk: KafkaZkClient, include: str | None = None, **flags: bool) -> list[str]:
    topics = await select_topics(zk, include)
    live = [b.broker.id for b in await live_brokers(zk)]
    return describe_lines(await describe_topics(zk, topics), live, DescribeFilter(**flags))


async def test_full_describe_layout(cluster: KafkaZkClient) -> None:
    assert await describe(cluster) == [
        "Topic: audit\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: cleanup.policy=compact,retention.ms=1000",
        "\tTopic: audit\tPartition: 0\tLeader: 3\tReplicas: 1,2,3\tIsr: 3,1,2",
        "Topic: events\tPartitionCount: 5\tReplicationFactor: 2\tConfigs: ",
        "\tTopic: events\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2",
        "\tTopic: events\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2",
        "\tTopic: events\tPartition: 2\tLeader: none\tReplicas: 3,1\tIsr: 3",
        "\tTopic: events\tPartition: 3\tLeader: 7\tReplicas: 1,3\tIsr: 1,3",
        "\tTopic: events\tPartition: 4\tLeader: none\tReplicas: 2,1\tIsr: ",
    ]


async def test_under_replicated_filter(cluster: KafkaZkClient) -> None:
    assert await describe(cluster, under_replicated=True) == [
        "\tTopic: events\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2",
        "\tTopic: events\tPartition: 2\tLeader: none\tReplicas: 3,1\tIsr: 3",
        "\tTopic: events\tPartition: 4\tLeader: none\tReplicas: 2,1\tIsr: ",
    ]


async def test_unavailable_filter(cluster: KafkaZkClient) -> None:
    """Leader -1, no state at all, or a leader that is not a registered broker (7)."""
    assert await describe(cluster, unavailable=True) == [
        "\tTopic: events\tPartition: 2\tLeader: none\tReplicas: 3,1\tIsr: 3",
        "\tTopic: events\tPartition: 3\tLeader: 7\tReplicas: 1,3\tIsr: 1,3",
        "\tTopic: events\tPartition: 4\tLeader: none\tReplicas: 2,1\tIsr: ",
    ]


async def test_both_filters_show_the_union(cluster: KafkaZkClient) -> None:
    lines = await describe(cluster, under_replicated=True, unavailable=True)
    assert [line.split("\t")[2] for line in lines] == [
        "Partition: 1", "Partition: 2", "Partition: 3", "Partition: 4"]


async def test_topics_with_overrides(cluster: KafkaZkClient) -> None:
    assert await describe(cluster, topics_with_overrides=True) == [
        "Topic: audit\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: cleanup.policy=compact,retention.ms=1000",
    ]


async def test_topic_pattern_and_missing_topic(cluster: KafkaZkClient) -> None:
    assert (await describe(cluster, "aud.*"))[0].startswith("Topic: audit\t")
    assert await select_topics(cluster, "audit, events") == ["audit", "events"]
    with pytest.raises(UnknownTopicError, match="Topic 'nope' does not exist as expected"):
        await select_topics(cluster, "nope")
    with pytest.raises(AdminOperationError, match="invalid regex"):
        await select_topics(cluster, "(")


async def test_topic_id_and_deletion_marker(zk: KafkaZkClient) -> None:
    admin = TopicAdmin(zk, random.Random(0), topic_id_rng=random.Random(9))
    await admin.create_topic_with_assignment("gone", {0: [1]})
    await admin.delete_topic("gone")
    topic_id = (await zk.get_topic_assignments(["gone"])).values["gone"].topic_id
    lines = await describe(zk)
    assert lines == [
        f"Topic: gone\tTopicId: {topic_id}\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: "
        "\tMarkedForDeletion: true",
        "\tTopic: gone\tPartition: 0\tLeader: none\tReplicas: 1\tIsr: \tMarkedForDeletion: true",
    ]
    assert await list_topic_lines(zk) == ["gone - marked for deletion"]


async def test_vanished_topic(zk: KafkaZkClient) -> None:
    assert describe_lines(await describe_topics(zk, ["ghost"]), []) == ["Topic ghost doesn't exist!"]


async def test_list_topics(cluster: KafkaZkClient) -> None:
    assert await list_topic_lines(cluster) == ["audit", "events"]
    assert await list_topic_lines(cluster, "ev.*") == ["events"]
    assert await list_topic_lines(cluster, "nothing") == []


async def test_brokers(zk: KafkaZkClient) -> None:
    brokers = await live_brokers(zk)
    assert [b.broker.id for b in brokers] == [1, 2, 3]
    line = broker_line(brokers[0])
    assert line == f"Broker: 1\tEpoch: {brokers[0].epoch}\tRack: none\tEndpoints: PLAINTEXT://host1:9092"
    assert brokers[0].epoch < brokers[1].epoch < brokers[2].epoch  # czxids grow


async def test_controller_status(zk: KafkaZkClient) -> None:
    status = await controller_status(zk)
    assert (status.controller_id, status.epoch, status.epoch_zk_version) == (None, None, None)
    assert status.render() == "ActiveController: none\tControllerEpoch: none\tEpochZkVersion: none"
    await zk.register_controller_and_increment_controller_epoch(2)
    status = await controller_status(zk)
    assert (status.controller_id, status.epoch, status.epoch_zk_version) == (2, 1, 1)
    assert status.render() == "ActiveController: 2\tControllerEpoch: 1\tEpochZkVersion: 1"


async def test_corrupt_topic_and_partition_state_are_shown_with_path_and_reason(cluster: KafkaZkClient) -> None:
    await cluster.session.create("/brokers/topics/broken", b'{"version":2,"partitions":"nope"}')
    await cluster.session.set_data("/brokers/topics/events/partitions/1/state", b"{not json", -1)
    descriptions = await describe_topics(cluster, ["broken", "events"])
    assert count_corrupt(descriptions) == 2
    lines = describe_lines(descriptions, [1, 2, 3])
    broken = [line for line in lines if "broken" in line]
    assert len(broken) == 1 and broken[0].startswith("Topic: broken\tCorrupt: /brokers/topics/broken: ")
    bad_state = [line for line in lines if "\tPartition: 1\t" in line]
    assert bad_state[0].startswith("\tTopic: events\tPartition: 1\tLeader: unknown\t")
    assert "\tCorrupt: /brokers/topics/events/partitions/1/state: " in bad_state[0]
    assert "\tPartition: 0\tLeader: 1\t" in lines[2]  # the healthy partitions are still described
    assert await list_topic_lines(cluster) == ["audit", "broken", "events"]  # names only, as Kafka's --list
