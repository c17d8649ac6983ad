"""DescribeConfigs of the empty broker name on a broker that keeps no copy of ``/config/brokers/<default>`` yet (no
replica manager, during start-up) reads the node and cleans it as Kafka's ``fromPersistentProps`` does, but logs
nothing: Kafka logs the dropped keys when it takes the node up, not on every request that reads it."""

from __future__ import annotations

import logging
import types

import pytest

from zkcontroller.admin.configs import change_broker_config
from zkcontroller.cluster.admin_apis.describe_configs import _kept_dynamic_defaults
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def test_read_for_an_answer_is_cleaned_without_logging(zk: KafkaZkClient,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    # broker.id is not dynamic, listeners is per broker, log.retention.ms is a cluster-wide dynamic default
    await change_broker_config(zk, paths.DEFAULT_ENTITY, {
        "log.retention.ms": "99", "broker.id": "7", "listeners": "PLAINTEXT://:9092"})
    starting = types.SimpleNamespace(replica_manager=None, zk=zk)
    with caplog.at_level(logging.DEBUG):
        kept = await _kept_dynamic_defaults(starting)  # type: ignore[arg-type]
    assert kept == {"log.retention.ms": "99"}
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
