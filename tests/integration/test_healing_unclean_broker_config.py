"""Unclean leader election enabled by the dynamic broker config (spec §9.15, Kafka's ``UncleanLeaderElectionEnable``):
``/config/brokers/<default>`` and ``/config/brokers/<id>`` over the static server config. On the embedded store
and on a real ZooKeeper."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory
from tests.integration.offline_partition import (
    leader_elections,
    lose_the_isr,
    offline_partition,
    wait_for_zk_leader,
    zk_leader,
)

from zkcontroller.admin.configs import BrokerRunningError, alter_broker_config, change_broker_config
from zkcontroller.admin.errors import InvalidConfigError
from zkcontroller.controller.event_log import CONTROLLER_LOGGER
from zkcontroller.controller.kafka_controller import KafkaController
from zkcontroller.controller.unclean_election import UNCLEAN_ELECTION_LOGGER
from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.hand_written_isr  # ISRs are written by hand, as a Kafka 2.6 leader does

UNCLEAN = "unclean.leader.election.enable"
DEFAULT = paths.DEFAULT_ENTITY
TP = TopicPartition("ledger", 0)
BROKERS_LOGGERS = ("kafka.server.DynamicConfigManager", "zkcontroller.broker.TopicConfigManager")
"""The brokers read these nodes too (their log defaults) and report the same paths; these tests are about the
controller's reports."""


async def test_broker_default_enables_unclean_election_of_offline_partitions(
    make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=CONTROLLER_LOGGER)
    caplog.set_level(logging.INFO, logger=UNCLEAN_ELECTION_LOGGER)
    records: list[str] = make_cluster.records  # type: ignore[attr-defined]
    _cluster, controller, other = await offline_partition(make_cluster, admin, TP)
    unclean_before = controller.context.stats.unclean_leader_elections
    first_record = len(records)
    # A notification that changes nothing else (a custom key): the partition stays offline.
    await alter_broker_config(admin, DEFAULT, {"custom.key": "x"}, [], via_broker=True)
    await wait_until(lambda: any("entityPath: brokers/<default>" in r.getMessage() for r in caplog.records
                                 if r.name == UNCLEAN_ELECTION_LOGGER), what="the notification read")
    assert controller.core.dynamic_config.unclean_leader_election_enable is False
    assert await zk_leader(admin, TP) == -1

    # The --zookeeper path refuses while brokers run, as Kafka 2.8's ConfigCommand.
    with pytest.raises(BrokerRunningError, match=r"--bootstrap-server option must be specified to update broker "
                       r"configs Set\(unclean.leader.election.enable\). for default cluster if any broker is running"):
        await alter_broker_config(admin, DEFAULT, {UNCLEAN: "true"}, [])
    with pytest.raises(InvalidConfigError, match="Expected value to be either true or false"):
        await alter_broker_config(admin, DEFAULT, {UNCLEAN: "maybe"}, [], via_broker=True)

    await alter_broker_config(admin, DEFAULT, {UNCLEAN: "true"}, [], via_broker=True)

    await wait_for_zk_leader(admin, TP, other)
    state = await admin.get_topic_partition_state(TP)
    assert state is not None and state.leader_and_isr.isr == (other,)
    assert controller.context.stats.unclean_leader_elections == unclean_before + 1
    # the election's record and its warning come once the controller's ZooKeeper write has returned: after the
    # admin may see the new leader
    def unclean_lines() -> list[str]:
        return [r.getMessage() for r in caplog.records if "Unclean leader election for partition" in r.getMessage()]

    await wait_until(lambda: leader_elections(records[first_record:]) and unclean_lines(),
                     what="the election's record and warning")
    elections = leader_elections(records[first_record:])
    assert [(r["strategy"], r["clean"], r["leader"]) for r in elections] == [("offline", False, other)]
    assert "Unclean leader election has been enabled by default" in [
        r.getMessage().split("] ", 1)[-1] for r in caplog.records if r.name == CONTROLLER_LOGGER]
    # Our line (Kafka has none): under our logger, not KafkaController's, with the controller's ident
    [unclean] = unclean_lines()
    assert unclean.startswith(f"[Controller id={controller.controller_id}] Unclean leader election for partition "
                              f"{TP}: new leader {other} was not in the ISR")
    assert [r.name for r in caplog.records if "Unclean leader election for partition" in r.getMessage()] == [
        UNCLEAN_ELECTION_LOGGER]


