"""Java's hash codes, where Kafka's output follows a ``HashMap``'s iteration order: the admin tools' config lines
(`admin.java_hash_map`, `zk.java_properties`) and a failed Produce request's answer (`broker.produce`); and
Scala 2.13's mutable hash tables, whose order decides what ``ZkAdminManager`` does first and how it prints an
assignment (`scala_hash_order`)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def java_string_hash(text: str) -> int:
    """``String.hashCode`` as an unsigned 32-bit value: ``31*h + c`` over the UTF-16 code units."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


def hash_map_spread(h: int) -> int:
    """``HashMap.hash``: the high half of the unsigned 32-bit ``h`` folded into the low, for the table index."""
    return h ^ (h >> 16)


def scala_hash_order(keys: Iterable[K], hash_of: Callable[[K], int]) -> list[K]:
    """The distinct ``keys`` in the iteration order of a Scala 2.13 ``mutable.HashSet`` / ``HashMap`` they were
    added to in order (Kafka 2.8.2 is built with Scala 2.13.5); ``hash_of`` is the key's ``##`` (a ``String``'s
    `java_string_hash`, an ``Int`` itself).

    Buckets are ``improveHash(h) & (capacity - 1)`` with ``improveHash(h) = h ^ (h >>> 16)``, visited in order; a
    bucket lists its keys by ascending (signed) improved hash, equal hashes in insertion order. The table starts at
    16 and doubles before an add that would bring its size to 3/4 of it (a repeated key counts as an add). Checked
    against scala-library 2.13.18 (tests)."""
    capacity, size = 16, 0
    seen: dict[K, int] = {}
    for key in keys:
        if size + 1 >= capacity * 3 // 4:
            capacity *= 2
        if key not in seen:
            seen[key] = len(seen)
            size += 1

    def order(key: K) -> tuple[int, int, int]:
        h = hash_map_spread(hash_of(key) & 0xFFFFFFFF)
        signed = h - (1 << 32) if h & 0x80000000 else h
        return h & (capacity - 1), signed, seen[key]

    return sorted(seen, key=order)


def topic_partition_hash(topic: str, partition: int) -> int:
    """Kafka's ``TopicPartition.hashCode`` (``31 * (31 + partition) + topic.hashCode()``, Java ``int``
    arithmetic), as an unsigned 32-bit value."""
    return (31 * (31 + partition) + java_string_hash(topic)) & 0xFFFFFFFF


def _scala_improve(h: int) -> int:
    """``scala.collection.Hashing.improve`` (2.13) on an unsigned 32-bit value: the hash an immutable ``HashSet``
    files an element by."""
    m = 0xFFFFFFFF
    h = (h + (~(h << 9) & m)) & m
    h ^= h >> 14
    h = (h + (h << 4)) & m
    return h ^ (h >> 10)


def scala_immutable_hash_set_order(keys: Iterable[K], hash_of: Callable[[K], int]) -> list[K]:
    """The distinct ``keys`` in the iteration order of a Scala 2.13 immutable ``HashSet`` holding them (a set of
    more than four elements, or one a ``HashSet`` was filtered or partitioned into): a CHAMP trie over the
    improved hash (`_scala_improve` of ``hash_of``, the key's ``##``), five bits a level from the lowest. A node
    holds as data the keys alone in their 5-bit slot, and a sub-node for a slot shared by several; the iterator
    gives a node's data by slot, then each sub-node's, depth first, by slot (``ChampBaseIterator``). The trie is
    canonical (a builder's, or a filter's, result), so only the set decides the order, except among keys of one
    full 32-bit hash, which keep insertion order (a collision node). Checked against scala-library 2.13.18."""
    distinct = list(dict.fromkeys(keys))
    hashed = [(key, _scala_improve(hash_of(key) & 0xFFFFFFFF)) for key in distinct]

    def walk(entries: list[tuple[K, int]], shift: int) -> list[K]:
        if shift >= 32:
            return [key for key, _ in entries]
        slots: dict[int, list[tuple[K, int]]] = {}
        for entry in entries:
            slots.setdefault((entry[1] >> shift) & 31, []).append(entry)
        ordered = sorted(slots.items())
        out = [group[0][0] for _, group in ordered if len(group) == 1]
        for _, group in ordered:
            if len(group) > 1:
                out += walk(group, shift + 5)
        return out

    return walk(hashed, 0)
