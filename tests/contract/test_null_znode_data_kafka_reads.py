"""Znodes holding null data (ZooKeeper's null, not empty bytes) read as Kafka 2.8.2 reads them, on both backends.

Kafka reads null as absent only where it says so: ``getDataAndStat``'s ``Option`` (``ZkNodeChangeNotificationListener``
logs ``read null data from <path>`` and skips the notification, and never purges it: it purges ``if
(data.isDefined)``) and ``ConfigEntityZNode.decode``'s ``bytes != null`` (no overrides). Its JSON decoders
(``TopicPartitionStateZNode``, ``TopicZNode``, ``ControllerZNode``, ...) pass null to ``Json.parseBytes``, which
throws (not a parse error read as empty): here a `NullZnodeDataError`, reported as any malformed znode.
"""

from __future__ import annotations

import logging

import pytest
from tests.helpers import ManualClock, wait_until

from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.coordination.api import CoordinationSession, CreateMode
from zkcontroller.model import TopicPartition
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk import paths
from zkcontroller.zk.config_changes import CHANGE_EXPIRATION_MS, purge_obsolete_config_changes, read_config_changes
from zkcontroller.zk.errors import NullZnodeDataError, ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

LISTENER = "kafka.common.ZkNodeChangeNotificationListener"
DYNAMIC = "kafka.server.DynamicConfigManager"
TP = TopicPartition("t", 0)
STATE = paths.partition_state_path("t", 0)


async def _client(session: CoordinationSession) -> KafkaZkClient:
    zk = KafkaZkClient(session, ManualClock())
    await zk.create_top_level_paths()
    await session.ensure_path(paths.CONFIG_CHANGES)
    return zk


async def _null_notification(session: CoordinationSession) -> str:
    """A notification created with null data (``zkCli.sh create -s /config/changes/config_change_``)."""
    return await session.create(f"{paths.CONFIG_CHANGES}/{paths.CONFIG_CHANGE_PREFIX}", None,
                                CreateMode.PERSISTENT_SEQUENTIAL)


async def test_a_null_data_notification_is_warned_of_and_skipped_and_the_listener_goes_on(
        session: CoordinationSession, caplog: pytest.LogCaptureFixture) -> None:
    zk = await _client(session)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "5"})
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "u", {"segment.ms": "7"})
    null = await _null_notification(session)
    await zk.create_config_change_notification("topics/t")
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=ManualClock()))
    with caplog.at_level(logging.INFO, LISTENER), caplog.at_level(logging.INFO, DYNAMIC):
        await manager.startup()
        await wait_until(lambda: "topics/t with config" in caplog.text, timeout_s=10, what="the notification after")
        await zk.create_config_change_notification("topics/u")  # the listener still follows /config/changes
        await wait_until(lambda: "topics/u with config" in caplog.text, timeout_s=10, what="a later notification")
    manager.shutdown()
    # levels by number: another test may have renamed WARNING to Kafka's "WARN" (logging's names are global)
    lines = [(r.name, r.levelno, r.getMessage()) for r in caplog.records if r.name in (LISTENER, DYNAMIC)]
    assert lines[:3] == [
        (LISTENER, logging.INFO, "Processing notification(s) to /config/changes"),
        (LISTENER, logging.WARNING, f"read null data from {null}"),
        (DYNAMIC, logging.INFO,
         "Processing override for entityPath: topics/t with config: HashMap(retention.ms -> 5)"),
    ]
    assert (DYNAMIC, logging.INFO,
            "Processing override for entityPath: topics/u with config: HashMap(segment.ms -> 7)") in lines[3:]
    assert [line for line in lines if line[1] >= logging.WARNING] == [(LISTENER, logging.WARNING,
                                                                       f"read null data from {null}")]


