"""Every znode decoder is total: whatever bytes it is given, or null data (None: any znode can hold it, written by
``zkCli.sh create <path>`` with no data), it returns a value or raises `ZnodeDecodeError` naming the path it was
given, never another exception (which would escape the handlers that report a malformed node and carry on). The
cluster-level counterpart is tests/integration/test_znode_fuzz.py."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zkcontroller.zk.errors import NullZnodeDataError, ZnodeDecodeError
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
    ProducerIdBlockZNode,
    ReassignPartitionsZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)

DECODERS: dict[str, tuple[str, Callable[[bytes | None, str], object]]] = {
    "broker": ("/brokers/ids/7", BrokerIdZNode.decode),
    "topic": ("/brokers/topics/t", TopicZNode.decode),
    "topic_lenient": ("/brokers/topics/t", lambda d, p: TopicZNode.decode_lenient(d, p)),
    "state": ("/brokers/topics/t/partitions/0/state", lambda d, p: TopicPartitionStateZNode.decode(d, p, 0)),
    "controller": ("/controller", ControllerZNode.decode),
    "controller_epoch": ("/controller_epoch", ControllerEpochZNode.decode),
    "reassign": ("/admin/reassign_partitions", ReassignPartitionsZNode.decode),
    "preferred": ("/admin/preferred_replica_election", PreferredReplicaElectionZNode.decode),
    "isr_change": ("/isr_change_notification/isr_change_0000000001", IsrChangeNotificationSequenceZNode.decode),
    "log_dir": ("/log_dir_event_notification/log_dir_event_0000000001", LogDirEventNotificationSequenceZNode.decode),
    "config_change": ("/config/changes/config_change_0000000001", ConfigEntityChangeNotificationSequenceZNode.decode),
    "config": ("/config/topics/t", ConfigEntityZNode.decode),
    "config_lenient": ("/config/topics/t", ConfigEntityZNode.decode_lenient),
    "feature": ("/feature", FeatureZNode.decode),
    "cluster_id": ("/cluster/id", ClusterIdZNode.decode),
    "producer_id_block": ("/latest_producer_id_block", ProducerIdBlockZNode.decode),
}

_leaf = st.one_of(st.none(), st.booleans(), st.text(max_size=6), st.integers(-(2**70), 2**70),
                  st.floats(allow_nan=False, allow_infinity=False))
_json = st.recursive(_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                     max_leaves=10)
_KEYS = ["version", "brokerid", "partitions", "topic", "partition", "replicas", "leader", "leader_epoch", "isr",
         "controller_epoch", "broker", "event", "entity_path", "entity_type", "entity_name", "config", "features",
         "status", "id", "block_start", "block_end", "endpoints", "host", "port", "jmx_port", "rack",
         "listener_security_protocol_map", "adding_replicas", "removing_replicas", "topic_id", "min_version",
         "max_version", "min_version_level", "max_version_level"]
_known = st.recursive(_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_KEYS), inner, max_size=6)), max_leaves=14)
_poison_fragment = st.one_of(
    st.builds(lambda sign, n: sign + "9" * n, st.sampled_from(["", "-"]), st.integers(4250, 6000)),  # str() limit
    st.builds(lambda d: "[" * d + "1" + "]" * d, st.integers(400, 1500)),  # near and past the recursion limit
    st.builds(lambda d: '{"a":' * d + "1" + "}" * d, st.integers(400, 1500)),
    _known.map(lambda v: json.dumps(v)))
_poison = st.dictionaries(st.sampled_from(_KEYS), _poison_fragment, min_size=1, max_size=3).map(
    lambda d: ("{" + ",".join(f'"{k}":{v}' for k, v in d.items()) + "}").encode())
"""What Python cannot write back as it read it: integers past ``str(int)``'s digit limit, deep nesting."""
_numeric_text = st.one_of(
    st.integers(-3, 3).map(str),
    st.builds(lambda z, n: f'"{z}{"9" * n}"', st.sampled_from(["", "0" * 5000]), st.integers(0, 6000)))
_jackson_ints = st.builds(
    lambda v, p: f'{{"version":{v},"partitions":[{{"topic":"t","partition":{p},"replicas":[1]}}]}}'.encode(),
    _numeric_text, _numeric_text)
"""Numeric strings, past ``int(str)``'s digit limit too, where Kafka's Jackson binds a string to an ``Int``."""
DATA = st.one_of(
    st.none(),
    _jackson_ints,
    st.binary(max_size=60),
    _poison,
    _json.map(lambda v: json.dumps(v).encode()),
    _known.map(lambda v: json.dumps(v).encode()),
    _known.map(lambda v: json.dumps(v).encode()[:-1]),
)


@pytest.mark.parametrize("node", sorted(DECODERS))
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")), deadline=None)
@given(data=DATA)
def test_decoder_returns_or_names_the_znode(node: str, data: bytes | None) -> None:
    path, decode = DECODERS[node]
    try:
        decode(data, path)
    except ZnodeDecodeError as e:
        assert e.path == path and path in str(e)


READ_AS_NO_OVERRIDES = {"config": {}, "config_lenient": ({}, None)}
"""Kafka's ``ConfigEntityZNode.decode`` reads null as no overrides (``bytes != null``); every other decoder of Kafka
2.8 passes null to Jackson or ``new String``, which throw."""


@pytest.mark.parametrize("node", sorted(DECODERS))
def test_null_data_is_read_as_kafka_reads_it(node: str) -> None:
    path, decode = DECODERS[node]
    if node in READ_AS_NO_OVERRIDES:
        assert decode(None, path) == READ_AS_NO_OVERRIDES[node]
        return
    with pytest.raises(NullZnodeDataError) as caught:
        decode(None, path)
    assert caught.value.path == path
