"""The lines a broker's config manager writes for the notifications Kafka 2.8.2's ``DynamicConfigManager`` handles
apart: a broker entity that is no broker id (``BrokerConfigHandler``'s ``brokerId.trim.toInt`` throws), a version 1
notification (``processEntityConfigChangeVersion1``'s own line, and its refusal of types other than ``topics`` and
``clients``). A failure is logged by ``ZkNodeChangeNotificationListener.processNotification`` with the znode's bytes
as ``new String(data, UTF_8)`` reads them, and the pass goes on with the next notification."""

from __future__ import annotations

import logging
import traceback

import pytest
from tests.helpers import ManualClock, wait_until

from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.coordination.api import CreateMode
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

LISTENER = "kafka.common.ZkNodeChangeNotificationListener"
DYNAMIC = "kafka.server.DynamicConfigManager"


async def _notify(zk: KafkaZkClient, data: bytes) -> str:
    """A notification holding ``data`` as it is (a writer other than ours)."""
    return await zk.session.create(f"{paths.CONFIG_CHANGES}/{paths.CONFIG_CHANGE_PREFIX}", data,
                                   CreateMode.PERSISTENT_SEQUENTIAL)


async def _first_pass(zk: KafkaZkClient, clock: ManualClock, caplog: pytest.LogCaptureFixture,
                      last_line: str) -> list[logging.LogRecord]:
    """Broker 1's config manager started on the notifications there; its Kafka lines until ``last_line``."""
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    with caplog.at_level(logging.DEBUG, LISTENER), caplog.at_level(logging.DEBUG, DYNAMIC):
        await manager.startup()
        await wait_until(lambda: last_line in caplog.text, timeout_s=5, what=last_line)
    manager.shutdown()
    return [r for r in caplog.records if r.name in (LISTENER, DYNAMIC)]


async def test_a_broker_entity_that_is_no_id_is_logged_as_kafka_fails_on_it_and_the_pass_goes_on(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """It was read, logged and skipped without a word; Kafka's handler throws ``NumberFormatException`` after the
    override line, and the listener logs the notification as stored: here with spaces our re-encoding dropped and
    trailing bytes Jackson never reads, which are not UTF-8 (an encoded surrogate: one U+FFFD in Java, three in
    Python's decoder)."""
    zk, clock = store
    stored = b'{"version": 2, "entity_path": "brokers/ abc"}\xed\xa0\x80'
    bad = await _notify(zk, stored)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "5"})
    await zk.create_config_change_notification("topics/t")
    topic_line = "Processing override for entityPath: topics/t with config: HashMap(retention.ms -> 5)"
    records = await _first_pass(zk, clock, caplog, topic_line)

    lines = [(r.name, r.levelname, r.getMessage()) for r in records]
    assert lines[:4] == [
        (LISTENER, "INFO", "Processing notification(s) to /config/changes"),
        (DYNAMIC, "INFO", "Processing override for entityPath: brokers/ abc with config: HashMap()"),
        (LISTENER, "ERROR", 'error processing change notification {"version": 2, "entity_path": "brokers/ abc"}'
                            f"\ufffd from {bad}"),
        (DYNAMIC, "INFO", topic_line),
    ]
    exc_info = records[2].exc_info
    assert exc_info is not None and exc_info[1] is not None
    assert traceback.format_exception_only(exc_info[1]) == [
        'java.lang.NumberFormatException: For input string: "abc"\n']


async def test_a_version_1_notification_has_kafka_s_own_line_and_only_topics_and_clients(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    """Version 1 (Kafka before 0.10.1 wrote it) was logged with version 2's line; Kafka logs the type and the
    entity apart and prints the ``java.util.Properties`` (order and ``{k=v}`` form checked against JDK 17), and
    refuses a version 1 notification of any type but ``topics`` and ``clients``."""
    zk, clock = store
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {
        "retention.ms": "5", "segment.ms": "7", "cleanup.policy": "compact"})
    await zk.set_or_create_entity_configs(paths.ConfigType.CLIENT, "c", {"producer_byte_rate": "1024"})
    await _notify(zk, b'{"version":1,"entity_type":"topics","entity_name":"t"}')
    await _notify(zk, b'{"version":1,"entity_type":"clients","entity_name":"c"}')
    broker = b'{"version":1,"entity_type":"brokers","entity_name":"1"}'
    bad = await _notify(zk, broker)
    await _notify(zk, b'{"version":1,"entity_type":"topics","entity_name":"none"}')
    last = "Processing override for entityType: topics, entity: none with config: {}"
    records = await _first_pass(zk, clock, caplog, last)

    lines = [(r.name, r.levelname, r.getMessage()) for r in records]
    assert lines[1:5] == [
        (DYNAMIC, "INFO", "Processing override for entityType: topics, entity: t with config: "
                          "{cleanup.policy=compact, retention.ms=5, segment.ms=7}"),
        (DYNAMIC, "INFO", "Processing override for entityType: clients, entity: c with config: "
                          "{producer_byte_rate=1024}"),
        (LISTENER, "ERROR", f"error processing change notification {broker.decode()} from {bad}"),
        (DYNAMIC, "INFO", last),
    ]
    exc_info = records[3].exc_info
    assert exc_info is not None and exc_info[1] is not None
    assert traceback.format_exception_only(exc_info[1]) == [
        "java.lang.IllegalArgumentException: Version 1 config change notification must have 'entity_type' set to "
        f"'clients' or 'topics'. Received: {broker.decode()}\n"]
