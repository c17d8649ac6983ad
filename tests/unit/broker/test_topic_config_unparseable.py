"""A broker reads ``/config/topics/<t>`` as Kafka 2.8.2's ``ConfigEntityZNode.decode`` does, as the controller reads
it: data that is not JSON, not a JSON object, or without a ``config`` object is no overrides (the broker defaults),
with a WARN naming the node; a value that is not a string (Kafka throws, and on a notification its listener logs
the failure) keeps the config the topic had. On the embedded store, at log creation and on a change notification."""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import AsyncIterator

import pytest
from tests.helpers import wait_until

from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

MIS = "min.insync.replicas"
LOGGER = "zkcontroller.broker.TopicConfigManager"
LISTENER = "kafka.common.ZkNodeChangeNotificationListener"


@pytest.fixture
async def manager(zk: KafkaZkClient) -> AsyncIterator[TopicConfigManager]:
    mgr = TopicConfigManager(1, lambda: zk, AsyncioRuntime())
    await mgr.startup()
    yield mgr
    mgr.shutdown()


async def _created(mgr: TopicConfigManager, topic: str) -> None:
    mgr.logs_created([topic])
    await asyncio.wait_for(mgr.wait_loaded([topic]), 5)


NO_OVERRIDES = [
    pytest.param(b"not json", id="not-json"),
    pytest.param(b'{"version":1,"config":', id="truncated"),
    pytest.param(b"[1,2]", id="array"),
    pytest.param(b'{"version":1,"config":null}', id="config-null"),
    pytest.param(b'{"version":1,"config":"min.insync.replicas=2"}', id="config-string"),
]


@pytest.mark.parametrize("data", NO_OVERRIDES)
async def test_a_node_kafka_reads_as_no_overrides_gives_the_defaults_on_a_change(
        zk: KafkaZkClient, manager: TopicConfigManager, data: bytes, caplog: pytest.LogCaptureFixture) -> None:
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {MIS: "2"})
    await _created(manager, "t")
    assert manager.min_insync_replicas("t") == 2
    with caplog.at_level(logging.WARNING, LOGGER):
        await zk.session.set_data(paths.topic_config_path("t"), data, -1)
        await zk.create_config_change_notification("topics/t")
        await wait_until(lambda: manager.min_insync_replicas("t") == 1, timeout_s=5, what="the defaults applied")
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and "/config/topics/t" in r.getMessage()]
    assert warned and "as no overrides" in warned[0].getMessage()
    # still followed: a later good change applies
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {MIS: "3"})
    await zk.create_config_change_notification("topics/t")
    await wait_until(lambda: manager.min_insync_replicas("t") == 3, timeout_s=5, what="the fixed config applied")


async def test_a_node_not_json_at_log_creation_gives_the_defaults_and_a_warning(
        zk: KafkaZkClient, manager: TopicConfigManager, caplog: pytest.LogCaptureFixture) -> None:
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "u", {"max.message.bytes": "10"})
    await zk.session.set_data(paths.topic_config_path("u"), b"\xc3\x28", -1)  # invalid UTF-8
    with caplog.at_level(logging.WARNING, LOGGER):
        await _created(manager, "u")
    assert "u" in manager.topics and manager.max_message_bytes("u") == manager.config("other").max_message_bytes
    assert any("/config/topics/u" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


async def test_a_value_that_is_not_a_string_keeps_the_config_and_is_logged(
        zk: KafkaZkClient, manager: TopicConfigManager, caplog: pytest.LogCaptureFixture) -> None:
    """On a notification, Kafka's ``ConfigEntityZNode.decode`` throws (``v.to[String]``) before the override line,
    and its listener logs the failure: that line, with Jackson's exception (it was a line of ours)."""
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {MIS: "2"})
    await _created(manager, "t")
    with caplog.at_level(logging.ERROR, LISTENER):
        await zk.session.set_data(paths.topic_config_path("t"), b'{"version":1,"config":{"retention.ms":"1",'
                                  b'"min.insync.replicas":3,"x":null}}', -1)
        changed = await zk.create_config_change_notification("topics/t")
        await wait_until(lambda: "error processing change notification" in caplog.text, timeout_s=5,
                         what="the failure logged")
    failed = [r for r in caplog.records if r.name == LISTENER]
    assert [r.getMessage() for r in failed] == [
        f'error processing change notification {{"version":2,"entity_path":"topics/t"}} from {changed}']
    assert failed[0].exc_info is not None and failed[0].exc_info[1] is not None
    assert traceback.format_exception_only(failed[0].exc_info[1]) == [
        "com.fasterxml.jackson.databind.JsonMappingException: Expected `String` value, received 3\n"]
    assert manager.min_insync_replicas("t") == 2
