"""Unclean leader election enabled at runtime (spec §9.15): ``zkcontroller configs --alter`` writes the topic's
override and a config-change notification; the controller elects the topic's offline partitions outside the
ISR. On the embedded store and on a real ZooKeeper."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import wait_until
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
    # the controller records the election once its ZooKeeper write has returned: after the admin may see it
    await wait_until(lambda: leader_elections(records[first_record:]), what="the election's record")
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


ENABLED = "Unclean leader election has been enabled for topic"


async def test_a_topic_enabled_while_no_controller_ran_is_announced_by_the_controller_its_broker_s_start_elects(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka 2.8.2: a broker's start processes every notification under ``/config/changes`` (its listener's
    ``lastExecutedChange`` starts at -1); ``TopicConfigHandler`` asks the controller, active by then when that
    start's election made it controller, for a ``TopicUncleanLeaderElectionEnable`` per topic whose override is
    true: "Unclean leader election has been enabled for topic ..." and its election. Ours began after the newest
    notification at each tenure, so a config set during an outage went unannounced. The partition is elected
    uncleanly once (the failover's election reads the config; the event finds nothing left offline)."""
    records: list[str] = make_cluster.records  # type: ignore[attr-defined]
    tp = TopicPartition("ledger", 0)
    cluster, _controller, other = await offline_partition(make_cluster, admin, tp)
    await cluster.stop_broker(other)  # the last broker: no controller runs
    first_record = len(records)
    assert await alter_topic_config(admin, "ledger", {UNCLEAN: "true"}, []) == {UNCLEAN: "true"}

    with caplog.at_level(logging.INFO, "kafka.controller.KafkaController"):
        await cluster.start_broker(other)
        await wait_for_zk_leader(admin, tp, other)
        await wait_until(lambda: f"[Controller id={other}] {ENABLED} ledger" in caplog.text,
                         what="the controller's TopicUncleanLeaderElectionEnable")
    elections = leader_elections(records[first_record:])
    assert [(r["strategy"], r["clean"], r["leader"]) for r in elections] == [("offline", False, other)]


async def test_a_topic_enabled_before_its_notification_was_purged_is_announced_at_the_broker_s_start(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka 2.8.2's ``DynamicConfigManager.startup`` goes over every topic's config after the notifications
    (``fetchAllEntityConfigs``), so a topic enabled long enough ago for its notification to be purged (15 minutes)
    is still announced by the controller the broker's start elects. Reading the notifications alone missed it."""
    tp = TopicPartition("ledger", 0)
    cluster, _controller, other = await offline_partition(make_cluster, admin, tp)
    await cluster.stop_broker(other)  # the last broker: no controller runs
    assert await alter_topic_config(admin, "ledger", {UNCLEAN: "true"}, []) == {UNCLEAN: "true"}
    for name in await admin.get_children("/config/changes"):  # purged, as after 15 minutes
        await admin.session.delete(f"/config/changes/{name}")

    with caplog.at_level(logging.INFO, "kafka.controller.KafkaController"):
        await cluster.start_broker(other)
        await wait_for_zk_leader(admin, tp, other)
        await wait_until(lambda: f"[Controller id={other}] {ENABLED} ledger" in caplog.text,
                         what="the controller's TopicUncleanLeaderElectionEnable from the topic's config")


async def test_a_controller_taking_over_later_does_not_announce_the_notifications_already_there(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A broker that was running when it becomes controller processed the notifications while it was not
    active (Kafka drops the events then): its tenure starts after them."""
    cluster = await make_cluster([1, 2])
    first = await cluster.wait_for_controller()
    await admin.create_topic_assignment("audit", None, {TopicPartition("audit", 0): ReplicaAssignment((1, 2))})
    with caplog.at_level(logging.INFO, "kafka.controller.KafkaController"):
        assert await alter_topic_config(admin, "audit", {UNCLEAN: "true"}, []) == {UNCLEAN: "true"}
        await wait_until(lambda: f"[Controller id={first.controller_id}] {ENABLED} audit" in caplog.text,
                         what="the live notification's event")
        other = 2 if first.controller_id == 1 else 1
        await cluster.stop_broker(other)
        await cluster.start_broker(other)  # its start-up election finds a controller
        await cluster.stop_broker(first.controller_id)
        second = await cluster.wait_for_controller(exclude=first.controller_id)
        await wait_until(lambda: second.is_active and second.unclean_election.last_sequence_number != "",
                         what="the new tenure's watches")
    assert f"[Controller id={second.controller_id}] {ENABLED}" not in caplog.text


async def test_each_notification_naming_an_enabled_topic_asks_for_its_own_election(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka's ``TopicConfigHandler`` calls ``enableTopicUncleanLeaderElection`` for each notification it
    processes, so a topic named by two notifications read in one pass gets two ``TopicUncleanLeaderElectionEnable``
    events, each logged and each an election pass over the topic's offline partitions; ours were merged into one
    per topic. Here the start-up tenure reads both at once, then every topic's config (a third event)."""
    tp = TopicPartition("ledger", 0)
    cluster, _controller, other = await offline_partition(make_cluster, admin, tp)
    await cluster.stop_broker(other)  # the last broker: no controller runs
    assert await alter_topic_config(admin, "ledger", {UNCLEAN: "true"}, []) == {UNCLEAN: "true"}
    await admin.create_config_change_notification("topics/ledger")  # the same topic, a second time
    line = f"[Controller id={other}] {ENABLED} ledger"

    with caplog.at_level(logging.INFO, "kafka.controller.KafkaController"):
        await cluster.start_broker(other)
        await wait_for_zk_leader(admin, tp, other)
        await wait_until(lambda: caplog.text.count(line) >= 3, what="one event per notification, one per config")
    assert caplog.text.count(line) == 3


async def test_a_topic_override_scala_s_to_boolean_refuses_asks_for_no_election(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    """``TopicConfigHandler`` asks for the event when ``Try(value.toBoolean).getOrElse(false)``: Scala's
    ``toBoolean`` takes ``true`` in any case but nothing around it, so `` true`` (which ConfigDef reads as true)
    asks for none; ours trimmed it. ``TRUE`` does ask."""
    cluster = await make_cluster([1, 2])
    controller = await cluster.wait_for_controller()
    await admin.set_or_create_entity_configs("topics", "spaced", {UNCLEAN: " true"})
    await admin.set_or_create_entity_configs("topics", "upper", {UNCLEAN: "TRUE"})
    with caplog.at_level(logging.INFO, "kafka.controller.KafkaController"):
        await admin.create_config_change_notification("topics/spaced")
        await admin.create_config_change_notification("topics/upper")
        await wait_until(lambda: f"{ENABLED} upper" in caplog.text, what="the event of the later notification")
    assert f"[Controller id={controller.controller_id}] {ENABLED} spaced" not in caplog.text