async def _per_broker_false_under_default_true(make_cluster: ClusterFactory,
                                               admin: KafkaZkClient) -> tuple[KafkaController, int, str]:
    """An offline ``TP``, the controller's own broker config saying false over a cluster default saying true, both
    read: the controller, the other broker, and the controller's entity name."""
    _cluster, controller, other = await offline_partition(make_cluster, admin, TP)
    own = str(controller.controller_id)
    await alter_broker_config(admin, own, {UNCLEAN: "false"}, [], via_broker=True)
    await alter_broker_config(admin, DEFAULT, {UNCLEAN: "true"}, [], via_broker=True)
    dynamic = controller.core.dynamic_config
    await wait_until(lambda: dynamic.default_unclean_leader_election_enable is True, what="the default read")
    return controller, other, own


async def test_per_broker_false_overrides_the_default_true(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    controller, other, own = await _per_broker_false_under_default_true(make_cluster, admin)
    dynamic = controller.core.dynamic_config
    assert dynamic.broker_unclean_leader_election_enable is False
    assert dynamic.unclean_leader_election_enable is False
    events = controller.event_manager  # an election, had one been queued, is written once the queue drains
    await wait_until(lambda: events.queue_size == 0 and events.state.name == "IDLE", what="the controller idle")
    assert await zk_leader(admin, TP) == -1

    await alter_broker_config(admin, own, {}, [UNCLEAN], via_broker=True)  # the default applies: false → true

    await wait_for_zk_leader(admin, TP, other)


async def test_malformed_broker_default_is_reported_and_ignored(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession,
    caplog: pytest.LogCaptureFixture
) -> None:
    _cluster, controller, other = await offline_partition(make_cluster, admin, TP)
    path = paths.broker_config_path(DEFAULT)
    await session.ensure_path(paths.config_entity_type_path(paths.ConfigType.BROKER))
    await session.create(path, b'{"version":1,"config":{"unclean.leader.election.enable":true}}')  # not a string
    await admin.create_config_change_notification(f"brokers/{DEFAULT}")

    def controller_reports() -> list[str]:  # the brokers report the same path, possibly first
        return [r.getMessage() for r in caplog.records
                if r.levelno == logging.ERROR and path in r.getMessage() and r.name not in BROKERS_LOGGERS]

    await wait_until(lambda: bool(controller_reports()), what="the controller's report of the malformed config")
    [report] = controller_reports()
    assert "config.unclean.leader.election.enable" in report  # what is wrong, not only where
    assert controller.core.dynamic_config.default_unclean_leader_election_enable is None
    assert controller.is_active and await zk_leader(admin, TP) == -1

    # ConfigCommand cannot read it either (Kafka's fetchEntityConfig fails the same way) ...
    with pytest.raises(ZnodeDecodeError, match="expected a string"):
        await alter_broker_config(admin, DEFAULT, {UNCLEAN: "true"}, [], via_broker=True)
    # ... so it is overwritten whole; the controller keeps running and acts on the valid default.
    await change_broker_config(admin, DEFAULT, {UNCLEAN: "true"})

    await wait_for_zk_leader(admin, TP, other)

    # A well-formed node with a value ConfigDef refuses: Kafka's removeInvalidConfigs drops that key.
    await change_broker_config(admin, DEFAULT, {UNCLEAN: "yes"})
    await wait_until(lambda: controller.core.dynamic_config.default_unclean_leader_election_enable is None,
                     what="the invalid value dropped")
    assert any("Dynamic default cluster config contains invalid values in: Set(unclean.leader.election.enable), "
               "these configs will be ignored" in r.getMessage() for r in caplog.records)


async def test_broker_default_set_before_start_up_is_read_at_failover(
    make_cluster: ClusterFactory, admin: KafkaZkClient
) -> None:
    await admin.create_top_level_paths()
    # No broker is running yet, so the --zookeeper path may write it (Kafka's bootstrapping case).
    assert await alter_broker_config(admin, DEFAULT, {UNCLEAN: "true"}, []) == {UNCLEAN: "true"}
    cluster = await make_cluster([1, 2])
    controller = await cluster.wait_for_controller()
    assert controller.core.dynamic_config.unclean_leader_election_enable is True
    controller, other = await lose_the_isr(cluster, admin, TP)

    await wait_for_zk_leader(admin, TP, other, what="the failover's unclean election")
    assert controller.context.stats.unclean_leader_elections >= 1


async def test_broker_default_set_while_the_controller_was_disconnected_is_seen_once_reconnected(
    make_cluster: ClusterFactory, admin: KafkaZkClient, backend: CoordinationBackend
) -> None:
    """A dropped connection disarms the ``/config/changes`` watch; once reconnected the controller reads the
    notifications it missed."""
    from zkcontroller.coordination.embedded_backend import EmbeddedBackend

    if not isinstance(backend, EmbeddedBackend):
        pytest.skip("cutting one client's connection is an embedded-store drill (a real server would need a proxy)")
    _cluster, controller, other = await offline_partition(make_cluster, admin, TP)
    session_id = controller.zk.session.session_id
    backend.server.disconnect(session_id)
    await alter_broker_config(admin, DEFAULT, {UNCLEAN: "true"}, [], via_broker=True)  # fired into the disconnection
    backend.server.reconnect(session_id)

    await wait_for_zk_leader(admin, TP, other, what="the unclean election after reconnecting")


async def test_unparseable_broker_config_drops_that_level(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession,
    caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka reads a ``/config/brokers/<id>`` that is not JSON as no overrides (audit-controller-core finding 1c):
    the per-broker false goes, the default true applies, and the offline partition is elected; the node is
    reported with its path and the parse error."""
    controller, other, own = await _per_broker_false_under_default_true(make_cluster, admin)
    dynamic = controller.core.dynamic_config
    assert dynamic.broker_unclean_leader_election_enable is False and await zk_leader(admin, TP) == -1

    path = paths.broker_config_path(own)
    await session.set_data(path, b"{not json", -1)
    await admin.create_config_change_notification(f"brokers/{own}")

    await wait_for_zk_leader(admin, TP, other)
    assert dynamic.broker_unclean_leader_election_enable is None
    [report] = [r.getMessage() for r in caplog.records
                if path in r.getMessage() and r.levelno == logging.WARNING and r.name not in BROKERS_LOGGERS]
    assert "as no overrides" in report and "invalid JSON" in report


@pytest.mark.parametrize("data", [b"{not json", b'{"version":1,"config":null}'], ids=["not-json", "config-null"])
async def test_unparseable_topic_config_change_is_read_as_no_overrides(
    make_cluster: ClusterFactory, admin: KafkaZkClient, session: CoordinationSession,
    caplog: pytest.LogCaptureFixture, data: bytes
) -> None:
    """Kafka's TopicConfigHandler reads a ``/config/topics/<t>`` that is not JSON, or has no ``config`` object, as
    no overrides: unclean election is not enabled for the topic, so its offline partition stays offline; reported
    as a WARN, not an error."""
    caplog.set_level(logging.INFO, logger=CONTROLLER_LOGGER)
    _cluster, _controller, _other = await offline_partition(make_cluster, admin, TP)
    await admin.set_or_create_entity_configs(paths.ConfigType.TOPIC, TP.topic, {})
    before = len(caplog.records)
    await session.set_data(paths.topic_config_path(TP.topic), data, -1)
    await admin.create_config_change_notification(f"topics/{TP.topic}")
    await wait_until(lambda: any("Reading the config of topic ledger as no overrides" in r.getMessage()
                                 for r in caplog.records if r.levelno == logging.WARNING), what="the node reported")
    assert not [r for r in caplog.records[before:]
                if r.name in (CONTROLLER_LOGGER, UNCLEAN_ELECTION_LOGGER) and r.levelno >= logging.ERROR]
    assert await zk_leader(admin, TP) == -1
