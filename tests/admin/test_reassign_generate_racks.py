"""``reassign --generate`` places replicas with the racks of the brokers named, as Kafka's
``getBrokerMetadatas(Enforced, brokers)`` does, unless ``--disable-rack-aware``."""

from __future__ import annotations

import json
import random

import pytest
from tests.contract.admin.conftest import register_brokers

from zkcontroller.admin.errors import AdminOperationError
from zkcontroller.admin.reassign import ReassignCommand
from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


def _proposed(text: str) -> dict[int, list[int]]:
    return {p["partition"]: p["replicas"] for p in json.loads(text)["partitions"]}


async def test_generate_spreads_each_partition_over_the_named_brokers_racks(
    zk: KafkaZkClient, admin: TopicAdmin
) -> None:
    await register_brokers(zk, [4, 5, 6], {4: "a", 5: "a", 6: "b"})
    await admin.create_topic_with_assignment("t", {p: [1, 2] for p in range(6)})
    for seed in range(5):  # whatever the random start, every partition has a replica on each rack
        _, proposed = await ReassignCommand(zk, random.Random(seed)).generate(["t"], [4, 5, 6])
        placed = _proposed(proposed)
        assert len(placed) == 6
        assert all({6} & set(r) and {4, 5} & set(r) for r in placed.values()), placed


async def test_generate_with_only_some_racks_needs_disable_rack_aware(zk: KafkaZkClient, admin: TopicAdmin) -> None:
    await register_brokers(zk, [4], {4: "a"})
    await admin.create_topic_with_assignment("t", {0: [1, 2]})
    command = ReassignCommand(zk, random.Random(0))
    with pytest.raises(AdminOperationError) as refused:
        await command.generate(["t"], [1, 4])
    assert str(refused.value) == ("Not all brokers have rack information. Add --disable-rack-aware in command line "
                                  "to make replica assignment without rack information.")
    _, proposed = await command.generate(["t"], [1, 4], rack_aware=False)
    assert sorted(_proposed(proposed)[0]) == [1, 4]
    _, proposed = await command.generate(["t"], [1, 2])  # the rack of a broker not named does not count
    assert sorted(_proposed(proposed)[0]) == [1, 2]
