"""The order Jackson writes a Scala 2.13 map in, for the znodes Kafka 2.8 builds as one (``ZkData``): a
``mutable.Map`` is a ``HashMap`` (`java_hash.scala_hash_order`); an immutable ``Map`` of up to four entries keeps
insertion order (Map1–Map4), a larger one is a ``HashMap`` in its hash trie's order
(`java_hash.scala_immutable_hash_set_order`). Keys are strings, hashed as Java's ``String.hashCode``. The result
is a dict in that order, which `json_fields.dumps` writes as it is."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from zkcontroller.java_hash import java_string_hash, scala_hash_order, scala_immutable_hash_set_order


def scala_mutable_map(pairs: Iterable[tuple[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    """``mutable.Map(pairs: _*)`` (or ``+=`` in this order), as Jackson iterates it."""
    values = pairs if isinstance(pairs, dict) else dict(pairs)
    if len(values) < 2:
        return values
    return {key: values[key] for key in _mutable_order(tuple(values))}


def scala_immutable_map(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """``Map(pairs: _*)`` / ``pairs.toMap``, as Jackson iterates it."""
    values = dict(pairs)
    if len(values) <= 4:
        return values
    return {key: values[key] for key in _immutable_order(tuple(values))}


@lru_cache(maxsize=1024)
def _mutable_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    """Cached: a topic znode's partition map has the keys "0".."n-1", the same for every topic of n partitions."""
    return tuple(scala_hash_order(keys, java_string_hash))


@lru_cache(maxsize=256)
def _immutable_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(scala_immutable_hash_set_order(keys, java_string_hash))
