"""`data_strings`: a request body as Kafka 2.8.2's ``AbstractRequest.toString`` prints it in the ``Error when
handling request: ..., body=...`` line.

Each expected string is written by hand from two sources: the request's JSON schema
(``clients/src/main/resources/common/message/<Name>Request.json`` at 2.8.2: field order, names, versions,
defaults, nested class names) and ``MessageDataGenerator.generateToString``/``generateFieldToString`` (2.8.2):
``Class(field=value, ...)``, strings in single quotes or ``null``, booleans ``true``/``false``, arrays through
``MessageUtil.deepToString`` (``[a, b]``, elements by their own ``toString``: strings unquoted), uuids as
``Uuid.toString`` (URL-safe base64, unpadded), and a field absent at the version printing the value the generated
constructor gives it."""

from __future__ import annotations

import dataclasses
import typing
import uuid
from datetime import timedelta
from typing import Any

import pytest

from zkcontroller.protocol.wire import client_apis
from zkcontroller.protocol.wire.alter_configs import ALTER_CONFIGS, AlterConfigsQuery, AlterResource, ConfigChange
from zkcontroller.protocol.wire.client_apis import (
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    ELECT_LEADERS,
    METADATA,
    schema_module,
)
from zkcontroller.protocol.wire.client_quotas import DESCRIBE_CLIENT_QUOTAS, DescribeQuotasQuery, FilterComponent
from zkcontroller.protocol.wire.data_strings import REQUESTS, Struct, request_string, uuid_string
from zkcontroller.protocol.wire.data_strings import _read as read_member  # the renderer's own lookup
from zkcontroller.protocol.wire.describe_configs import DESCRIBE_CONFIGS, ConfigResourceQuery, DescribeConfigsQuery
from zkcontroller.protocol.wire.schema import in_versions

ORDERS_ID = uuid.UUID(bytes=bytes(range(16)))
ORDERS_ID_STRING = "AAECAwQFBgcICQoLDA0ODw"
"""base64url(00 01 02 ... 0f) without the "==" padding: ``Uuid.toString``."""


def build(api_key: int, version: int, cls: str, **values: Any) -> Any:
    """kio's ``cls`` of ``api_key`` at ``version`` (the type `client_apis.decode_body` gives a handler)."""
    return getattr(schema_module(api_key, version, "request"), cls)(**values)


def test_create_topics() -> None:
    """CreateTopicsRequest.json: Topics []CreatableTopic (Name, NumPartitions, ReplicationFactor, Assignments
    []CreatableReplicaAssignment (PartitionIndex, BrokerIds []int32), Configs []CreateableTopicConfig (Name, Value
    nullable)), TimeoutMs (default 60000), ValidateOnly (1+). ``CreateableTopicConfig`` is 2.8.2's spelling (kio
    says ``CreatableTopicConfig``)."""
    v = 5
    topic = build(CREATE_TOPICS, v, "CreatableTopic", name="orders", num_partitions=-1, replication_factor=-1,
                  assignments=(build(CREATE_TOPICS, v, "CreatableReplicaAssignment", partition_index=0,
                                     broker_ids=(1, 2)),),
                  configs=(build(CREATE_TOPICS, v, "CreatableTopicConfig", name="cleanup.policy", value="compact"),
                           build(CREATE_TOPICS, v, "CreatableTopicConfig", name="retention.ms", value=None)))
    request = build(CREATE_TOPICS, v, "CreateTopicsRequest", topics=(topic,), timeout=timedelta(seconds=30),
                    validate_only=False)
    assert request_string(CREATE_TOPICS, v, request) == (
        "CreateTopicsRequestData(topics=[CreatableTopic(name='orders', numPartitions=-1, replicationFactor=-1, "
        "assignments=[CreatableReplicaAssignment(partitionIndex=0, brokerIds=[1, 2])], "
        "configs=[CreateableTopicConfig(name='cleanup.policy', value='compact'), "
        "CreateableTopicConfig(name='retention.ms', value=null)])], timeoutMs=30000, validateOnly=false)")


