"""``configs --alter``'s one path (`alter_topic_config` → `change_topic_config`), checked in Kafka 2.8's order:
ConfigCommand.alterConfigWithZk refuses unknown deleted keys against the stored overrides first, then
AdminZkClient.validateTopicConfig checks the name, the topic's existence and the merged values."""

from __future__ import annotations

import pytest

from zkcontroller.admin.configs import InvalidConfigsError, alter_topic_config
from zkcontroller.admin.errors import InvalidConfigError, InvalidTopicError, UnknownTopicError
from zkcontroller.admin.topics import TopicAdmin, change_topic_config
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def _unchanged(zk: KafkaZkClient, topic: str, expected: dict[str, str]) -> None:
    assert await zk.get_entity_configs(paths.ConfigType.TOPIC, topic) == expected
    assert await zk.get_children(paths.CONFIG_CHANGES) == []


async def test_a_missing_deleted_key_is_reported_before_a_missing_topic(zk: KafkaZkClient) -> None:
    # A topic that does not exist has no overrides, so the deletion is what Kafka refuses.
    with pytest.raises(InvalidConfigsError, match=r"^Invalid config\(s\): retention.ms$"):
        await alter_topic_config(zk, "nope", {"segment.ms": "10"}, ["retention.ms"])
    assert not await zk.path_exists("/config/topics/nope")


async def test_a_missing_topic_is_reported_when_no_deleted_key_is_missing(zk: KafkaZkClient) -> None:
    with pytest.raises(UnknownTopicError, match=r"^Topic 'nope' does not exist\.$"):
        await alter_topic_config(zk, "nope", {"segment.ms": "10"}, [])
    # existence comes before the values: a bad value on a missing topic still reads "does not exist"
    with pytest.raises(UnknownTopicError, match=r"^Topic 'nope' does not exist\.$"):
        await alter_topic_config(zk, "nope", {"segment.ms": "zero"}, [])
    await _unchanged(zk, "nope", {})


async def test_an_illegal_name_is_reported_before_existence(zk: KafkaZkClient) -> None:
    with pytest.raises(InvalidTopicError, match="illegal, it contains a character"):
        await alter_topic_config(zk, "no/pe", {"segment.ms": "10"}, [])


async def test_missing_deleted_keys_are_listed_in_the_order_given_before_values_are_checked(
    zk: KafkaZkClient, admin: TopicAdmin
) -> None:
    await admin.create_topic("t", 1, 1, {"retention.ms": "1000"})
    with pytest.raises(InvalidConfigsError, match=r"^Invalid config\(s\): segment.ms,flush.ms$"):
        await alter_topic_config(zk, "t", {"segment.bytes": "1"}, ["segment.ms", "retention.ms", "flush.ms"])
    with pytest.raises(InvalidConfigError, match=r"segment\.bytes: Value must be at least 14"):
        await alter_topic_config(zk, "t", {"segment.bytes": "1"}, ["retention.ms"])
    await _unchanged(zk, "t", {"retention.ms": "1000"})


async def test_an_alteration_replaces_the_overrides_and_notifies_once(zk: KafkaZkClient, admin: TopicAdmin) -> None:
    await admin.create_topic("t", 1, 1, {"retention.ms": "1000"})
    assert await alter_topic_config(zk, "t", {"segment.ms": "10"}, ["retention.ms"]) == {"segment.ms": "10"}
    assert await zk.get_entity_configs(paths.ConfigType.TOPIC, "t") == {"segment.ms": "10"}
    assert len(await zk.get_children(paths.CONFIG_CHANGES)) == 1


async def test_change_topic_config_checks_existence_before_values(zk: KafkaZkClient) -> None:
    with pytest.raises(UnknownTopicError, match=r"^Topic 'nope' does not exist\.$"):
        await change_topic_config(zk, "nope", {"unknown.key": "1"})
