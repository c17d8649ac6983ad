"""Config change notifications Kafka 2.8.2's ``ZkNodeChangeNotificationListener`` reads no data from, on the
embedded store and on a real ZooKeeper: one gone between the listing and the read (another broker purged it) is
``getDataAndStat``'s None, which the listener logs as ``read null data from <path>`` (WARN) and skips; ours
dropped it without a word. Empty data is data: Jackson reads it as ``MissingNode`` and the handler throws (the
listener's error line), not the null line. The controller takes neither as naming a topic."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from tests.helpers import ManualClock, wait_until

from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.controller.events import ControllerEvent, TopicUncleanLeaderElectionEnable
from zkcontroller.controller.unclean_election import UncleanElectionEvents
from zkcontroller.coordination.api import CoordinationSession, CreateMode
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

LISTENER = "kafka.common.ZkNodeChangeNotificationListener"
DYNAMIC = "kafka.server.DynamicConfigManager"
ENABLED = {"unclean.leader.election.enable": "true"}


async def _client(session: CoordinationSession) -> KafkaZkClient:
    zk = KafkaZkClient(session, ManualClock())
    await zk.create_top_level_paths()
    await session.ensure_path(paths.CONFIG_CHANGES)
    return zk


def _purge_before_read(session: CoordinationSession, gone: str) -> None:
    """Another broker deletes ``gone`` after this one listed ``/config/changes`` and before it reads the node: once
    (a later read that still names it, a purge's or a second pass's under load, finds it gone already)."""
    read = session.get_data_many
    deleted: list[str] = []

    async def racing(wanted: Sequence[str], *args: Any, **kwargs: Any) -> Any:
        if gone in wanted and not deleted:
            deleted.append(gone)
            await session.delete(gone)
        return await read(wanted, *args, **kwargs)

    session.get_data_many = racing  # type: ignore[method-assign]


async def test_a_notification_gone_when_read_gets_kafka_s_null_data_warning(
        session: CoordinationSession, caplog: pytest.LogCaptureFixture) -> None:
    zk = await _client(session)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {**ENABLED, "retention.ms": "5"})
    gone = await zk.create_config_change_notification("topics/t")
    await zk.create_config_change_notification("topics/t")
    _purge_before_read(session, gone)
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=ManualClock()))
    with caplog.at_level(logging.INFO, LISTENER), caplog.at_level(logging.INFO, DYNAMIC):
        await manager.startup()
        await wait_until(lambda: "topics/t with config" in caplog.text, timeout_s=10, what="the next notification")
    manager.shutdown()
    lines = [(r.name, r.levelname, r.getMessage()) for r in caplog.records if r.name in (LISTENER, DYNAMIC)]
    assert lines[:3] == [
        (LISTENER, "INFO", "Processing notification(s) to /config/changes"),
        (LISTENER, "WARNING", f"read null data from {gone}"),
        (DYNAMIC, "INFO", "Processing override for entityPath: topics/t with config: "
                          "HashMap(retention.ms -> 5, unclean.leader.election.enable -> true)"),
    ]


async def test_empty_data_is_no_null_data(session: CoordinationSession, caplog: pytest.LogCaptureFixture) -> None:
    zk = await _client(session)
    empty = await session.create(f"{paths.CONFIG_CHANGES}/{paths.CONFIG_CHANGE_PREFIX}", b"",
                                 CreateMode.PERSISTENT_SEQUENTIAL)
    await zk.create_config_change_notification("topics/none")
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=ManualClock()))
    with caplog.at_level(logging.INFO, LISTENER), caplog.at_level(logging.INFO, DYNAMIC):
        await manager.startup()
        await wait_until(lambda: "topics/none with config" in caplog.text, timeout_s=10, what="the next one")
    manager.shutdown()
    failures = [r for r in caplog.records if r.name == LISTENER and r.levelno >= logging.WARNING]
    assert [(r.levelname, r.getMessage()) for r in failures] == [
        ("ERROR", f"error processing change notification  from {empty}")]
    assert failures[0].exc_info is not None
    assert "Config change notification has an unexpected value" in str(failures[0].exc_info[1])


async def test_the_controller_takes_a_notification_gone_for_no_topic(session: CoordinationSession) -> None:
    zk = await _client(session)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", ENABLED)
    gone = await zk.create_config_change_notification("topics/t")
    last = await zk.create_config_change_notification("topics/t")
    _purge_before_read(session, gone)
    queued: list[ControllerEvent] = []
    core: Any = SimpleNamespace(is_active=True, zk=zk, on_watch=lambda _e: None, controller_id=1,
                                events=SimpleNamespace(put=queued.append),
                                dynamic_config=SimpleNamespace(unclean_leader_election_enable=False))
    family = UncleanElectionEvents(core)
    await family.process_config_change_notification(None)  # type: ignore[arg-type]
    assert [e.topic for e in queued if isinstance(e, TopicUncleanLeaderElectionEnable)] == ["t"]
    assert family.last_sequence_number == last.rsplit("_", 1)[1]
