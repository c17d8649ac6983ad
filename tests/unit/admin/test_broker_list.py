"""``reassign --generate --broker-list`` read as ReassignPartitionsCommand.parseGenerateAssignmentArgs reads it:
``brokerList.split(',').map(_.toInt)``, then its duplicate check, with Kafka's messages."""

from __future__ import annotations

import pytest

from zkcontroller.admin.reassign import ReassignmentInputError, parse_broker_list


@pytest.mark.parametrize(("text", "brokers"), [
    ("1,2", [1, 2]), ("+1,02", [1, 2]), ("\u0661,-3", [1, -3]), ("1,2,", [1, 2]), ("1,2,,", [1, 2]), (",", []),
    ("2147483647", [2**31 - 1]),
])
def test_accepted_as_java_does(text: str, brokers: list[int]) -> None:
    assert parse_broker_list(text) == brokers


@pytest.mark.parametrize(("text", "bad"), [
    ("1, 2", " 2"), ("1 ", "1 "), ("", ""), ("1,,2", ""), (",1", ""), ("1_0", "1_0"), ("2147483648", "2147483648"),
    ("\U0001d7cf", "\U0001d7cf"), ("x", "x"),
])
def test_refused_with_javas_message(text: str, bad: str) -> None:
    with pytest.raises(ReassignmentInputError) as refused:
        parse_broker_list(text)
    assert str(refused.value) == f'For input string: "{bad}"'


def test_duplicates_in_kafkas_words() -> None:
    with pytest.raises(ReassignmentInputError) as refused:
        parse_broker_list("1,+1,2,02,3")
    assert str(refused.value) == "Broker list contains duplicate entries: 1,2"
