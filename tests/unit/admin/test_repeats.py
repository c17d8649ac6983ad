"""Repeats in admin inputs are found in one pass: an election file naming every partition of a large cluster,
a reassignment's topics, IncrementalAlterConfigs' keys. ``items.count(x)`` per item was quadratic."""

from __future__ import annotations

import json

import pytest

from zkcontroller.admin import repeats
from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.leader_election import parse_partitions_json
from zkcontroller.admin.reassign import ReassignmentInputError, parse_topics_to_move_json
from zkcontroller.model import TopicPartition


def test_repeated_names_each_repeat_once_in_first_seen_order() -> None:
    assert repeats.repeated(["b", "a", "b", "c", "a", "b"]) == ["b", "a"]
    assert repeats.repeated([]) == []
    assert repeats.repeated([1, 2, 3]) == []


def test_an_election_file_of_many_partitions_is_checked_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    counter = repeats.Counter

    def counted(items: object) -> object:
        result = counter(items)  # type: ignore[call-overload]
        seen.append(sum(result.values()))
        return result

    monkeypatch.setattr(repeats, "Counter", counted)
    entries = [{"topic": "t", "partition": p} for p in range(50_000)] + [{"topic": "t", "partition": 7}]
    with pytest.raises(AdminError, match=r"duplicate partitions: t-7$"):
        parse_partitions_json(json.dumps({"partitions": entries}), "f.json")
    assert seen == [50_001]  # every partition counted once, by one Counter


def test_parsed_partitions_keep_their_order_without_repeats() -> None:
    text = json.dumps({"partitions": [{"topic": "b", "partition": 1}, {"topic": "a", "partition": 0}]})
    assert parse_partitions_json(text, "f.json") == [TopicPartition("b", 1), TopicPartition("a", 0)]


def test_topics_to_move_name_their_repeats_sorted() -> None:
    text = json.dumps({"topics": [{"topic": t} for t in ["z", "y", "z", "x", "y"]]})
    with pytest.raises(ReassignmentInputError, match=r"duplicate entries: y,z$"):
        parse_topics_to_move_json(text, "f.json")
