"""The ``decode_lenient`` readers: what Kafka 2.8.2's ZkData reads as empty instead of refusing (``Json.parseBytes``
gives ``None`` for data that is not JSON; ``asJsonObjectOption`` for an entity config that is not an object) is
read as empty here too, with the reason for the caller to report; well-formed JSON of the wrong type still
raises, as Kafka throws. The strict ``decode`` refuses both, so that the admin tools can flag the znode."""

from __future__ import annotations

import pytest

from zkcontroller.model import TopicIdReplicaAssignment
from zkcontroller.zk.errors import UnparseableZnodeError, ZnodeDecodeError
from zkcontroller.zk.znodes import ConfigEntityZNode, TopicZNode

TOPIC = "/brokers/topics/t"
CONFIG = "/config/topics/t"


@pytest.mark.parametrize("data", [b"not json", b"{]", b"\xff\xfe", b" x", b'{"partitions":NaN}'])
def test_topic_znode_that_is_not_json_is_an_empty_assignment(data: bytes) -> None:
    value, error = TopicZNode.decode_lenient(data, TOPIC)
    assert value == TopicIdReplicaAssignment("t", None, {})
    assert isinstance(error, UnparseableZnodeError) and error.path == TOPIC and "invalid JSON" in error.reason
    with pytest.raises(UnparseableZnodeError):  # the strict reader (admin tools) still refuses it
        TopicZNode.decode(data, TOPIC)


@pytest.mark.parametrize("data", [b"[]", b'{"version":3,"partitions":[]}', b'{"partitions":{"0":["1"]}}',
                                  b'{"partitions":{},"topic_id":null}'])
def test_topic_znode_of_the_wrong_shape_still_raises(data: bytes) -> None:
    with pytest.raises(ZnodeDecodeError) as excinfo:
        TopicZNode.decode_lenient(data, TOPIC)
    assert not isinstance(excinfo.value, UnparseableZnodeError)


def test_well_formed_topic_znode_reads_the_same_both_ways() -> None:
    data = b'{"version":3,"partitions":{"0":[1,2]}}'
    value, error = TopicZNode.decode_lenient(data, TOPIC)
    assert error is None and value == TopicZNode.decode(data, TOPIC)


@pytest.mark.parametrize("data", [b"", b"   ", b"\n\t\r ", b"\xef\xbb\xbf", b"\xef\xbb\xbf  "])
def test_topic_znode_without_a_json_value_raises_both_ways(data: bytes) -> None:
    """Jackson reads no value as ``MissingNode`` (not as a parse failure), on which Kafka's ``TopicZNode.decode``
    throws ``Expected JSON object``: not the empty assignment that data which is not JSON reads as."""
    for decode in (TopicZNode.decode, TopicZNode.decode_lenient):
        with pytest.raises(ZnodeDecodeError) as excinfo:
            decode(data, TOPIC)
        assert not isinstance(excinfo.value, UnparseableZnodeError)
        assert excinfo.value.path == TOPIC
        assert excinfo.value.reason == f"no JSON value ({len(data)} bytes of data): expected a JSON object"


@pytest.mark.parametrize(("data", "reason"), [
    (b"{not json", "invalid JSON"),
    (b"[]", "expected a JSON object, got array"),
    (b'"text"', "expected a JSON object, got string"),
    (b'{"version":1,"config":null}', "config: expected an object, got null"),
    (b'{"version":1,"config":[]}', "config: expected an object, got array"),
    (b'{"version":1,"config":"a=b"}', "config: expected an object, got string"),
])
def test_config_kafka_ignores_is_no_overrides_with_the_reason(data: bytes, reason: str) -> None:
    config, error = ConfigEntityZNode.decode_lenient(data, CONFIG)
    assert config == {}
    assert error is not None and error.path == CONFIG and reason in error.reason
    with pytest.raises(ZnodeDecodeError, match=reason.replace("(", r"\(")):
        ConfigEntityZNode.decode(data, CONFIG)


def test_config_value_of_the_wrong_type_still_raises() -> None:
    with pytest.raises(ZnodeDecodeError, match=r"config\.retention\.ms: expected a string"):
        ConfigEntityZNode.decode_lenient(b'{"version":1,"config":{"retention.ms":1000}}', CONFIG)


@pytest.mark.parametrize(("data", "expected"), [
    (b"", {}), (b'{"version":1}', {}), (b'{"version":1,"config":{"a":"b"}}', {"a": "b"})])
def test_well_formed_config_reads_the_same_both_ways(data: bytes, expected: dict[str, str]) -> None:
    assert ConfigEntityZNode.decode_lenient(data, CONFIG) == (expected, None)
    assert ConfigEntityZNode.decode(data, CONFIG) == expected
