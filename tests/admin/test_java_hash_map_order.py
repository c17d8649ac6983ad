"""`hash_map_order`: the order of ``topics describe``'s ``Configs:`` field, which Kafka's TopicCommand prints through
the admin client's ``Config`` (a ``java.util.HashMap`` keyed by name, filled in the Properties' order). Each
expected order is worked out from the algorithm in the comment beside it (and is what JDK 17 and 25 print)."""

from __future__ import annotations

import itertools

import pytest
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)

from zkcontroller.admin.cli import topics
from zkcontroller.admin.java_hash_map import hash_map_order

SAME_HASH = ["".join(p) for p in itertools.product(["Aa", "BB"], repeat=4)]
"""16 keys with one ``String.hashCode``, in ``compareTo`` order."""
FILLERS = ["b", "c", "d", "e", "f", "g", "h", "i"]
"""98..105: slots 2..9 of 16 and of 32."""


@pytest.mark.parametrize(("keys", "order"), [
    # a, q, A, Q (97, 113, 65, 81) share slot 1 of 16; 12 keys do not pass the threshold (12): no resize,
    # unlike a ConcurrentHashMap, which grows on reaching it
    (["a", "q", "A", "Q", *FILLERS], ["a", "q", "A", "Q", *FILLERS]),
    # the 13th passes it: 32 slots, and the split keeps each side's order (a,A in slot 1; q,Q in slot 17)
    (["a", "q", "A", "Q", *FILLERS, "j"], ["a", "A", *FILLERS, "j", "q", "Q"]),
    # one chain: the 9th and 10th keys double the table (16 -> 32 -> 64) instead of making a tree; the 11th
    # makes it a red-black tree. Eleven keys inserted in ascending order leave the 4th at the root, which is
    # moved to the front of the bin's list; the others keep their order.
    (SAME_HASH[:11], [SAME_HASH[3], *SAME_HASH[:3], *SAME_HASH[4:11]]),
    # a 12th, larger than all, is linked after its tree parent (the 11th, last in the list); the root stays
    (SAME_HASH[:12], [SAME_HASH[3], *SAME_HASH[:3], *SAME_HASH[4:12]]),
])
def test_order_of_a_java_hash_map(keys: list[str], order: list[str]) -> None:
    assert hash_map_order(keys) == order


@pytest.mark.zookeeper
async def test_topics_describe_prints_configs_in_kafkas_order(cli: Cli) -> None:  # noqa: F811
    overrides = ["preallocate=true", "delete.retention.ms=1", "max.message.bytes=2", "index.interval.bytes=3",
                 "flush.ms=4"]
    created = await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1",
                        *itertools.chain.from_iterable(("--config", c) for c in overrides))
    assert created.exit_code == 0, created.output
    described = await cli(topics, "describe", "--topic", "t")
    assert described.exit_code == 0, described.output
    assert described.stdout.splitlines()[0].endswith(
        "\tConfigs: flush.ms=4,max.message.bytes=2,preallocate=true,index.interval.bytes=3,delete.retention.ms=1")


def test_a_map_sized_by_its_count_starts_from_a_smaller_table() -> None:
    """``new HashMap<>(n)`` (the admin client's results): the first table has tableSizeFor(n) slots and grows
    by doubling with a 3/4 threshold, so "a" (hash 97) and "d" (100) swap: slots 1 and 4 of 16, but 1 and 0 of
    the 4 slots that HashMap(2) has after its second put."""
    assert hash_map_order(["a", "d"]) == ["a", "d"]
    assert hash_map_order(["a", "d"], 2) == ["d", "a"]
    assert hash_map_order(["a", "d"], 16) == ["a", "d"]
    names = [f"topic-{i}" for i in range(40)]
    assert hash_map_order(names, 64) == hash_map_order(names, 40)  # both tables end at 64 slots
    assert sorted(hash_map_order(names, 3)) == sorted(names)
