"""Broker ids and partitions in the admin tools' JSON files are Kafka's ``to[Int]``/``to[Seq[Int]]``: a JSON
integer Jackson holds as an IntNode, so within 32 bits; Python's json would hand back any size."""

from __future__ import annotations

import json

import pytest

from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.leader_election import parse_partitions_json
from zkcontroller.admin.reassign import ReassignmentInputError, parse_reassignment_json
from zkcontroller.model import TopicPartition


def _reassignment(partition: object, replicas: object) -> str:
    return json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": partition, "replicas": replicas}]})


def test_32_bit_ids_are_accepted() -> None:
    assert parse_reassignment_json(_reassignment(2**31 - 1, [2**31 - 1, -(2**31)])) == {
        TopicPartition("t", 2**31 - 1): (2**31 - 1, -(2**31))}
    assert parse_partitions_json('{"partitions": [{"topic": "t", "partition": -2147483648}]}', "f.json") == [
        TopicPartition("t", -(2**31))]


@pytest.mark.parametrize(("partition", "replicas", "what"), [
    (2**31, [1], "partition"), (0, [1, 2**31], "replicas"), (0, [-(2**31) - 1], "replicas"), (0, [1.0], "replicas"),
    (0, [True], "replicas"), (0, ["1"], "replicas"),
])
def test_reassignment_json_refuses_what_kafka_refuses(partition: object, replicas: object, what: str) -> None:
    with pytest.raises(ReassignmentInputError, match=f'partitions\\[0\\]: "{what}" must be'):
        parse_reassignment_json(_reassignment(partition, replicas), "r.json")


@pytest.mark.parametrize("partition", ["2147483648", "-2147483649", "1.0", "true", '"1"'])
def test_election_json_refuses_what_kafka_refuses(partition: str) -> None:
    with pytest.raises(AdminError, match='partitions\\[0\\]: "partition" must be a 32-bit integer'):
        parse_partitions_json(f'{{"partitions": [{{"topic": "t", "partition": {partition}}}]}}', "f.json")
