"""ApiVersions v3's features (KIP-584) as a Kafka 2.8 broker at IBP >= 2.7 sends them (``handleApiVersionsRequest``
from its ``FinalizedFeatureCache``): ``/feature``'s ZooKeeper version as the finalized features' epoch, and its
finalized features, read with a watch so a change is served without a restart; a Disabled node sends epoch -1 and
none. Before, every answer had epoch -1 and no features."""

from __future__ import annotations

import asyncio
from typing import Any

from kio.serial import entity_reader
from tests.helpers import wait_until
from tests.integration.listening import Cluster

from zkcontroller.broker.kafka_apis import KafkaApis
from zkcontroller.model import FeatureZNodeData, FeatureZNodeStatus, FinalizedVersionRange
from zkcontroller.protocol.wire.client_apis import API_VERSIONS, schema_module
from zkcontroller.protocol.wire.frames import RequestHeader, decode_response_header, encode_request_header

from .admin_fixture import address, admin_cluster_fixture  # noqa: F401 (the fixture)

VERSION = 3


async def api_versions(apis: KafkaApis) -> Any:
    """An ApiVersions v3 answer, decoded."""
    body = bytes([0x09]) + b"kio-test" + bytes([0x04]) + b"1.0" + bytes([0])  # compact strings, no tagged fields
    payload = await apis.handle(encode_request_header(RequestHeader(API_VERSIONS, VERSION, 3, "c")) + body)
    assert isinstance(payload, bytes)
    _, offset = decode_response_header(payload, API_VERSIONS, VERSION)
    m = schema_module(API_VERSIONS, VERSION, "response")
    response, _ = entity_reader(m.ApiVersionsResponse)(memoryview(payload)[offset:], 0)
    return response


def features(response: Any) -> tuple[int, list[tuple[str, int, int]]]:
    return response.finalized_features_epoch, [(f.name, f.min_version_level, f.max_version_level)
                                               for f in response.finalized_features]


async def test_the_finalized_features_and_their_epoch_follow_the_feature_node(admin_cluster: Cluster) -> None:
    cluster, zk = admin_cluster
    server = cluster.running_brokers()[0]
    apis = cluster.listeners[server.broker_id].apis
    found = await zk.get_feature()  # the controller made it Enabled at failover (IBP >= 2.7)
    assert found is not None and found[0].status is FeatureZNodeStatus.ENABLED
    cache = server.replica_manager.features
    response = await api_versions(apis)  # the first v3 reads /feature before it is answered
    assert (response.error_code, features(response), response.supported_features) == (0, (found[1], []), ())

    version = await zk.update_feature(FeatureZNodeData(FeatureZNodeStatus.ENABLED,
                                                       (("test.feature", FinalizedVersionRange(1, 2)),)))
    await wait_until(lambda: cache.epoch == version, timeout_s=30, what="the watch saw the change")
    assert features(await api_versions(apis)) == (version, [("test.feature", 1, 2)])

    from kafka import KafkaAdminClient
    at = address(cluster, server)

    def describe() -> dict[str, Any]:
        admin = KafkaAdminClient(bootstrap_servers=at, request_timeout_ms=20000)
        try:
            return admin.describe_features()
        finally:
            admin.close()
    assert await asyncio.to_thread(describe) == {"test.feature": {"finalized": (1, 2), "finalized_epoch": version}}

    version = await zk.update_feature(FeatureZNodeData(FeatureZNodeStatus.DISABLED, ()))
    await wait_until(lambda: cache.epoch == -1, timeout_s=30, what="a disabled node clears the cache")
    assert features(await api_versions(apis)) == (-1, [])
