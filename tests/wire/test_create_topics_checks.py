"""CreateTopics' checks as Kafka 2.8.2's ``ZkAdminManager.createTopics`` makes them, ``validate_only`` included:
the topic known to the cache, partitions or replication factor beside an explicit assignment (INVALID_REQUEST), the
placement (``AdminUtils.assignReplicasToBrokers``: a count of 0 or below other than -1 is refused, not replaced by
the broker's default), then ``AdminZkClient.validateTopicCreate``. Ours answered every ``validate_only`` request
NONE without a check, and created a topic of ``num.partitions`` partitions for a count of 0 or -5."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import pytest

from zkcontroller.admin.java_hash_map import hash_map_order
from zkcontroller.protocol.wire.client_apis import CREATE_TOPICS, schema_module
from zkcontroller.zk.log_config_def import TOPIC_CONFIG_RULES

from .admin_fixture import Cluster, address, admin_cluster_fixture, controller, create, send  # noqa: F401
from .test_create_partitions_wire import partitions_in_zk

pytestmark = pytest.mark.timeout(120)

NONE, INVALID_TOPIC, TOPIC_EXISTS, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR = 0, 17, 36, 37, 38
INVALID_CONFIG, INVALID_REQUEST = 40, 42


async def create_one(at: str, name: str, *, partitions: int = -1, replication_factor: int = -1,
                     assignment: Mapping[int, Sequence[int]] | None = None,
                     configs: Mapping[str, str | None] | None = None, validate_only: bool = False,
                     version: int = 7) -> tuple[int, str | None, int, int]:
    """One topic's answer: error code, message, partitions and replication factor."""
    m = schema_module(CREATE_TOPICS, version, "request")
    topic = m.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=replication_factor,
        assignments=tuple(m.CreatableReplicaAssignment(partition_index=p, broker_ids=tuple(r))
                          for p, r in (assignment or {}).items()),
        configs=tuple(m.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()))
    request = m.CreateTopicsRequest(topics=(topic,), timeout=timedelta(seconds=30), validate_only=validate_only)
    response: Any = await send(at, CREATE_TOPICS, version, request, "CreateTopicsResponse")
    (result,) = response.topics
    return int(result.error_code), result.error_message, result.num_partitions, result.replication_factor


