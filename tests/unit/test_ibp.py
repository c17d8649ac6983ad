"""The IBP → versions table against Kafka 2.8.2's own rules (kafka.api.ApiVersion and the `>=` chains of
ControllerChannelManager.scala, ReplicaFetcherThread.scala, KafkaServer.controlledShutdown, KafkaConfig)."""

from __future__ import annotations

import re

import pytest

from zkcontroller.cluster.server_properties import ConfigError, broker_properties, parse_properties
from zkcontroller.protocol.ibp import (
    ALTER_ISR,
    CONTROLLED_SHUTDOWN,
    FETCH,
    KAFKA_IBPS,
    LEADER_AND_ISR,
    STOP_REPLICA,
    UPDATE_METADATA,
    alter_isr_enabled,
    broker_registration_version,
    ibp_at_least,
    request_versions,
    resolve_ibp,
    uses_topic_ids,
)

# (LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown, Fetch) as Kafka 2.8.2 sends them:
#   LeaderAndIsr  5 >= 2.8-IV1, 4 >= 2.4-IV1, 3 >= 2.4-IV0, 2 >= 2.2-IV0, 1 >= 1.0-IV0 (ControllerChannelManager:458)
#   UpdateMetadata 7 >= 2.8-IV1, 6 >= 2.4-IV1, 5 >= 2.2-IV0, 4 >= 1.0-IV0 ...        (ControllerChannelManager:508)
#   StopReplica   3 >= 2.6-IV0, 2 >= 2.4-IV1, 1 >= 2.2-IV0, else 0                     (ControllerChannelManager:564)
#   ControlledShutdown 3 >= 2.4-IV1, 2 >= 2.2-IV0, 1 >= 0.9.0                          (KafkaServer:591)
#   Fetch 12 >= 2.7-IV1, 11 >= 2.3-IV1, 10 >= 2.1-IV2, 8 >= 2.0-IV1, 7 >= 1.1-IV0      (ReplicaFetcherThread:75)
EXPECTED = [
    ("2.8-IV1", (5, 7, 3, 3, 12)),
    ("2.8", (5, 7, 3, 3, 12)),
    ("2.8.2", (5, 7, 3, 3, 12)),
    ("2.8-IV0", (4, 6, 3, 3, 12)),
    ("2.7", (4, 6, 3, 3, 12)),
    ("2.7-IV2", (4, 6, 3, 3, 12)),
    ("2.7-IV1", (4, 6, 3, 3, 12)),
    ("2.7-IV0", (4, 6, 3, 3, 11)),
    ("2.6", (4, 6, 3, 3, 11)),
    ("2.5-IV0", (4, 6, 2, 3, 11)),
    ("2.4-IV1", (4, 6, 2, 3, 11)),
    ("2.4-IV0", (3, 5, 1, 2, 11)),
    ("2.3-IV0", (2, 5, 1, 2, 10)),
    ("2.2-IV0", (2, 5, 1, 2, 10)),
    ("2.1-IV2", (1, 4, 0, 1, 10)),
    ("2.1-IV1", (1, 4, 0, 1, 8)),
    ("2.0", (1, 4, 0, 1, 8)),
    ("2.0-IV0", (1, 4, 0, 1, 7)),
]


@pytest.mark.parametrize(("ibp", "expected"), EXPECTED)
def test_request_versions_follow_kafkas_rules(ibp: str, expected: tuple[int, ...]) -> None:
    v = request_versions(ibp)
    assert (v[LEADER_AND_ISR], v[UPDATE_METADATA], v[STOP_REPLICA], v[CONTROLLED_SHUTDOWN], v[FETCH]) == expected
    assert v[ALTER_ISR] == 0


@pytest.mark.parametrize(("short", "full"), [("2.8", "2.8-IV1"), ("2.8.2", "2.8-IV1"), ("2.7", "2.7-IV2"),
                                             ("2.7.1", "2.7-IV2"), ("2.6", "2.6-IV0"), ("2.4", "2.4-IV1"),
                                             ("2.1", "2.1-IV2"), ("1.1", "1.1-IV0"), ("0.10.2", "0.10.2-IV0"),
                                             ("0.11.0.3", "0.11.0-IV2"), ("2.7-IV1", "2.7-IV1")])
