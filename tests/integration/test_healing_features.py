"""Feature versioning at failover (spec §2.5 step 1): ``/feature`` per inter.broker.protocol.version, on the
embedded store and on a real ZooKeeper."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests.integration.conftest import ClusterFactory

from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.model import FeatureZNodeData, FeatureZNodeStatus, FinalizedVersionRange
from zkcontroller.protocol.ibp import parse_ibp
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


@pytest.fixture
async def admin(backend: CoordinationBackend) -> AsyncIterator[KafkaZkClient]:
    session = await backend.new_session()
    client = KafkaZkClient(session, wall_clock_ms)
    await client.create_top_level_paths()
    yield client
    await session.close()


async def test_a_2_8_controller_creates_an_enabled_feature_node(make_cluster: ClusterFactory,
                                                                 admin: KafkaZkClient) -> None:
    cluster = await make_cluster([1])
    await cluster.wait_for_controller()
    assert await admin.get_feature() == (FeatureZNodeData(FeatureZNodeStatus.ENABLED, ()), 0)


async def test_a_disabled_node_with_features_is_enabled_empty(make_cluster: ClusterFactory,
                                                              admin: KafkaZkClient) -> None:
    await admin.create_feature(FeatureZNodeData(FeatureZNodeStatus.DISABLED, (("f", FinalizedVersionRange(1, 2)),)))
    cluster = await make_cluster([1])
    await cluster.wait_for_controller()
    assert await admin.get_feature() == (FeatureZNodeData(FeatureZNodeStatus.ENABLED, ()), 1)


async def test_an_enabled_node_is_left_alone_and_an_old_ibp_disables(make_cluster: ClusterFactory,
                                                                     admin: KafkaZkClient) -> None:
    enabled = FeatureZNodeData(FeatureZNodeStatus.ENABLED, (("f", FinalizedVersionRange(1, 2)),))
    await admin.create_feature(enabled)
    cluster = await make_cluster([1])
    first = await cluster.wait_for_controller()
    assert await admin.get_feature() == (enabled, 0)
    await cluster.stop_broker(first.controller_id)
    old = await make_cluster([2], inter_broker_protocol_version="2.6")
    await old.wait_for_controller()
    assert await admin.get_feature() == (FeatureZNodeData(FeatureZNodeStatus.DISABLED, ()), 1)


def test_ibp_parsing() -> None:
    assert parse_ibp("2.7-IV0") == ((2, 7), 0) < parse_ibp("2.7") < parse_ibp("2.8-IV0") < parse_ibp("2.8.2")
    with pytest.raises(ValueError, match=r"inter\.broker\.protocol\.version: 'x' is not a version"):
        parse_ibp("x")
