"""JSON nested deeper than Python's decoder goes (it recurses: about 1,000 levels) was read as "not JSON": a config
node so nested was read as no overrides (its topic lost them), a notification skipped as Kafka skips non-JSON.
Jackson 2.10, Kafka 2.8's parser, reads any depth, so it is JSON: here a failure naming the node and the depth
(the entity keeps what it had), found in linear time."""

from __future__ import annotations

import traceback

import pytest
from tests.helpers import ManualClock

from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk import paths
from zkcontroller.zk.config_changes import NotificationDecodeError, decode_notification
from zkcontroller.zk.errors import UnparseableZnodeError
from zkcontroller.zk.json_fields import JsonTooDeepError, json_nesting, parse_json
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes.config import ConfigEntityZNode

from .config_listener import the_one_listener_failure

DEEP = 5000
PAD = b"[" * DEEP + b"]" * DEEP


def test_the_depth_is_counted_outside_strings_without_recursion() -> None:
    assert json_nesting('{"a":"[[[{{","b":[{"c":"\\"["}]}') == (3, True)
    assert json_nesting("[" * 1_000_000)[0] == 1_000_000
    with pytest.raises(JsonTooDeepError) as refused:
        parse_json(b'{"config":{"a":"b"},"pad":' + PAD + b"}", "/config/topics/t")
    assert refused.value.depth == DEEP + 1
    assert refused.value.reason.startswith(f"JSON nested {DEEP + 1} levels deep")
    assert refused.value.path == "/config/topics/t"
    with pytest.raises(UnparseableZnodeError) as unclosed:  # never closed: Jackson fails at the end too
        parse_json(b"[" * 1_000_000, "/config/topics/t")
    assert not isinstance(unclosed.value, JsonTooDeepError) and "invalid JSON" in unclosed.value.reason


def test_a_deep_config_node_is_malformed_not_no_overrides() -> None:
    with pytest.raises(JsonTooDeepError):
        ConfigEntityZNode.decode_lenient(b'{"config":{"retention.ms":"5"},"pad":' + PAD + b"}", "/config/topics/t")


def test_a_deep_notification_is_a_failure_naming_it_not_data_skipped() -> None:
    notification = decode_notification("0000000003", b'{"version":2,"entity_path":"topics/t","pad":' + PAD + b"}")
    assert notification.not_json is None and notification.entity == ""
    assert isinstance(notification.failure, NotificationDecodeError)
    assert str(notification.failure) == (
        f"Cannot decode the config change notification /config/changes/config_change_0000000003: JSON nested "
        f"{DEEP + 1} levels deep, deeper than this parser reads (Python's recursion limit); Kafka 2.8's Jackson has "
        "no depth limit")


async def test_a_broker_keeps_the_config_a_deep_node_would_have_dropped(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    zk, clock = store
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"retention.ms": "5"})
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    manager.logs_created(["t"])
    await manager.wait_loaded(["t"])
    await zk.session.set_data(paths.topic_config_path("t"), b'{"version":1,"config":{"retention.ms":"7"},"pad":'
                              + PAD + b"}")
    bad = await zk.create_config_change_notification("topics/t")
    await zk.create_config_change_notification("topics/none")
    failure = await the_one_listener_failure(manager, caplog, bad, "topics/t", handled_next="topics/none")
    assert f"/config/topics/t: JSON nested {DEEP + 1} levels deep" in traceback.format_exception_only(failure)[0]
    assert manager.config("t").values["retention.ms"] == 5  # kept: not reset to the broker default