def test_short_forms_mean_the_newest_internal_version(short: str, full: str) -> None:
    assert resolve_ibp(short) == full


@pytest.mark.parametrize("bad", ["", "2.9", "3.0", "2.8-IV2", "2.7-IV9", "2.8-beta", "0.10", "two"])
def test_versions_kafka_28_does_not_know_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=r"inter\.broker\.protocol\.version"):
        request_versions(bad)


@pytest.mark.parametrize(("ibp", "topic_ids", "alter_isr", "features"), [
    ("2.8-IV1", True, True, True), ("2.8-IV0", True, True, True), ("2.7", False, True, True),
    ("2.7-IV1", False, False, True), ("2.7-IV0", False, False, True), ("2.6", False, False, False)])
def test_switches_by_ibp(ibp: str, topic_ids: bool, alter_isr: bool, features: bool) -> None:
    """KafkaConfig.usesTopicId (>= 2.8-IV0), isAlterIsrSupported (>= 2.7-IV2), isFeatureVersioningSupported."""
    assert uses_topic_ids(ibp) is topic_ids
    assert alter_isr_enabled(ibp) is alter_isr
    assert ibp_at_least(ibp, "2.7-IV0") is features


def test_the_list_is_kafkas_in_order() -> None:
    assert KAFKA_IBPS[0] == "0.8.0" and KAFKA_IBPS[-1] == "2.8-IV1" and len(KAFKA_IBPS) == 33
    assert KAFKA_IBPS.index("2.7-IV2") + 1 == KAFKA_IBPS.index("2.8-IV0")


BROKER = "broker.id=1\nzookeeper.connect=zk:2181\n"


@pytest.mark.parametrize(("ibp", "lai", "umd", "fetch"), [("2.8-IV0", 4, 6, 12), ("2.8-IV1", 5, 7, 12),
                                                         ("2.7-IV0", 4, 6, 11), ("2.7-IV1", 4, 6, 12)])
def test_a_broker_process_reads_the_internal_version(ibp: str, lai: int, umd: int, fetch: int) -> None:
    """server.properties: the wire versions and the controller's own IBP both come from the full value."""
    p = broker_properties(parse_properties(BROKER), [f"inter.broker.protocol.version={ibp}"])
    v = p.control_request_versions
    assert (v[LEADER_AND_ISR], v[UPDATE_METADATA], v[FETCH]) == (lai, umd, fetch)
    assert p.controller.inter_broker_protocol_version == ibp


@pytest.mark.parametrize("bad", ["2.7-IV9", "2.4", "2.9"])
def test_a_broker_process_refuses_an_unknown_or_unoffered_ibp(bad: str) -> None:
    with pytest.raises(ConfigError, match=rf"Invalid value {re.escape(bad)} for configuration inter\.broker"):
        broker_properties(parse_properties(BROKER), [f"inter.broker.protocol.version={bad}"])


@pytest.mark.parametrize(("ibp", "version"), [("2.8", 5), ("2.7-IV0", 5), ("2.6", 4), ("0.10.0-IV1", 4),
                                              ("0.10.0-IV0", 2)])
def test_broker_registration_version(ibp: str, version: int) -> None:
    """ZkData.scala BrokerInfo.apply: 5 if >= 2.7-IV0, 4 if >= 0.10.0-IV1, else 2."""
    assert broker_registration_version(ibp) == version


def test_the_controller_config_refuses_an_unknown_ibp_when_built() -> None:
    """It was caught only when `ControllerCore` was built, far from where the value was given."""
    from zkcontroller.controller.config import ControllerConfig
    from zkcontroller.protocol.ibp import DEFAULT_IBP

    assert ControllerConfig(1).inter_broker_protocol_version == DEFAULT_IBP
    assert ControllerConfig(1, inter_broker_protocol_version="2.6").inter_broker_protocol_version == "2.6"
    with pytest.raises(ValueError, match=r"^inter.broker.protocol.version: '2.9' is not a version"):
        ControllerConfig(1, inter_broker_protocol_version="2.9")