def test_delete_topics_by_id_and_by_name() -> None:
    """DeleteTopicsRequest.json: Topics []DeleteTopicState (6+: Name nullable, TopicId uuid), TopicNames []string
    (0-5), TimeoutMs. v6 leaves TopicNames at its constructor value, an empty list; v1-5 leave Topics empty; the
    names print unquoted (``deepToString`` of Strings)."""
    state = schema_module(DELETE_TOPICS, 6, "request").DeleteTopicState
    v6 = build(DELETE_TOPICS, 6, "DeleteTopicsRequest", timeout=timedelta(milliseconds=15000),
               topics=(state(name="by-id", topic_id=ORDERS_ID), state(name=None, topic_id=None)))
    assert request_string(DELETE_TOPICS, 6, v6) == (
        f"DeleteTopicsRequestData(topics=[DeleteTopicState(name='by-id', topicId={ORDERS_ID_STRING}), "
        "DeleteTopicState(name=null, topicId=AAAAAAAAAAAAAAAAAAAAAA)], topicNames=[], timeoutMs=15000)")
    v4 = build(DELETE_TOPICS, 4, "DeleteTopicsRequest", topic_names=("a", "b"), timeout=timedelta(seconds=30))
    assert request_string(DELETE_TOPICS, 4, v4) == \
        "DeleteTopicsRequestData(topics=[], topicNames=[a, b], timeoutMs=30000)"


def test_metadata_across_versions() -> None:
    """MetadataRequest.json: Topics []MetadataRequestTopic (nullable 1+; TopicId uuid 10+, Name nullable 10+),
    AllowAutoTopicCreation (4+, default true), IncludeClusterAuthorizedOperations (8-10), IncludeTopicAuthorized
    Operations (8+). v1's null topics (all topics) print null; the fields v1 lacks print their defaults; v11's
    topic has no id, the zero uuid; IncludeClusterAuthorizedOperations, gone at 11, prints false."""
    v1 = build(METADATA, 1, "MetadataRequest", topics=None)
    assert request_string(METADATA, 1, v1) == (
        "MetadataRequestData(topics=null, allowAutoTopicCreation=true, includeClusterAuthorizedOperations=false, "
        "includeTopicAuthorizedOperations=false)")
    topic = build(METADATA, 11, "MetadataRequestTopic", topic_id=None, name="orders")
    v11 = build(METADATA, 11, "MetadataRequest", topics=(topic,), allow_auto_topic_creation=False,
                include_topic_authorized_operations=True)
    assert request_string(METADATA, 11, v11) == (
        "MetadataRequestData(topics=[MetadataRequestTopic(topicId=AAAAAAAAAAAAAAAAAAAAAA, name='orders')], "
        "allowAutoTopicCreation=false, includeClusterAuthorizedOperations=false, "
        "includeTopicAuthorizedOperations=true)")
    v0 = build(METADATA, 0, "MetadataRequest", topics=(build(METADATA, 0, "MetadataRequestTopic", name="x"),))
    assert request_string(METADATA, 0, v0) == (
        "MetadataRequestData(topics=[MetadataRequestTopic(topicId=AAAAAAAAAAAAAAAAAAAAAA, name='x')], "
        "allowAutoTopicCreation=true, includeClusterAuthorizedOperations=false, "
        "includeTopicAuthorizedOperations=false)")