async def test_validate_only_refuses_what_creation_would(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    at = address(cluster, controller(cluster))
    await create(cluster, zk, "present")
    assert await create_one(at, "present", partitions=2, replication_factor=2, validate_only=True) == (
        TOPIC_EXISTS, "Topic 'present' already exists.", -1, -1)
    assert await create_one(at, "wide", partitions=2, replication_factor=4, validate_only=True) == (
        INVALID_REPLICATION_FACTOR, "Replication factor: 4 larger than available brokers: 3.", -1, -1)
    assert (await create_one(at, "bad name!", partitions=2, replication_factor=2, validate_only=True))[:2] == (
        INVALID_TOPIC, "Topic name \"bad name!\" is illegal, it contains a character other than ASCII "
                       "alphanumerics, '.', '_' and '-'")
    assert (await create_one(at, "configured", partitions=2, replication_factor=2, configs={"no.such": "1"},
                             validate_only=True))[:2] == (INVALID_CONFIG, "Unknown topic config name: no.such")
    assert (await create_one(at, "uneven", assignment={0: [1, 2], 1: [3]}, validate_only=True))[:2] == (
        39, "All partitions should have the same number of replicas")
    assert await create_one(at, "fine", assignment={0: [1, 2], 1: [2, 3], 2: [3, 1]}, validate_only=True) == (
        NONE, None, 3, 2)
    for name in ("wide", "configured", "uneven", "fine"):
        assert await partitions_in_zk(zk, name) == 0


async def test_counts_of_zero_or_below_are_refused_not_defaulted(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    at = address(cluster, controller(cluster))
    for partitions in (0, -5):
        assert await create_one(at, "no-partitions", partitions=partitions, replication_factor=1) == (
            INVALID_PARTITIONS, "Number of partitions must be larger than 0.", -1, -1)
    for replication_factor in (0, -3):
        assert await create_one(at, "no-replicas", partitions=1, replication_factor=replication_factor) == (
            INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.", -1, -1)
    # placement comes before Topic.validate in Kafka's order
    assert (await create_one(at, "bad name!", partitions=1, replication_factor=5))[0] == INVALID_REPLICATION_FACTOR
    assert await partitions_in_zk(zk, "no-partitions") == 0
    assert await partitions_in_zk(zk, "no-replicas") == 0
    assert await create_one(at, "defaulted", partitions=-1, replication_factor=-1) == (NONE, None, 1, 1)


async def test_counts_beside_an_assignment_are_an_invalid_request(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    at = address(cluster, controller(cluster))
    message = ("Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at "
               "the same time.")
    assert await create_one(at, "both", partitions=2, assignment={0: [1], 1: [2]}) == (
        INVALID_REQUEST, message, -1, -1)
    assert await create_one(at, "both", replication_factor=1, assignment={0: [1]}) == (
        INVALID_REQUEST, message, -1, -1)
    assert await partitions_in_zk(zk, "both") == 0


async def test_an_assignment_may_name_a_broker_that_is_not_registered(admin_cluster: Cluster) -> None:
    """``ZkAdminManager.createTopics`` leaves an explicit assignment's brokers unchecked (unlike CreatePartitions):
    the topic is created, its replica on broker 9 offline. Ours answered BROKER_NOT_AVAILABLE."""
    cluster, zk = admin_cluster
    at = address(cluster, controller(cluster))
    assert await create_one(at, "elsewhere", assignment={0: [1, 9], 1: [2, 9]}) == (NONE, None, 2, 2)
    found = (await zk.get_topic_assignments(["elsewhere"])).values["elsewhere"].assignment
    assert sorted(list(a.replicas) for a in found.values()) == [[1, 9], [2, 9]]


async def test_a_null_config_value_is_an_invalid_request(admin_cluster: Cluster) -> None:
    """Kafka: INVALID_REQUEST "Null value not supported for topic configs : <names>", before the placement. Ours
    read the null as an empty string: INVALID_CONFIG for ``retention.ms``, and ``cleanup.policy=""`` accepted."""
    cluster, zk = admin_cluster
    at = address(cluster, controller(cluster))
    assert await create_one(at, "nulls", partitions=1, replication_factor=9,
                            configs={"retention.ms": None, "segment.bytes": "1048576", "cleanup.policy": None}) == (
        INVALID_REQUEST, "Null value not supported for topic configs : retention.ms,cleanup.policy", -1, -1)
    assert await partitions_in_zk(zk, "nulls") == 0


async def test_v5_answers_carry_the_configs_and_v7_the_topic_id(admin_cluster: Cluster) -> None:
    """``maybePopulateMetadataAndConfigs`` (v5+: every topic config with its source, for ``validate_only`` too) and
    ``populateIds`` (v7: the id written into the topic znode at IBP 2.8). Ours answered no configs and the zero
    id; an error's configs were null where Kafka resets them to an empty list."""
    import uuid

    cluster, zk = admin_cluster
    at = address(cluster, controller(cluster))
    m = schema_module(CREATE_TOPICS, 7, "request")

    async def answer(name: str, validate_only: bool, version: int = 7) -> Any:
        request = schema_module(CREATE_TOPICS, version, "request").CreateTopicsRequest(
            topics=(m.CreatableTopic(name=name, num_partitions=2, replication_factor=2, assignments=(),
                                     configs=(m.CreatableTopicConfig(name="cleanup.policy", value="compact"),)),),
            timeout=timedelta(seconds=30), validate_only=validate_only)
        response: Any = await send(at, CREATE_TOPICS, version, request, "CreateTopicsResponse")
        return response.topics[0]

    checked = await answer("described", validate_only=True)
    assert checked.topic_id in (None, uuid.UUID(int=0))  # kio reads the zero id as None
    configs = {c.name: (c.value, c.config_source, c.read_only, c.is_sensitive) for c in checked.configs}
    assert configs["cleanup.policy"] == ("compact", 1, False, False)  # TOPIC_CONFIG
    assert configs["segment.bytes"] == ("1073741824", 5, False, False)  # DEFAULT_CONFIG
    # LogConfig.values (a java.util.HashMap, filled in definition order) as it iterates
    assert [c.name for c in checked.configs] == hash_map_order(TOPIC_CONFIG_RULES)
    created = await answer("described", validate_only=False)
    assert int(created.error_code) == NONE and created.configs == checked.configs
    stored = (await zk.get_topic_assignments(["described"])).values["described"].topic_id
    assert stored is not None and created.topic_id == uuid.UUID(bytes=stored.raw)
    again = await answer("described", validate_only=False)
    assert int(again.error_code) == TOPIC_EXISTS and again.configs == () and again.num_partitions == -1
    older = await answer("described-v4", validate_only=False, version=4)
    assert int(older.error_code) == NONE


async def test_not_controller_carries_no_message(admin_cluster: Cluster) -> None:
    """KafkaApis answers a broker that is not the controller with the error code alone (CreateTopics) or
    ``new ApiError(NOT_CONTROLLER, null)`` (CreatePartitions): no message. Ours sent Errors' default text."""
    from zkcontroller.protocol.wire.client_apis import CREATE_PARTITIONS

    from .admin_fixture import others

    cluster, _zk = admin_cluster
    at = address(cluster, others(cluster)[0])
    assert await create_one(at, "elsewhere", partitions=1, replication_factor=1) == (41, None, -1, -1)
    m = schema_module(CREATE_PARTITIONS, 3, "request")
    request = m.CreatePartitionsRequest(topics=(m.CreatePartitionsTopic(name="elsewhere", count=2, assignments=None),),
                                        timeout=timedelta(seconds=5), validate_only=False)
    response: Any = await send(at, CREATE_PARTITIONS, 3, request, "CreatePartitionsResponse")
    assert [(r.name, int(r.error_code), r.error_message) for r in response.results] == [("elsewhere", 41, None)]


async def test_a_timed_out_topic_keeps_its_id(admin_cluster: Cluster) -> None:
    """With no timeout Kafka answers a created topic REQUEST_TIMED_OUT; ``handleCreateTopicsResults`` resets its
    configs and counts but keeps the topic id ``populateIds`` set (v7). Ours answered the zero id."""
    import uuid

    cluster, zk = admin_cluster
    at = address(cluster, controller(cluster))
    m = schema_module(CREATE_TOPICS, 7, "request")
    request = m.CreateTopicsRequest(topics=(m.CreatableTopic(name="hasty", num_partitions=1, replication_factor=1,
                                                              assignments=(), configs=()),),
                                    timeout=timedelta(0), validate_only=False)
    response: Any = await send(at, CREATE_TOPICS, 7, request, "CreateTopicsResponse")
    (result,) = response.topics
    stored = (await zk.get_topic_assignments(["hasty"])).values["hasty"].topic_id
    assert stored is not None
    assert (int(result.error_code), result.topic_id, result.configs, result.num_partitions) == (
        7, uuid.UUID(bytes=stored.raw), (), -1)


async def test_topics_are_written_with_their_id(admin_cluster: Cluster) -> None:
    """At IBP 2.8 Kafka's createTopics writes the topic znode with a new id, for Metadata's auto-creation too (it
    goes through createTopics): the controller never rewrites it to add one. Ours wrote auto-created topics
    without an id, which the controller then wrote in (a second version of the znode)."""
    import asyncio

    from tests.helpers import wait_until

    from zkcontroller.zk.znodes import TopicZNode

    from .admin_fixture import leader
    from .test_metadata_auto_create import metadata_v9

    cluster, zk = admin_cluster
    at = address(cluster, controller(cluster))
    assert await asyncio.to_thread(metadata_v9, at, "auto-made", True) == (5, 0)  # LEADER_NOT_AVAILABLE
    assert (await create_one(at, "api-made", partitions=1, replication_factor=1))[0] == NONE
    active = controller(cluster)
    await wait_until(lambda: leader(active, "auto-made", 0) not in (None, -1), timeout_s=30, what="auto-made led")
    for topic in ("auto-made", "api-made"):
        found = await zk.get_data_and_stat(TopicZNode.path(topic))
        assert found is not None
        data, stat = found
        assert stat.version == 0 and TopicZNode.decode(data, TopicZNode.path(topic)).topic_id is not None, topic
