"""What Kafka 2.8.2's ``TopicConfigHandler.processConfigChanges`` throws on a topic's new config, in its order: an
unknown ``message.format.version`` (``ApiVersion.apply``), a value ``LogConfig.fromProps`` refuses (only where the
broker has logs of the topic), a throttled replica list it cannot parse. Its listener logs ``error processing
change notification`` with the exception; the broker's own line was all there was, and the controller still asked
for ``TopicUncleanLeaderElectionEnable``, which Kafka's handler, aborted, never reaches."""

from __future__ import annotations

import logging
import traceback

import pytest
from tests.helpers import ManualClock, wait_until

from zkcontroller.broker.topic_config_manager import TopicConfigManager
from zkcontroller.runtime.runtime import AsyncioRuntime
from zkcontroller.zk import paths
from zkcontroller.zk.config_changes import (
    ArrayIndexOutOfBoundsException,
    ConfigException,
    check_topic_config_change,
    throttled_partitions,
)
from zkcontroller.zk.java_text import IllegalArgumentException, NumberFormatException
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

from .config_listener import the_one_listener_failure

HANDLER = "kafka.server.TopicConfigHandler"
LEADER = "leader.replication.throttled.replicas"
THROTTLED_FORMAT = ("must be the literal '*' or a list of replicas in the following format: "
                    "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


def _check(configs: dict[str, str], *, has_logs: bool = True, ibp: str = "2.8-IV1") -> None:
    check_topic_config_change(configs, 1, has_logs=has_logs, inter_broker_protocol_version=ibp)


def test_the_handler_throws_what_kafka_throws_in_its_order() -> None:
    with pytest.raises(IllegalArgumentException, match=r"^Version `9\.9` is not a valid version$"):
        _check({"message.format.version": "9.9", "retention.ms": "x"})  # excludedConfigs runs first
    with pytest.raises(ConfigException, match=r"^Invalid value x for configuration retention\.ms: Not a number of "
                                              r"type LONG$"):
        _check({"retention.ms": "x", LEADER: "a"})
    _check({"retention.ms": "x"}, has_logs=False)  # no logs: LogConfig.fromProps is not called
    with pytest.raises(ConfigException) as refused:
        _check({LEADER: "0:1, x"}, has_logs=False)
    assert str(refused.value) == (f"Invalid value ArraySeq(0:1, x) for configuration {LEADER}: {LEADER} "
                                  f"{THROTTLED_FORMAT}")
    _check({"message.format.version": "2.8", "retention.ms": "5"}, ibp="2.7")  # newer than the IBP: left out


def test_throttled_lists_are_split_as_kafka_splits_them() -> None:
    """The validator trims each item; the split after it does not, and indexes the pair without a check."""
    assert throttled_partitions(LEADER, " 0:1,2:1,3:2 ", 1) == [0, 2]
    assert throttled_partitions(LEADER, "*", 1) is None
    assert throttled_partitions(LEADER, ",", 1) == []
    with pytest.raises(NumberFormatException, match=r'^For input string: " 2"$'):
        throttled_partitions(LEADER, "0:1, 2:1", 1)
    with pytest.raises(NumberFormatException, match=r'^For input string: "1 "$'):
        throttled_partitions(LEADER, "0:1 ,2:2", 1)
    with pytest.raises(NumberFormatException, match=r'^For input string: "99999999999"$'):
        throttled_partitions(LEADER, "0:99999999999", 1)
    with pytest.raises(ArrayIndexOutOfBoundsException, match=r"^Index 1 out of bounds for length 1$"):
        throttled_partitions(LEADER, "0:1,,2:1", 1)
    with pytest.raises(ArrayIndexOutOfBoundsException):
        throttled_partitions(LEADER, "*,", 1)  # passes the validator (mkString), not the split


@pytest.mark.parametrize(("configs", "exception"), [
    ({"retention.ms": "soon"},
     "org.apache.kafka.common.config.ConfigException: Invalid value soon for configuration retention.ms: Not a "
     "number of type LONG"),
    ({LEADER: "0:1:2"},
     f"org.apache.kafka.common.config.ConfigException: Invalid value [0:1:2] for configuration {LEADER}: "
     f"{LEADER} {THROTTLED_FORMAT}"),
    ({"message.format.version": "3.0"},
     "java.lang.IllegalArgumentException: Version `3.0` is not a valid version"),
])
async def test_a_topic_config_the_handler_throws_on_gets_the_listener_s_line(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture, configs: dict[str, str],
        exception: str) -> None:
    zk, clock = store
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", configs)
    bad = await zk.create_config_change_notification("topics/t")
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "u", {"retention.ms": "5"})
    await zk.create_config_change_notification("topics/u")
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock))
    manager.logs_created(["t", "u"])
    await manager.wait_loaded(["t", "u"])
    caplog.clear()
    failure = await the_one_listener_failure(manager, caplog, bad, "topics/t", handled_next="topics/u")
    assert traceback.format_exception_only(failure) == [exception + "\n"]
    assert manager.config("u").values["retention.ms"] == 5


async def test_a_message_format_version_newer_than_the_ibp_is_left_out_with_kafka_s_warning(
        store: tuple[KafkaZkClient, ManualClock], caplog: pytest.LogCaptureFixture) -> None:
    zk, clock = store
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {"message.format.version": "2.8"})
    await zk.create_config_change_notification("topics/t")
    manager = TopicConfigManager(1, lambda: zk, AsyncioRuntime(clock=clock), inter_broker_protocol_version="2.7")
    with caplog.at_level(logging.INFO, HANDLER):
        await manager.startup()
        await wait_until(lambda: HANDLER in {r.name for r in caplog.records}, timeout_s=5, what="the warning")
    manager.shutdown()
    assert [(r.levelname, r.getMessage()) for r in caplog.records if r.name == HANDLER] == [
        ("WARNING", "Log configuration message.format.version is ignored for `t` because `2.8` is not compatible "
                    "with Kafka inter-broker protocol version `2.7`")]