def test_elect_leaders() -> None:
    """ElectLeadersRequest.json: ElectionType int8 (1+), TopicPartitions []TopicPartitions nullable (Topic,
    PartitionId []int32), TimeoutMs (default 60000). v0 (preferred only) leaves ElectionType at 0; null
    partitions (all) print null."""
    parts = build(ELECT_LEADERS, 0, "TopicPartitions", topic="orders", partitions=(0, 1))  # kio's name
    v0 = build(ELECT_LEADERS, 0, "ElectLeadersRequest", topic_partitions=(parts,), timeout=timedelta(minutes=1))
    assert request_string(ELECT_LEADERS, 0, v0) == (
        "ElectLeadersRequestData(electionType=0, topicPartitions=[TopicPartitions(topic='orders', "
        "partitionId=[0, 1])], timeoutMs=60000)")
    v2 = build(ELECT_LEADERS, 2, "ElectLeadersRequest", election_type=7, topic_partitions=None,
               timeout=timedelta(seconds=10))
    assert request_string(ELECT_LEADERS, 2, v2) == \
        "ElectLeadersRequestData(electionType=7, topicPartitions=null, timeoutMs=10000)"


def test_create_partitions() -> None:
    """CreatePartitionsRequest.json: Topics []CreatePartitionsTopic (Name, Count, Assignments
    []CreatePartitionsAssignment nullable (BrokerIds []int32)), TimeoutMs, ValidateOnly."""
    v = 1
    grow = build(CREATE_PARTITIONS, v, "CreatePartitionsTopic", name="orders", count=4, assignments=None)
    placed = build(CREATE_PARTITIONS, v, "CreatePartitionsTopic", name="x", count=3, assignments=(
        build(CREATE_PARTITIONS, v, "CreatePartitionsAssignment", broker_ids=(1, 2)),))
    request = build(CREATE_PARTITIONS, v, "CreatePartitionsRequest", topics=(grow, placed),
                    timeout=timedelta(seconds=5), validate_only=True)
    assert request_string(CREATE_PARTITIONS, v, request) == (
        "CreatePartitionsRequestData(topics=[CreatePartitionsTopic(name='orders', count=4, assignments=null), "
        "CreatePartitionsTopic(name='x', count=3, assignments=[CreatePartitionsAssignment(brokerIds=[1, 2])])], "
        "timeoutMs=5000, validateOnly=true)")


def test_our_own_alter_configs_query() -> None:
    """AlterConfigsRequest.json: Resources []AlterConfigsResource (ResourceType int8, ResourceName, Configs
    []AlterableConfig (Name, Value nullable)), ValidateOnly; read from `alter_configs.AlterConfigsQuery`."""
    query = AlterConfigsQuery([AlterResource(2, "orders", (ConfigChange("retention.ms", "5"),
                                                           ConfigChange("x", None)))])
    assert request_string(ALTER_CONFIGS, 0, query) == (
        "AlterConfigsRequestData(resources=[AlterConfigsResource(resourceType=2, resourceName='orders', "
        "configs=[AlterableConfig(name='retention.ms', value='5'), AlterableConfig(name='x', value=null)])], "
        "validateOnly=false)")


def test_our_own_describe_queries() -> None:
    """DescribeConfigsRequest.json: Resources []DescribeConfigsResource (ResourceType, ResourceName,
    ConfigurationKeys []string nullable), IncludeSynonyms (1+), IncludeDocumentation (3+); v0 leaves both at their
    default false. DescribeClientQuotasRequest.json: Components []ComponentData (EntityType, MatchType, Match
    nullable), Strict."""
    configs = DescribeConfigsQuery([ConfigResourceQuery(2, "orders", ("retention.ms",)), ConfigResourceQuery(4, "1")],
                                   include_synonyms=True)
    assert request_string(DESCRIBE_CONFIGS, 0, configs) == (
        "DescribeConfigsRequestData(resources=[DescribeConfigsResource(resourceType=2, resourceName='orders', "
        "configurationKeys=[retention.ms]), DescribeConfigsResource(resourceType=4, resourceName='1', "
        "configurationKeys=null)], includeSynonyms=false, includeDocumentation=false)")
    quotas = DescribeQuotasQuery((FilterComponent("client-id", 0, "app"), FilterComponent("user", 1, None)), False)
    assert request_string(DESCRIBE_CLIENT_QUOTAS, 1, quotas) == (
        "DescribeClientQuotasRequestData(components=[ComponentData(entityType='client-id', matchType=0, "
        "match='app'), ComponentData(entityType='user', matchType=1, match=null)], strict=false)")


