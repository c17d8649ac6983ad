"""The pieces `control_codec` and `fetch_codec` share: topic grouping keeps first-seen order (the order partitions
are written in, which a round trip must reproduce) and an unknown error code does not fail a whole message."""

from __future__ import annotations

from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.plain_values import by_topic, error_of


def test_by_topic_keeps_first_seen_topic_and_item_order() -> None:
    tps = [TopicPartition("b", 1), TopicPartition("a", 0), TopicPartition("b", 0), TopicPartition("a", 2)]
    grouped = by_topic(tps, lambda tp: tp.topic)
    assert list(grouped) == ["b", "a"]
    assert grouped == {"b": [tps[0], tps[2]], "a": [tps[1], tps[3]]}
    assert by_topic([], lambda tp: tp.topic) == {}


def test_error_of_known_and_unknown_codes() -> None:
    assert error_of(0) is Errors.NONE
    assert error_of(int(Errors.NOT_CONTROLLER)) is Errors.NOT_CONTROLLER
    assert error_of(32767) is Errors.UNKNOWN_SERVER_ERROR
