"""Every decoder rejects malformed JSON, wrong types and versions Kafka 2.8 refuses with a `ZnodeDecodeError`
that names the znode, so a caller reading many nodes can log it and carry on."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.znodes import (
    BrokerIdZNode,
    ClusterIdZNode,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityZNode,
    ControllerEpochZNode,
    ControllerZNode,
    FeatureZNode,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)

Decoder = Callable[[bytes, str], object]


def _state(data: bytes, path: str) -> object:
    return TopicPartitionStateZNode.decode(data, path, zk_version=0)


GOOD_BROKER = ('{"version":5,"host":"h","port":1,"jmx_port":-1,"timestamp":"1","endpoints":["PLAINTEXT://h:1"],'
               '"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"features":{}')

CASES: list[tuple[str, Decoder, str, bytes, str]] = [
    # (id, decoder, path, data, expected reason fragment)
    ("controller-not-json", ControllerZNode.decode, "/controller", b"{", "invalid JSON"),
    ("controller-empty", ControllerZNode.decode, "/controller", b"", "no JSON value (0 bytes of data)"),
    ("controller-whitespace-bom", ControllerZNode.decode, "/controller", b"\xef\xbb\xbf \n",
     "no JSON value (5 bytes of data): expected a JSON object"),
    ("controller-array", ControllerZNode.decode, "/controller", b"[1]", "expected a JSON object"),
    ("controller-brokerid-string", ControllerZNode.decode, "/controller",
     b'{"version":1,"brokerid":"3","timestamp":"1"}', "brokerid: expected an integer"),
    ("controller-brokerid-bool", ControllerZNode.decode, "/controller",
     b'{"version":1,"brokerid":true}', "brokerid: expected an integer"),
    ("controller-brokerid-float", ControllerZNode.decode, "/controller",
     b'{"version":1,"brokerid":3.0}', "brokerid: expected an integer"),
    ("controller-brokerid-huge", ControllerZNode.decode, "/controller",
     b'{"version":1,"brokerid":2147483648}', "out of 32-bit range"),
    ("controller-no-brokerid", ControllerZNode.decode, "/controller", b'{"version":1}', "missing field"),
    ("controller-nan", ControllerZNode.decode, "/controller", b'{"version":1,"brokerid":NaN}',
     "invalid JSON"),
    ("epoch-text", ControllerEpochZNode.decode, "/controller_epoch", b"five", "not a decimal integer"),
    ("epoch-space", ControllerEpochZNode.decode, "/controller_epoch", b" 5", "not a decimal integer"),
    ("epoch-underscore", ControllerEpochZNode.decode, "/controller_epoch", b"1_0", "not a decimal integer"),
    ("epoch-empty", ControllerEpochZNode.decode, "/controller_epoch", b"", "not a decimal integer"),
    ("epoch-binary", ControllerEpochZNode.decode, "/controller_epoch", b"\xff", "not UTF-8"),
    ("epoch-huge", ControllerEpochZNode.decode, "/controller_epoch", b"99999999999", "out of 32-bit range"),
    ("broker-bad-json", BrokerIdZNode.decode, "/brokers/ids/1", b'{"version":5,', "invalid JSON"),
    ("broker-version-0", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace('"version":5', '"version":0').encode() + b"}", "unsupported version 0"),
    ("broker-version-string", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace('"version":5', '"version":"5"').encode() + b"}", "version: expected an integer"),
    ("broker-no-version", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace('"version":5,', "").encode() + b"}", "missing field 'version'"),
    ("broker-no-jmx", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace('"jmx_port":-1,', "").encode() + b"}", "missing field 'jmx_port'"),
    ("broker-endpoints-not-list", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace('["PLAINTEXT://h:1"]', '"PLAINTEXT://h:1"').encode() + b"}", "expected an array"),
    ("broker-endpoint-int", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace('["PLAINTEXT://h:1"]', "[1]").encode() + b"}", "endpoints[0]"),
    ("broker-endpoint-unparseable", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace("PLAINTEXT://h:1", "h:1").encode() + b"}", "unable to parse"),
    ("broker-unknown-listener", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace("PLAINTEXT://h:1", "CLIENT://h:1").encode() + b"}", "no security protocol"),
    ("broker-unknown-protocol", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace('{"PLAINTEXT":"PLAINTEXT"}', '{"PLAINTEXT":"TLS"}').encode() + b"}",
     "unknown security protocol"),
    ("broker-rack-int", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.encode() + b',"rack":1}', "rack: expected a string"),
    ("broker-feature-range", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace('"features":{}', '"features":{"f":{"min_version":3,"max_version":2}}').encode()
     + b"}", "features.f"),
    ("broker-feature-missing-max", BrokerIdZNode.decode, "/brokers/ids/1",
     GOOD_BROKER.replace('"features":{}', '"features":{"f":{"min_version":1}}').encode() + b"}",
     "features.f.max_version"),
    ("broker-v1-host-null", BrokerIdZNode.decode, "/brokers/ids/1",
     b'{"version":1,"host":null,"port":1,"jmx_port":-1}', "host: expected a string"),
    ("broker-bad-id-in-path", BrokerIdZNode.decode, "/brokers/ids/abc", GOOD_BROKER.encode() + b"}",
     "not a broker id"),
    ("topic-bad-json", TopicZNode.decode, "/brokers/topics/t", b"{]", "invalid JSON"),
    ("topic-partitions-list", TopicZNode.decode, "/brokers/topics/t", b'{"version":3,"partitions":[]}',
     "partitions: expected an object"),
    ("topic-partition-key", TopicZNode.decode, "/brokers/topics/t", b'{"version":3,"partitions":{"x":[1]}}',
     "not a decimal integer"),
    ("topic-replicas-strings", TopicZNode.decode, "/brokers/topics/t",
     b'{"version":3,"partitions":{"0":["1"]}}', "partitions.0[0]"),
    ("topic-adding-not-list", TopicZNode.decode, "/brokers/topics/t",
     b'{"version":3,"partitions":{"0":[1]},"adding_replicas":{"0":1}}', "adding_replicas.0"),
    ("topic-id-short", TopicZNode.decode, "/brokers/topics/t",
     b'{"version":3,"partitions":{},"topic_id":"abc"}', "topic_id"),
    ("topic-id-null", TopicZNode.decode, "/brokers/topics/t",
     b'{"version":3,"partitions":{},"topic_id":null}', "topic_id: expected a string"),
    ("state-empty", _state, "/brokers/topics/t/partitions/0/state", b"", "no JSON value (0 bytes of data)"),
    ("state-whitespace", _state, "/brokers/topics/t/partitions/0/state", b"\t ",
     "no JSON value (2 bytes of data): expected a JSON object"),
    ("state-truncated", _state, "/brokers/topics/t/partitions/0/state", b'{"version":1,', "invalid JSON"),
    ("state-isr-not-list", _state, "/brokers/topics/t/partitions/0/state",
     b'{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":1}', "isr: expected an array"),
    ("state-no-leader", _state, "/brokers/topics/t/partitions/0/state",
     b'{"version":1,"leader_epoch":0,"controller_epoch":1,"isr":[]}', "missing field 'leader'"),
    ("reassign-empty", ReassignPartitionsZNode.decode, "/admin/reassign_partitions", b"", "no JSON value"),
    ("preferred-empty", PreferredReplicaElectionZNode.decode, "/admin/preferred_replica_election", b" ",
     "no JSON value"),
    ("isr-change-empty", IsrChangeNotificationSequenceZNode.decode,
     "/isr_change_notification/isr_change_0000000001", b"", "no JSON value"),
    ("log-dir-empty", LogDirEventNotificationSequenceZNode.decode,
     "/log_dir_event_notification/log_dir_event_0000000001", b"", "no JSON value"),
    ("cluster-id-empty", ClusterIdZNode.decode, "/cluster/id", b"", "no JSON value"),
    ("feature-empty", FeatureZNode.decode, "/feature", b"", "no JSON value"),
    ("reassign-bad-json", ReassignPartitionsZNode.decode, "/admin/reassign_partitions", b"nope",
     "invalid JSON"),
    ("reassign-entry-not-object", ReassignPartitionsZNode.decode, "/admin/reassign_partitions",
     b'{"version":1,"partitions":[1]}', "partitions[0]: expected an object"),
    ("reassign-no-replicas", ReassignPartitionsZNode.decode, "/admin/reassign_partitions",
     b'{"version":1,"partitions":[{"topic":"t","partition":0}]}', "partitions[0].replicas"),
    ("reassign-version", ReassignPartitionsZNode.decode, "/admin/reassign_partitions",
     b'{"version":true,"partitions":[]}', "version: cannot be read as an int"),
    ("preferred-no-partitions", PreferredReplicaElectionZNode.decode, "/admin/preferred_replica_election",
     b'{"version":1}', "missing field 'partitions'"),
    ("preferred-topic-int", PreferredReplicaElectionZNode.decode, "/admin/preferred_replica_election",
     b'{"version":1,"partitions":[{"topic":1,"partition":0}]}', "partitions[0].topic"),
    ("isr-change-partition-string", IsrChangeNotificationSequenceZNode.decode,
     "/isr_change_notification/isr_change_0000000001",
     b'{"version":1,"partitions":[{"topic":"t","partition":"0"}]}', "partitions[0].partition"),
    ("log-dir-no-broker", LogDirEventNotificationSequenceZNode.decode,
     "/log_dir_event_notification/log_dir_event_0000000001", b'{"version":1,"event":1}', "missing field"),
    ("log-dir-not-json", LogDirEventNotificationSequenceZNode.decode,
     "/log_dir_event_notification/log_dir_event_0000000001", b"\x00\x01", "invalid JSON"),
    ("config-value-int", ConfigEntityZNode.decode, "/config/topics/t",
     b'{"version":1,"config":{"retention.ms":1000}}', "config.retention.ms: expected a string"),
    ("config-not-object", ConfigEntityZNode.decode, "/config/topics/t", b'{"version":1,"config":[]}',
     "config: expected an object"),
    ("config-change-version", ConfigEntityChangeNotificationSequenceZNode.decode,
     "/config/changes/config_change_0000000001", b'{"version":3,"entity_path":"topics/t"}',
     "unsupported version 3"),
    ("config-change-no-path", ConfigEntityChangeNotificationSequenceZNode.decode,
     "/config/changes/config_change_0000000001", b'{"version":2}', "missing field 'entity_path'"),
    ("cluster-id-int", ClusterIdZNode.decode, "/cluster/id", b'{"version":"1","id":5}',
     "id: expected a string"),
    ("feature-no-features", FeatureZNode.decode, "/feature", b'{"version":1,"status":1}',
     "features map can not be absent"),
    ("feature-no-status", FeatureZNode.decode, "/feature", b'{"version":1,"features":{}}',
     "status can not be absent"),
    ("feature-bad-status", FeatureZNode.decode, "/feature", b'{"version":1,"status":7,"features":{}}',
     "malformed status 7"),
    ("feature-bad-range", FeatureZNode.decode, "/feature",
     b'{"version":1,"status":1,"features":{"f":{"min_version_level":0,"max_version_level":1}}}',
     "features.f"),
    ("feature-version-0", FeatureZNode.decode, "/feature", b'{"version":0,"status":1,"features":{}}',
     "unsupported version 0"),
]


@pytest.mark.parametrize(
    ("decoder", "path", "data", "reason"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_malformed_znode_raises_typed_error_naming_path(decoder: Decoder, path: str, data: bytes,
                                                        reason: str) -> None:
    with pytest.raises(ZnodeDecodeError) as excinfo:
        decoder(data, path)
    assert excinfo.value.path == path
    assert path in str(excinfo.value)
    assert reason in excinfo.value.reason


def test_every_decoder_has_malformed_cases() -> None:
    covered = {getattr(c[1], "__qualname__", "") for c in CASES}
    for codec in (ControllerZNode, ControllerEpochZNode, BrokerIdZNode, TopicZNode, ReassignPartitionsZNode,
                  PreferredReplicaElectionZNode, IsrChangeNotificationSequenceZNode,
                  LogDirEventNotificationSequenceZNode, ConfigEntityZNode,
                  ConfigEntityChangeNotificationSequenceZNode, ClusterIdZNode, FeatureZNode):
        assert f"{codec.__name__}.decode" in covered, codec
    assert "_state" in covered
