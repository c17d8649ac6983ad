"""Scala 2.13 sets as Kafka 2.8.2's messages print them (``toString``), one renderer per Scala type, so that each
call site states which type the Kafka line it mirrors prints (Kafka 2.8.2 is built with Scala 2.13.5).

- `immutable_set`: a ``Set`` made by ``toSet``, a builder, or a ``filter``/``map``/``--`` of one. Up to four
  elements it is a Set1–Set4, ``Set(..)`` in insertion order; beyond, a ``HashSet(..)`` in its CHAMP trie's order
  (`java_hash.scala_immutable_hash_set_order`). A ``filter``, ``map``, ``partition`` or ``--`` of a ``HashSet`` is
  a ``HashSet`` however small (``built_from``).
- `map_key_set`: the ``keys`` of an immutable ``Map`` (or a ``filter`` of them): Map1–Map4's print ``Set(..)`` in
  insertion order; a ``HashMap``'s (``HashKeySet``) print ``Set(..)`` too, in the trie's order. Anything else
  built from them (``keys ++ other``, typed ``Iterable``) goes through a builder: an `immutable_set` again.
- `mutable_hash_set`: a ``mutable.HashSet`` (``mutable.Set()``, a ``map``/``filter``/``|``/``diff`` of one, a Java
  set's ``asScala.filter``): ``HashSet(..)`` even when empty or small, in its hash table's order
  (`java_hash.scala_hash_order`).

``hash_of`` is the element's ``##``: `int_hash` for an ``Int``, `java_string_hash` for a ``String``,
`topic_partition_key_hash` for a ``TopicPartition``. ``None`` means the order is not reproduced (a case class's
``MurmurHash3`` product hash): the elements print in the order given. Insertion order is the caller's: where
Kafka's comes from something we do not reproduce (ZooKeeper's child order, a map keyed by object identity) the
callers pass a sorted one, so that the line does not depend on Python's string hashing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from functools import lru_cache
from typing import TypeVar

from zkcontroller.java_hash import (
    java_string_hash,
    scala_hash_order,
    scala_immutable_hash_set_order,
)
from zkcontroller.model import TopicPartition

T = TypeVar("T")

_SMALL = 4
"""The largest immutable Set Scala keeps as a Set4 rather than a hash trie."""

__all__ = ["immutable_set", "int_hash", "java_string_hash", "map_key_set", "mutable_hash_set",
           "topic_partition_key_hash"]


def int_hash(value: int) -> int:
    """An ``Int``'s ``##``: itself, as an unsigned 32-bit value."""
    return value & 0xFFFFFFFF


_topic_hash = lru_cache(maxsize=4096)(java_string_hash)
"""A topic's ``hashCode``, kept: a broker's "Removed fetcher" set holds every partition it leads."""


def topic_partition_key_hash(tp: TopicPartition) -> int:
    """``TopicPartition.hashCode`` (``31 * (31 + partition) + topic.hashCode()``, as `topic_partition_hash`)."""
    return (31 * (31 + tp.partition) + _topic_hash(tp.topic)) & 0xFFFFFFFF


def immutable_set(items: Collection[T], hash_of: Callable[[T], int] | None, built_from: int | None = None) -> str:
    """An immutable ``Set`` of the distinct ``items``: ``Set(a, b)`` (insertion order) up to four elements,
    ``HashSet(..)`` (trie order) beyond. ``built_from``: the size of the set ``items`` were filtered, mapped or
    removed from, when that decides the kind (a ``HashSet``'s part is a ``HashSet``; a Set1–Set4's part a smaller
    one). Cheap when small: the controller writes these on its own lines."""
    if (len(items) if built_from is None else built_from) <= _SMALL:
        return f"Set({', '.join(map(str, items))})"
    ordered = items if hash_of is None else scala_immutable_hash_set_order(items, hash_of)
    return f"HashSet({', '.join(map(str, ordered))})"


def map_key_set(keys: Collection[T], hash_of: Callable[[T], int], map_size: int) -> str:
    """An immutable ``Map``'s ``keys`` (or a ``filter``/``filterNot`` of them; distinct), the map holding
    ``map_size`` entries: always ``Set(..)``; in insertion order for a Map1–Map4, in the ``HashMap``'s trie order
    (the same trie as a ``HashSet``'s) beyond."""
    ordered = scala_immutable_hash_set_order(keys, hash_of) if map_size > _SMALL else keys
    return f"Set({', '.join(map(str, ordered))})"


def mutable_hash_set(items: Iterable[T], hash_of: Callable[[T], int]) -> str:
    """A ``mutable.HashSet``, added to in ``items``' order: ``HashSet(..)`` in its table's order. Its ``map``,
    ``filter``, ``|`` and ``diff`` fill a new one from the default table (16) through a builder, so only the
    elements (and, among equal hashes, the order they come in) decide the order."""
    return f"HashSet({', '.join(map(str, scala_hash_order(items, hash_of)))})"
