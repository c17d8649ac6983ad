"""Which znode ``version`` values Kafka 2.8.2 reads, and so which we read (audit deletion-reassign F3 and the
follow-up check of every decoder against ``ZkData.scala``): most decoders never look at the version; the
reassignment znode binds it to a Jackson ``Int``."""

from __future__ import annotations

import pytest

from zkcontroller.model import FeatureZNodeStatus, TopicPartition
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.znodes import (
    BrokerIdZNode,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityZNode,
    ControllerZNode,
    FeatureZNode,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)

REASSIGN = "/admin/reassign_partitions"
PARTITIONS = '"partitions":[{"topic":"foo","partition":0,"replicas":[4,5]}]'


@pytest.mark.parametrize("version", ['"version":2,', '"version":0,', '"version":-7,', "", '"version":null,',
                                     '"version":"3",', '"version":" 12 ",', '"version":"",', '"version":1.5,',
                                     '"version":2147483647,'])
def test_reassignment_decodes_whatever_int_jackson_reads_as_its_version(version: str) -> None:
    data = f"{{{version}{PARTITIONS}}}".encode()
    assert ReassignPartitionsZNode.decode(data, REASSIGN) == {TopicPartition("foo", 0): (4, 5)}


@pytest.mark.parametrize("version", ["true", "[1]", "{}", '"one"', '"1.0"', "2147483648", "-2147483649.0",
                                     '"2147483648"'])
def test_reassignment_refuses_a_version_jackson_cannot_read_as_an_int(version: str) -> None:
    with pytest.raises(ZnodeDecodeError) as excinfo:
        ReassignPartitionsZNode.decode(f'{{"version":{version},{PARTITIONS}}}'.encode(), REASSIGN)
    assert excinfo.value.path == REASSIGN
    assert "version" in excinfo.value.reason


def test_a_kraft_migration_controller_znode_names_its_controller() -> None:
    """Kafka 3.4+ in ZK-migration mode writes ``/controller`` version 2; 2.8's ``ControllerZNode.decode`` reads
    only ``brokerid``."""
    data = b'{"version":2,"brokerid":3000,"timestamp":"1700000000000","kraftControllerEpoch":5}'
    assert ControllerZNode.decode(data, "/controller") == 3000


BROKER = ('"host":"h","port":1,"jmx_port":-1,"timestamp":"1","endpoints":["PLAINTEXT://h:1"],'
          '"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"features":{}')


@pytest.mark.parametrize("version", [2, 3, 6, 9])
def test_a_broker_registration_after_version_one_reads_as_endpoints(version: int) -> None:
    info = BrokerIdZNode.decode(f'{{"version":{version},{BROKER}}}'.encode(), "/brokers/ids/1")
    assert (info.version, [e.connection_string for e in info.broker.endpoints]) == (version, ["PLAINTEXT://h:1"])


@pytest.mark.parametrize("version", ['"version":4,', '"version":"x",', '"version":null,', ""])
def test_decoders_that_never_read_the_version_take_any(version: str) -> None:
    """``ZkData.scala`` 2.8.2: the topic, partition state, entity config, ``/cluster/id``, preferred election,
    ISR-change and log-dir-event decoders read no ``version`` at all."""
    topic = TopicZNode.decode(f'{{{version}"partitions":{{"0":[1,2]}}}}'.encode(), "/brokers/topics/t")
    assert topic.assignment[TopicPartition("t", 0)].replicas == (1, 2)
    state = TopicPartitionStateZNode.decode(
        f'{{{version}"leader":1,"leader_epoch":2,"controller_epoch":3,"isr":[1]}}'.encode(),
        "/brokers/topics/t/partitions/0/state", zk_version=4)
    assert (state.leader_and_isr.leader, state.leader_and_isr.isr, state.controller_epoch) == (1, (1,), 3)
    assert ConfigEntityZNode.decode(f'{{{version}"config":{{"a":"b"}}}}'.encode(), "/config/topics/t") == {"a": "b"}
    assert ClusterIdZNode.decode(f'{{{version}"id":"abc"}}'.encode(), "/cluster/id") == "abc"
    partitions = '"partitions":[{"topic":"t","partition":0}]'
    assert PreferredReplicaElectionZNode.decode(f"{{{version}{partitions}}}".encode(),
                                                "/admin/preferred_replica_election") == {TopicPartition("t", 0)}
    assert IsrChangeNotificationSequenceZNode.decode(
        f"{{{version}{partitions}}}".encode(), "/isr_change_notification/isr_change_0000000001"
    ) == {TopicPartition("t", 0)}
    assert LogDirEventNotificationSequenceZNode.decode(
        f'{{{version}"broker":2,"event":1}}'.encode(), "/log_dir_event_notification/log_dir_event_0000000001") == 2


def test_a_feature_znode_after_version_one_still_reads() -> None:
    """``FeatureZNode.decode`` refuses only a version below 1 (and a missing one)."""
    data = b'{"version":2,"status":1,"features":{"f":{"min_version_level":1,"max_version_level":2}}}'
    feature = FeatureZNode.decode(data, "/feature")
    assert feature.status is FeatureZNodeStatus(1)
    assert [name for name, _ in feature.features] == ["f"]


@pytest.mark.parametrize(("decoder", "path", "data"), [
    (BrokerIdZNode.decode, "/brokers/ids/1", f'{{"version":0,{BROKER}}}'.encode()),
    (BrokerIdZNode.decode, "/brokers/ids/1", f"{{{BROKER}}}".encode()),
    (FeatureZNode.decode, "/feature", b'{"version":0,"status":1,"features":{}}'),
    (FeatureZNode.decode, "/feature", b'{"status":1,"features":{}}'),
    (ConfigEntityChangeNotificationSequenceZNode.decode, "/config/changes/config_change_0000000001",
     b'{"version":3,"entity_path":"topics/t"}'),
    (ConfigEntityChangeNotificationSequenceZNode.decode, "/config/changes/config_change_0000000001",
     b'{"entity_path":"topics/t"}'),
])
def test_versions_kafka_refuses_are_still_refused(decoder: object, path: str, data: bytes) -> None:
    with pytest.raises(ZnodeDecodeError) as excinfo:
        decoder(data, path)  # type: ignore[operator]
    assert excinfo.value.path == path and "version" in excinfo.value.reason