def test_a_table_out_of_step_with_the_decoded_type_is_an_error_not_a_guess() -> None:
    with pytest.raises(ValueError, match=r"CreatePartitionsRequestData.timeoutMs \(v0\) not found"):
        request_string(CREATE_PARTITIONS, 0, {"topics": (), "validate_only": False})


def test_uuid() -> None:
    assert uuid_string(ORDERS_ID) == ORDERS_ID_STRING
    assert uuid_string(None) == "AAAAAAAAAAAAAAAAAAAAAA"


_KIO_SERVED = [(key, v) for key, (lo, hi) in client_apis.CLIENT_API_VERSIONS.items() for v in range(lo, hi + 1)] + [
    (key, v) for key, (lo, hi) in ((CREATE_TOPICS, client_apis.CREATE_TOPICS_VERSIONS),
                                   (DELETE_TOPICS, client_apis.DELETE_TOPICS_VERSIONS),
                                   (CREATE_PARTITIONS, client_apis.CREATE_PARTITIONS_VERSIONS),
                                   (ELECT_LEADERS, client_apis.ELECT_LEADERS_VERSIONS),
                                   (client_apis.LIST_OFFSETS, (1, client_apis.LIST_OFFSETS_VERSIONS[1])),
                                   (client_apis.ALTER_PARTITION_REASSIGNMENTS,
                                    client_apis.ALTER_PARTITION_REASSIGNMENTS_VERSIONS),
                                   (client_apis.LIST_PARTITION_REASSIGNMENTS,
                                    client_apis.LIST_PARTITION_REASSIGNMENTS_VERSIONS),
                                   (client_apis.INIT_PRODUCER_ID, client_apis.INIT_PRODUCER_ID_VERSIONS))
    for v in range(lo, hi + 1)]


def _missing(struct: Struct, version: int, cls: type) -> list[str]:
    """The members ``struct`` has at ``version`` that kio's ``cls`` lacks (checked down every nested struct)."""
    names = {f.name: f.name for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    missing = []
    for member in struct.fields:
        if not in_versions(member.versions, version):
            continue
        if read_member(names, member) is read_member({}, member):
            missing.append(f"{struct.name}.{member.name}")
        elif member.struct is not None:
            nested = [a for a in typing.get_args(hints[read_member(names, member)]) if dataclasses.is_dataclass(a)]
            nested += [a for arg in typing.get_args(hints[read_member(names, member)]) for a in typing.get_args(arg)
                       if dataclasses.is_dataclass(a)]
            assert nested, member.name
            missing += _missing(member.struct, version, nested[0])
    return missing


@pytest.mark.parametrize(("api_key", "version"), _KIO_SERVED)
def test_every_field_of_every_served_version_is_found_on_kio_types(api_key: int, version: int) -> None:
    """Each 2.8.2 field a served version has resolves on kio's decoded type, so an error line never fails."""
    module = schema_module(api_key, version, "request")
    [cls] = [getattr(module, n) for n in dir(module) if n.endswith("Request") and n != "RequestHeader"]
    assert _missing(REQUESTS[api_key], version, cls) == []


def test_the_error_line_never_fails_on_a_body_it_cannot_render() -> None:
    """The line is written on an error path: an API without a table (AlterClientQuotas) prints the body's repr
    rather than raise over the error being reported; Produce's ready string prints as is."""
    from zkcontroller.broker.kafka_apis import request_body_string
    from zkcontroller.protocol.wire.frames import RequestHeader

    assert request_body_string(RequestHeader(49, 0, 1, "c"), ("entries",)) == "('entries',)"
    assert request_body_string(RequestHeader(0, 9, 1, "c"), "{acks=1}") == "{acks=1}"
