"""CreatePartitions on a topic whose znode is corrupt, as Kafka 2.8.2 answers it: ``getFullReplicaAssignmentForTopics``
reads it with ``TopicZNode.decode``, for which data that is not JSON is no partitions (UNKNOWN_TOPIC_OR_PARTITION,
"does not exist"); JSON of the wrong shape throws outside what ``ZkAdminManager.createPartitions`` catches, and
``KafkaApis.handleError`` answers every topic of the request UNKNOWN_SERVER_ERROR without a message, logged as
``RequestHandlerHelper.handleError`` logs it. Either way the znode is logged by path and the broker keeps serving."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from zkcontroller.cluster.admin_apis.create_partitions import java_exception
from zkcontroller.coordination.errors import (
    ErrorCode,
    NoChildrenForEphemeralsError,
    NoNodeError,
    SessionExpiredError,
    ZkError,
)
from zkcontroller.protocol.wire.client_apis import CREATE_PARTITIONS, schema_module
from zkcontroller.zk import paths
from zkcontroller.zk.errors import UnparseableZnodeError, ZnodeDecodeError

from .admin_fixture import (
    Cluster,
    address,
    admin_cluster_fixture,  # noqa: F401
    controller,
    create,
    send,
)
from .test_create_partitions_wire import NONE, UNKNOWN_TOPIC_OR_PARTITION, grow, partitions_in_zk

pytestmark = pytest.mark.timeout(120)

UNKNOWN_SERVER_ERROR = -1


async def answers(at: str, topics: list[tuple[str, int]]) -> list[tuple[str, int, str | None]]:
    """(name, error code, message) per result of a CreatePartitions v3, in answer order."""
    m = schema_module(CREATE_PARTITIONS, 3, "request")
    request = m.CreatePartitionsRequest(
        topics=tuple(m.CreatePartitionsTopic(name=t, count=n, assignments=None) for t, n in topics),
        timeout=timedelta(milliseconds=30_000), validate_only=False)
    response = await send(at, CREATE_PARTITIONS, 3, request, "CreatePartitionsResponse")
    return [(r.name, int(r.error_code), r.error_message) for r in response.results]


async def test_a_topic_znode_not_json_is_a_topic_that_does_not_exist(
        admin_cluster: Cluster, caplog: pytest.LogCaptureFixture) -> None:
    cluster, zk = admin_cluster
    await create(cluster, zk, "fine")
    await zk.session.create(paths.topic_path("garbled"), b"not json")
    at = address(cluster, controller(cluster))
    with caplog.at_level(logging.WARNING, "kafka.server.ZkAdminManager"):
        got = await answers(at, [("garbled", 3), ("fine", 3)])
    assert got == [("garbled", UNKNOWN_TOPIC_OR_PARTITION, "The topic 'garbled' does not exist."),
                   ("fine", NONE, None)]
    assert "/brokers/topics/garbled" in caplog.text and "as no partitions" in caplog.text
    assert await partitions_in_zk(zk, "fine") == 3


JSON_MAPPING = "com.fasterxml.jackson.databind.JsonMappingException"


@pytest.mark.parametrize(("data", "thrown"), [
    pytest.param(b'{"version":2,"partitions":{"0":"1,2"}}', JSON_MAPPING, id="replicas-a-string"),
    pytest.param(b'{"version":2,"partitions":{"x":[1]}}', "java.lang.NumberFormatException", id="key-not-a-number"),
    pytest.param(b'{"version":2,"partitions":[]}', JSON_MAPPING, id="partitions-an-array"),
])
async def test_a_topic_znode_of_the_wrong_shape_fails_the_request_and_the_broker_keeps_serving(
        admin_cluster: Cluster, caplog: pytest.LogCaptureFixture, data: bytes, thrown: str) -> None:
    """The exception line names the Java class ``TopicZNode.decode`` throws: ``replicas.to[Seq[Int]]`` and
    ``asJsonObject`` Jackson's JsonMappingException (``DecodeJson.decode``), ``partition.toInt``
    NumberFormatException."""
    cluster, zk = admin_cluster
    for t in ("before", "after"):
        await create(cluster, zk, t)
    await zk.session.create(paths.topic_path("bent"), data)
    active = controller(cluster)
    at = address(cluster, active)
    with caplog.at_level(logging.ERROR, "kafka.server.RequestHandlerHelper"):
        got = await answers(at, [("before", 3), ("bent", 2), ("after", 3)])
    assert got == [("before", UNKNOWN_SERVER_ERROR, None), ("bent", UNKNOWN_SERVER_ERROR, None),
                   ("after", UNKNOWN_SERVER_ERROR, None)]
    [line] = [r.getMessage() for r in caplog.records if r.name == "kafka.server.RequestHandlerHelper"]
    assert line.startswith(f"[KafkaApi-{active.broker_id}] Error when handling request: clientId=test, "
                           "correlationId=9, api=CREATE_PARTITIONS, version=3, body=CreatePartitionsRequestData("
                           "topics=[CreatePartitionsTopic(name='before', count=3, assignments=null), "
                           "CreatePartitionsTopic(name='bent', count=2, assignments=null), CreatePartitionsTopic("
                           "name='after', count=3, assignments=null)], timeoutMs=30000, validateOnly=false)\n")
    # handleError's line; the body as CreatePartitionsRequest.json's generated toString
    assert line.split("\n", 1)[1].startswith(f"{thrown}: Malformed znode /brokers/topics/bent: ")
    assert await partitions_in_zk(zk, "before") == 3  # processed before the failure, as in Kafka
    assert await partitions_in_zk(zk, "after") == 2
    assert await grow(at, 3, [("after", 4, None)]) == {"after": NONE}  # still serving


@pytest.mark.parametrize(("error", "java"), [
    (ZnodeDecodeError("/brokers/topics/t", "topic_id: 'zz' is not a 22-character URL-safe Base64 topic id"),
     "java.lang.IllegalArgumentException"),  # Uuid.fromString
    (ZnodeDecodeError("/brokers/topics/t", "topic_id: expected a string, got number"), JSON_MAPPING),  # to[String]
    (UnparseableZnodeError("/brokers/ids/2", "invalid JSON"), "org.apache.kafka.common.KafkaException"),
    (ZnodeDecodeError("/brokers/ids/2", "port: expected an integer, got string"), JSON_MAPPING),
    (SessionExpiredError("/brokers/ids"), "org.apache.zookeeper.KeeperException$SessionExpiredException"),
    (NoNodeError("/brokers/topics/t"), "org.apache.zookeeper.KeeperException$NoNodeException"),
    (NoChildrenForEphemeralsError("/x"), "org.apache.zookeeper.KeeperException$NoChildrenForEphemeralsException"),
    (type("AclError", (ZkError,), {"code": ErrorCode.INVALID_ACL})("/x"),
     "org.apache.zookeeper.KeeperException$InvalidACLException"),  # ZooKeeper's spelling, not InvalidAcl
    (KeyError("oops"), "builtins.KeyError"),  # a fault of ours: no Java class stands for it
])
def test_the_java_class_a_failure_is_logged_as(error: BaseException, java: str) -> None:
    assert java_exception(error) == java
