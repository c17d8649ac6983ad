"""Unclean leader election enabled at runtime (spec §9.15): ``zkcontroller configs --alter`` writes the topic's
override and a config-change notification; the controller elects the topic's offline partitions outside the
ISR. On the embedded store and on a real ZooKeeper."""

from __future__ import annotations

import pytest
from tests.integration.conftest import ClusterFactory
from tests.integration.offline_partition import leader_elections, offline_partition, wait_for_zk_leader

from zkcontroller.admin.configs import (
    InvalidConfigsError,
    alter_topic_config,
    describe_topic_config,
    parse_add_config,
)
from zkcontroller.admin.errors import InvalidConfigError, UnknownTopicError
from zkcontroller.model import ReplicaAssignment, TopicPartition
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.hand_written_isr  # ISRs are written by hand, as a Kafka 2.6 leader does

UNCLEAN = "unclean.leader.election.enable"


async def test_enabling_unclean_election_for_a_topic_elects_its_offline_partitions(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    records: list[str] = make_cluster.records  # type: ignore[attr-defined]
    tp = TopicPartition("ledger", 0)
    _cluster, controller, other = await offline_partition(make_cluster, admin, tp)
    unclean_before = controller.context.stats.unclean_leader_elections
    first_record = len(records)

    assert await alter_topic_config(admin, "ledger", {UNCLEAN: "true"}, []) == {UNCLEAN: "true"}

    await wait_for_zk_leader(admin, tp, other)
    state = await admin.get_topic_partition_state(tp)
    assert state is not None and state.leader_and_isr.isr == (other,)
    assert controller.context.stats.unclean_leader_elections == unclean_before + 1
    elections = leader_elections(records[first_record:])
    assert [(r["strategy"], r["clean"], r["leader"]) for r in elections] == [("offline", False, other)]


async def test_configs_alter_merges_deletes_and_refuses_bad_input(admin: KafkaZkClient) -> None:
    await admin.create_top_level_paths()
    await admin.create_topic_assignment("t", None, {TopicPartition("t", 0): ReplicaAssignment((1,))})
    assert await alter_topic_config(admin, "t", {"retention.ms": "1000", UNCLEAN: "false"}, []) == {
        "retention.ms": "1000", UNCLEAN: "false"}
    assert await alter_topic_config(admin, "t", {UNCLEAN: "true"}, ["retention.ms"]) == {UNCLEAN: "true"}
    assert await describe_topic_config(admin, "t") == {UNCLEAN: "true"}
    changes = await admin.get_children("/config/changes")
    assert len(changes) == 2  # one notification per alteration
    with pytest.raises(InvalidConfigsError, match="Invalid config"):
        await alter_topic_config(admin, "t", {}, ["retention.ms"])
    with pytest.raises(InvalidConfigError, match="Expected value to be either true or false"):
        await alter_topic_config(admin, "t", {UNCLEAN: "maybe"}, [])
    with pytest.raises(UnknownTopicError, match="Topic 'nope' does not exist"):
        await alter_topic_config(admin, "nope", {UNCLEAN: "true"}, [])
    assert await describe_topic_config(admin, "t") == {UNCLEAN: "true"}  # the refused ones changed nothing

    # a key both added and deleted: Kafka adds, then deletes, so it is gone (it used to keep the added value)
    assert await alter_topic_config(admin, "t", {"retention.ms": "5", UNCLEAN: "false"}, [UNCLEAN]) == {
        "retention.ms": "5"}
    assert await describe_topic_config(admin, "t") == {"retention.ms": "5"}


def test_add_config_parsing() -> None:
    assert parse_add_config("a=1, b = x,c=[p,q]") == {"a": "1", "b": "x", "c": "p,q"}
    with pytest.raises(InvalidConfigsError, match="key=val"):
        parse_add_config("novalue")