async def test_a_null_data_notification_reads_as_null_data_and_is_never_purged(
        session: CoordinationSession) -> None:
    zk = await _client(session)
    null = await _null_notification(session)
    data = await zk.create_config_change_notification("topics/t")
    changes = await read_config_changes(zk, "")
    assert [(n.path, n.null_data, n.entity) for n in changes.notified] == [(null, True, ""), (data, False, "topics/t")]
    newest_ctime = max([(await session.get_data(p))[1].ctime for p in (null, data)])
    purged = await purge_obsolete_config_changes(zk, changes.seen, newest_ctime + CHANGE_EXPIRATION_MS + 1)
    assert purged == [data]  # Kafka's purge skips what getDataAndStat reads as None
    assert await session.exists(null) is not None


async def test_a_null_data_partition_state_is_malformed_not_absent_nor_empty(session: CoordinationSession) -> None:
    zk = await _client(session)
    await session.ensure_path(paths.topic_partitions_path("t"))
    await session.create(paths.topic_partition_path("t", 0), None)
    await session.create(STATE, None)
    with pytest.raises(NullZnodeDataError) as raised:
        await zk.get_topic_partition_state(TP)
    assert raised.value.path == STATE
    read = await zk.get_topic_partition_states([TP])
    assert read.values == {}
    assert isinstance(read.malformed[STATE], NullZnodeDataError)


@pytest.mark.parametrize("lenient", [False, True])
async def test_a_null_data_topic_znode_is_malformed_even_read_leniently(
        session: CoordinationSession, lenient: bool) -> None:
    zk = await _client(session)
    await session.create(paths.topic_path("t"), None)
    read = await zk.get_topic_assignments(["t"], lenient=lenient)
    assert read.values == {} and read.read_as_empty == {}  # Kafka throws on null: never an empty assignment
    assert isinstance(read.malformed[paths.topic_path("t")], NullZnodeDataError)


async def test_a_null_data_config_entity_has_no_overrides(session: CoordinationSession) -> None:
    zk = await _client(session)
    await session.ensure_path(paths.config_entity_path(paths.ConfigType.TOPIC, "t"))
    await session.set_data(paths.config_entity_path(paths.ConfigType.TOPIC, "t"), None)
    assert await zk.get_entity_configs(paths.ConfigType.TOPIC, "t") == {}
    assert await zk.get_entity_configs_lenient(paths.ConfigType.TOPIC, "t") == ({}, None)
    for lenient in (False, True):
        read = await zk.get_topic_configs(["t"], lenient=lenient)
        assert (read.values, read.malformed, read.read_as_empty) == ({"t": {}}, {}, {})


async def test_null_data_in_controller_nodes_is_malformed(session: CoordinationSession) -> None:
    zk = await _client(session)
    await session.create(paths.CONTROLLER, None, CreateMode.EPHEMERAL)
    await session.create(paths.CONTROLLER_EPOCH, None)
    with pytest.raises(NullZnodeDataError):
        await zk.get_controller_id()
    with pytest.raises(ZnodeDecodeError, match="null data"):
        await zk.get_controller_epoch()
    assert await zk.get_controller_owner() == (None, session.session_id)


async def test_the_producer_id_block_node_kafka_creates_null_reads_as_no_block_yet(
        session: CoordinationSession) -> None:
    zk = await _client(session)  # create_top_level_paths: Kafka's PersistentZkPaths, with null data
    assert (await session.get_data(paths.LATEST_PRODUCER_ID_BLOCK))[0] is None
    assert await zk.get_producer_id_block() == (None, 0)  # ProducerIdManager's `case None`: the first block next


async def test_an_empty_producer_id_block_is_malformed_unless_never_written(session: CoordinationSession) -> None:
    """Kafka's ``parseProducerIdBlockData`` fails on empty data, so a broker would reuse no ids from it; a node an
    earlier zkcontroller created empty (version 0, never written since) is still no block yet."""
    zk = await _client(session)
    await session.delete(paths.LATEST_PRODUCER_ID_BLOCK)
    await session.create(paths.LATEST_PRODUCER_ID_BLOCK, b"")
    assert await zk.get_producer_id_block() == (None, 0)
    await session.set_data(paths.LATEST_PRODUCER_ID_BLOCK, b"")
    with pytest.raises(ZnodeDecodeError) as raised:
        await zk.get_producer_id_block()
    assert raised.value.path == paths.LATEST_PRODUCER_ID_BLOCK
