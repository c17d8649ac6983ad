"""Scala collections as Kafka's log lines print them (their ``toString``), for lines that must read as Kafka's.

Kafka 2.8 is built with Scala 2.13: an immutable ``Map`` of up to four entries is a Map1–Map4 (printed
``Map(..)``, in insertion order), a larger one a ``HashMap`` (printed so, in its hash trie's order, which
`scala_map` does not reproduce: it sorts by key). Sets, immutable and mutable, are `zkcontroller.scala_sets`'
(in Scala's hash order). A Java list seen through ``asScala`` prints ``Buffer(..)`` (in 2.12 too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_SMALL = 4
"""The largest immutable Map Scala keeps as a Map4 rather than a hash trie."""


def scala_collection(class_name: str, items: Iterable[object]) -> str:
    """Every Scala collection's ``toString``: its class name, then its elements joined by ``", "``."""
    return f"{class_name}({', '.join(str(i) for i in items)})"


def scala_buffer(items: Iterable[object]) -> str:
    """A ``java.util.List`` through ``asScala`` (a ``JListWrapper``, a ``mutable.Buffer``): ``Buffer(4, 5)``."""
    return scala_collection("Buffer", items)


def scala_map(entries: Mapping[Any, str], built_from: int | None = None) -> str:
    """An immutable ``Map`` whose values are already rendered: ``Map(k -> v)``, in ``entries``' order.

    ``built_from``: the size of the map ``entries`` was filtered or partitioned out of. A result keeps its
    source's kind, so a part of a ``HashMap`` (more than four entries) prints ``HashMap(..)`` even when small;
    a hash map's entries are printed sorted by key."""
    size = len(entries) if built_from is None else built_from
    items = entries.items() if size <= _SMALL else sorted(entries.items(), key=lambda kv: kv[0])
    return scala_collection("Map" if size <= _SMALL else "HashMap", (f"{k} -> {v}" for k, v in items))
