"""A broker's start processes every notification already under ``/config/changes``, as Kafka 2.8.2's
``ZkNodeChangeNotificationListener.init`` does (``lastExecutedChange`` starts at -1, so ``processNotifications`` takes
every child in order), logging Kafka's lines; then the ones older than ``changeExpirationMs`` (15 min) are purged,
as each Kafka broker's listener purges them after a pass."""

from __future__ import annotations

import logging

import pytest
from tests.helpers import ManualClock, wait_until

from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

LISTENER = "kafka.common.ZkNodeChangeNotificationListener"
DYNAMIC = "kafka.server.DynamicConfigManager"
MINUTE_MS = 60_000


async def test_notifications_there_at_start_are_processed_and_the_expired_purged(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    zk, clock = store
    await zk.set_or_create_entity_configs(paths.ConfigType.CLIENT, "c", {"producer_byte_rate": "1024"})
    await zk.create_config_change_notification("clients/c")
    clock.advance(10 * MINUTE_MS)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "5", "segment.ms": "7"})
    await zk.create_config_change_notification("topics/t")  # a topic this broker has no log of: read and logged
    await zk.create_config_change_notification("brokers/2")  # another broker's: read and logged, not taken
    await zk.create_config_change_notification("topics/t")  # a second notification is processed again
    clock.advance(6 * MINUTE_MS)  # the first notification is now 16 minutes old

    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    with caplog.at_level(logging.DEBUG, LISTENER), caplog.at_level(logging.DEBUG, DYNAMIC):
        await manager.startup()
        await wait_until(lambda: "Purging change notification" in caplog.text, timeout_s=5, what="the first pass")
    manager.shutdown()

    # the configs in the Scala mutable.HashMap's order: both keys fall in bucket 11 of 16, retention.ms first (its
    # improved hash is negative)
    topic_line = "Processing override for entityPath: topics/t with config: HashMap(retention.ms -> 5, segment.ms -> 7)"
    processing = (LISTENER, "Processing notification(s) to /config/changes")
    lines = [(r.name, r.getMessage()) for r in caplog.records if r.name in (LISTENER, DYNAMIC)]
    assert lines[:6] == [
        processing,
        (DYNAMIC, "Processing override for entityPath: clients/c with config: HashMap(producer_byte_rate -> 1024)"),
        (DYNAMIC, topic_line),
        (DYNAMIC, "Processing override for entityPath: brokers/2 with config: HashMap()"),
        (DYNAMIC, topic_line),
        (LISTENER, "Purging change notification /config/changes/config_change_0000000000"),
    ]
    assert set(lines[6:]) <= {processing}  # the purge is a child change: Kafka's listener runs a pass again
    assert sorted(await zk.session.get_children(paths.CONFIG_CHANGES)) == [
        "config_change_0000000001", "config_change_0000000002", "config_change_0000000003"]


async def test_one_notification_failing_is_logged_and_the_rest_are_processed(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka's ``processNotification`` wraps each handler call in a ``Try``: one failing is logged ("error
    processing change notification <json> from <path>") and the pass goes on to the next and to the purge. Before,
    the failure ended the pass, so the next notification waited for another change."""
    zk, clock = store
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "5"})
    bad = await zk.create_config_change_notification("topics/bad")
    await zk.create_config_change_notification("topics/t")
    clock.advance(16 * MINUTE_MS)
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    handle = manager._entity_changed

    async def failing(entity: str, *, version: int = 2) -> None:
        if entity == "topics/bad":
            raise RuntimeError("the handler failed")
        await handle(entity, version=version)

    monkeypatch.setattr(manager, "_entity_changed", failing)
    with caplog.at_level(logging.DEBUG, LISTENER), caplog.at_level(logging.DEBUG, DYNAMIC):
        await manager.startup()
        await wait_until(lambda: caplog.text.count("Purging change notification") == 2, timeout_s=5,
                         what="both notifications purged after the pass")
    manager.shutdown()
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in errors] == [
        f'error processing change notification {{"version":2,"entity_path":"topics/bad"}} from {bad}']
    assert "Processing override for entityPath: topics/t with config: HashMap(retention.ms -> 5)" in caplog.text
