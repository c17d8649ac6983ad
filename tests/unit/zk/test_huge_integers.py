"""Integers longer than Python's ``int``/``str`` conversions take (4,300 digits) in any integer a znode holds: a
decode error naming the node and the field, never a ``ValueError`` escaping the decoder (the controller and the
brokers catch decode errors, and an unreadable ``/controller_epoch`` is reported and watched as such)."""

from __future__ import annotations

import pytest

from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.json_fields import clip_text, decimal_fits, parse_int_text
from zkcontroller.zk.znodes.controller import ControllerEpochZNode, ControllerZNode
from zkcontroller.zk.znodes.producer_id import ProducerIdBlockZNode
from zkcontroller.zk.znodes.topics import TopicPartitionStateZNode, TopicZNode

HUGE = "7" * 5_000


@pytest.mark.parametrize(("decode", "data"), [
    (ControllerEpochZNode.decode, HUGE.encode()),
    (ControllerEpochZNode.decode, b"-" + HUGE.encode()),
    (ControllerZNode.decode, b'{"version":1,"brokerid":%s,"timestamp":"1"}' % HUGE.encode()),
    (lambda data: TopicZNode.decode(data, "/brokers/topics/t"),
     b'{"version":2,"partitions":{"%s":[1]}}' % HUGE.encode()),
    (lambda data: TopicZNode.decode(data, "/brokers/topics/t"),
     b'{"version":2,"partitions":{"0":[%s]}}' % HUGE.encode()),
    (lambda data: TopicPartitionStateZNode.decode(data, "/brokers/topics/t/partitions/0/state", 0),
     b'{"controller_epoch":1,"leader":%s,"version":1,"leader_epoch":0,"isr":[1]}' % HUGE.encode()),
    (ProducerIdBlockZNode.decode, b'{"version":1,"broker":1,"block_start":"%s","block_end":"1"}' % HUGE.encode()),
], ids=["epoch", "negative-epoch", "controller", "partition-key", "replica", "leader", "producer-id-block"])
def test_a_huge_integer_is_a_decode_error(decode: object, data: bytes) -> None:
    with pytest.raises(ZnodeDecodeError) as refused:
        decode(data)  # type: ignore[operator]
    if b'"%s' % HUGE.encode()[:10] in data or not data.startswith(b"{"):  # a text field: named, not copied whole
        assert len(str(refused.value)) < 300


def test_leading_zeros_still_read_as_java_does() -> None:
    assert ControllerEpochZNode.decode(b"0" * 5_000 + b"42") == 42
    assert parse_int_text("-" + "0" * 5_000 + "2147483648", "/p", "f") == -(2**31)
    with pytest.raises(ZnodeDecodeError, match="out of 32-bit range"):
        parse_int_text("0" * 5_000 + "2147483648", "/p", "f")
    block = ProducerIdBlockZNode.decode(
        b'{"version":1,"broker":1,"block_start":"%s9","block_end":"9223372036854775807"}' % (b"0" * 5_000))
    assert (block.block_start, block.block_end) == (9, 2**63 - 1)


def test_the_helpers() -> None:
    assert decimal_fits("0" * 100 + "1234567890", 10) and not decimal_fits("12345678901", 10)
    assert decimal_fits("", 10) and decimal_fits("000", 0)
    assert clip_text("abc") == "'abc'" and clip_text("x" * 100) == f"{'x' * 40!r}... (100 characters)"
