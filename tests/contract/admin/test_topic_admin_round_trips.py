"""The store requests one topic's creation makes, on both backends: ``validateTopicCreate``'s existence read, the
config znode's create (``setOrCreateEntityConfigs``' ``createOrSet``, without the setData that fails first for a
new topic) and the topic znode's create; not the extra round trips a parent's ``ensure_path`` before each create
cost, nor a second validation or a read-back of the id just written. On ZooKeeper each was a round trip on the
controller broker's session (a failed write an fsynced error transaction too): a CreateTopics of 200 topics took
60 ms a topic."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import TopicZNode

REQUESTS = ("create", "set_data", "exists", "get_data", "get_children", "get_data_many", "multi", "delete")


class RecordingSession:
    """A session passing every call through, remembering (request, path) of each request to the store."""

    def __init__(self, inner: CoordinationSession) -> None:
        self._inner = inner
        self.calls: list[tuple[str, str]] = []

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        if name not in REQUESTS:
            return target
        return self._recorded(name, target)

    def _recorded(self, name: str, target: Callable[..., Any]) -> Callable[..., Any]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            first = args[0] if args else ""
            self.calls.append((name, first if isinstance(first, str) else f"{len(first)} requests"))
            return await target(*args, **kwargs)
        return call

    async def ensure_path(self, path: str) -> None:  # the base class's, through the recorded requests
        await CoordinationSession.ensure_path(self, path)  # type: ignore[arg-type]


def recording(zk: KafkaZkClient) -> RecordingSession:
    session = RecordingSession(zk.session)
    zk.replace_session(session)  # type: ignore[arg-type]
    return session


async def test_a_topic_is_validated_once_and_written_in_two_creates(zk: KafkaZkClient) -> None:
    admin = TopicAdmin(zk, random.Random(1), topic_id_rng=random.Random(2))
    session = recording(zk)
    assignment = {0: [1, 2]}
    await admin.validate_topic_create("fresh", assignment, {})
    written = await admin.create_topic_with_assignment("fresh", assignment, {}, check_brokers=False,
                                                       validate=False)
    config, topic = paths.topic_config_path("fresh"), TopicZNode.path("fresh")
    assert session.calls == [("exists", topic), ("create", config), ("create", topic)]
    stored = (await zk.get_topic_assignments(["fresh"])).values["fresh"].topic_id
    assert written is not None and written == stored  # the id answered is the one in the znode, not read back


async def test_validating_by_default_reads_existence_once_more(zk: KafkaZkClient) -> None:
    """``kafka-topics --zookeeper`` (createTopicWithAssignment's validate = true) validates inside the call."""
    admin = TopicAdmin(zk, random.Random(1))
    session = recording(zk)
    assert await admin.create_topic_with_assignment("checked", {0: [1]}, check_brokers=False) is None
    assert session.calls[0] == ("exists", TopicZNode.path("checked"))
    assert [c for c in session.calls if c[0] != "exists"] == [
        ("create", paths.topic_config_path("checked")), ("create", TopicZNode.path("checked"))]


async def test_missing_parents_are_created_when_the_create_finds_none(make_client: Any) -> None:
    """On a store without Kafka's paths the first create fails with NONODE and the parents are made, as Kafka's
    ``createRecursive`` does; the topic is written all the same."""
    zk = await make_client()
    admin = TopicAdmin(zk, random.Random(1))
    await admin.create_topic_with_assignment("first", {0: [1]}, {"retention.ms": "5"}, check_brokers=False)
    assert (await zk.get_topic_assignments(["first"])).values["first"].assignment
    assert await zk.get_entity_configs(paths.ConfigType.TOPIC, "first") == {"retention.ms": "5"}


async def test_a_config_znode_already_there_is_overwritten(zk: KafkaZkClient) -> None:
    """A config znode left without its topic (written by hand, or a deletion interrupted between its two deletes)
    is replaced as Kafka's setData would: the create finds it, and the setData follows."""
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "leftover", {"retention.ms": "1"})
    session = recording(zk)
    await TopicAdmin(zk, random.Random(1)).create_topic_with_assignment("leftover", {0: [1]}, {"segment.ms": "9"},
                                                                       check_brokers=False, validate=False)
    config = paths.topic_config_path("leftover")
    assert session.calls == [("create", config), ("set_data", config), ("create", TopicZNode.path("leftover"))]
    assert await zk.get_entity_configs(paths.ConfigType.TOPIC, "leftover") == {"segment.ms": "9"}
