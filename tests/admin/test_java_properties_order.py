"""`properties_order`: the order ``kafka-configs --zookeeper --describe`` prints a config node's keys in, the
iteration order of a Java 11+ ``Properties`` (a ``ConcurrentHashMap``). Each expected order is worked out by hand
from the algorithm in the comment beside it (and was the order JDK 17 and 25 print for the same
``setProperty`` calls); none is the sorted order the command printed before."""

from __future__ import annotations

import itertools

import pytest
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)

from zkcontroller.admin.cli import topics
from zkcontroller.admin.configs import configs
from zkcontroller.java_hash import java_string_hash
from zkcontroller.zk.java_properties import properties_order

SAME_HASH = ["".join(p) for p in itertools.product(["Aa", "BB"], repeat=4)]
"""16 keys with one ``String.hashCode`` ("Aa" and "BB" both hash to 2112), so all share one chain."""


def test_string_hash_is_javas() -> None:
    assert [java_string_hash(k) for k in ("", "a", "Aa", "BB")] == [0, 97, 2112, 2112]
    assert java_string_hash("retention.ms") == 2955746934  # -1339220362 as a Java int
    assert java_string_hash("\U0001F600") == (0xD83D * 31 + 0xDE00)  # UTF-16 code units, as Java


@pytest.mark.parametrize(("keys", "order"), [
    # 16 slots; slot = spread(hash) & 15: cleanup.policy 2, retention.ms and segment.bytes 11 (chained in turn)
    (["retention.ms", "cleanup.policy", "segment.bytes"], ["cleanup.policy", "retention.ms", "segment.bytes"]),
    # a=97, q=113, A=65, Q=81 all land in slot 1: one chain in insertion order
    (["a", "q", "A", "Q"], ["a", "q", "A", "Q"]),
    (["BB", "Aa"], ["BB", "Aa"]),  # equal hashes: insertion order
    # The 12th key reaches the threshold (12 of 16): the table doubles to 32. Slot 1's chain a,q,A,Q splits on
    # bit 16: the last run (Q, bound high) stays as is, the nodes before it are pushed onto the front of their
    # side, so slot 1 becomes A,a and slot 17 q,Q; b..i (98..105) keep slots 2..9.
    (["a", "q", "A", "Q", "b", "c", "d", "e", "f", "g", "h", "i"],
     ["A", "a", "b", "c", "d", "e", "f", "g", "h", "i", "q", "Q"]),
    # A 9th key in one chain asks for a tree while the table is under 64 slots: it grows to 128 instead
    # (tryPresize), the one-hash chain unchanged; the 10th key then makes the chain a tree bin (order kept)
    # and the 11th goes first in the tree bin's list.
    (SAME_HASH[:10], SAME_HASH[:10]),
    (SAME_HASH[:11], [SAME_HASH[10], *SAME_HASH[:10]]),
])
def test_order_of_a_java_11_properties(keys: list[str], order: list[str]) -> None:
    assert properties_order(keys) == order


def test_a_key_set_again_changes_nothing() -> None:
    # q and a share slot 1; a replaced value keeps its place and adds no count
    assert properties_order(["q", "a", "q"]) == ["q", "a"]


@pytest.mark.zookeeper
async def test_describe_prints_keys_in_kafkas_order(cli: Cli) -> None:  # noqa: F811
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    added = "preallocate=true,delete.retention.ms=1,max.message.bytes=2,index.interval.bytes=3,flush.ms=4"
    assert (await cli(configs, "--alter", "--topic", "t", "--add-config", added)).exit_code == 0
    described = await cli(configs, "--describe", "--topic", "t")
    assert described.exit_code == 0, described.output
    assert described.stdout.splitlines()[-1] == (
        "Configs for topic 't' are flush.ms=4,max.message.bytes=2,preallocate=true,index.interval.bytes=3,"
        "delete.retention.ms=1")
