"""The order in which Kafka prints a ``java.util.Properties``: `properties_order` (the tools, and the brokers' version 1
config-change line).

``kafka-configs --zookeeper --describe`` prints ``configs.asScala.map(k=v).mkString(",")`` of the Properties that
``ConfigEntityZNode.decode`` fills with ``setProperty`` in the znode's JSON order, so its line follows the
Properties' iteration order. On Java 9 and later a Properties keeps its entries in a ``ConcurrentHashMap`` created
with capacity 8, and iterates that map's table slot by slot, each slot's chain in chain order. This module
replays that map for String keys, as in OpenJDK 11 to 25 (the same code in all of them; checked against
JDK 17 and 25): ``String.hashCode`` over UTF-16 code units, ``spread`` (high half folded into the low, sign bit
cleared), a first table of 16 slots, growth to twice the size once the count reaches three quarters of it,
the resize's split of each chain (nodes before the last run of same-side nodes are re-linked in reverse), a
chain of more than 8 growing the table (``tryPresize``) while it is under 64 slots and becoming a tree bin
(new keys first in its list) beyond that. Java 8's Hashtable-backed Properties iterates differently; Kafka
2.8 runs on Java 8 and 11, and this is the Java 11+ order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from zkcontroller.java_hash import java_string_hash

_HASH_BITS = 0x7FFFFFFF
_TREEIFY_THRESHOLD = 8
_UNTREEIFY_THRESHOLD = 6
_MIN_TREEIFY_CAPACITY = 64
_MAXIMUM_CAPACITY = 1 << 30
_PROPERTIES_INITIAL_CAPACITY = 8
"""``new Properties()`` is ``new ConcurrentHashMap<>(8)``."""


def _spread(h: int) -> int:
    return (h ^ (h >> 16)) & _HASH_BITS


def _table_size_for(c: int) -> int:
    """The smallest power of two at least ``c`` (1 at least), capped as Java caps it."""
    size = 1
    while size < c:
        size <<= 1
    return min(size, _MAXIMUM_CAPACITY)


@dataclass
class _Bin:
    nodes: list[tuple[int, str]]
    """(spread hash, key) in chain order (a tree bin: its ``first`` list order)."""
    tree: bool = False


@dataclass
class _ConcurrentHashMapKeys:
    """The key layout of a single-threaded ``ConcurrentHashMap`` (values play no part in the order)."""

    size_ctl: int
    table: list[_Bin | None] = field(default_factory=list)
    count: int = 0

    @classmethod
    def with_capacity(cls, initial_capacity: int) -> _ConcurrentHashMapKeys:
        # ConcurrentHashMap(int): (long)(1.0 + initialCapacity / 0.75f), then tableSizeFor
        return cls(size_ctl=_table_size_for(int(1.0 + initial_capacity / 0.75)))

    def put(self, key: str) -> None:
        h = _spread(java_string_hash(key))
        if not self.table:  # initTable: sizeCtl slots, then a threshold of three quarters
            n = self.size_ctl
            self.table = [None] * n
            self.size_ctl = n - (n >> 2)
        i = h & (len(self.table) - 1)
        bin_ = self.table[i]
        if bin_ is None:
            self.table[i] = _Bin([(h, key)])
            bin_count = 0
        elif any(k == key for _, k in bin_.nodes):
            return  # a replaced value: no count, no resize
        elif bin_.tree:
            bin_.nodes.insert(0, (h, key))  # putTreeVal links the new node first
            bin_count = 2
        else:
            bin_count = len(bin_.nodes)  # putVal's binCount: the nodes already in the chain
            bin_.nodes.append((h, key))
            if bin_count >= _TREEIFY_THRESHOLD:
                self._treeify_bin(i)
        self.count += 1
        if bin_count >= 0:  # addCount(1, binCount)
            while self.count >= self.size_ctl and len(self.table) < _MAXIMUM_CAPACITY:
                self._transfer()

    def _treeify_bin(self, i: int) -> None:
        n = len(self.table)
        if n < _MIN_TREEIFY_CAPACITY:
            self._try_presize(n << 1)
            return
        bin_ = self.table[i]
        if bin_ is not None:
            bin_.tree = True  # the TreeBin's first list keeps the chain's order

    def _try_presize(self, size: int) -> None:
        c = _MAXIMUM_CAPACITY if size >= _MAXIMUM_CAPACITY >> 1 else _table_size_for(size + (size >> 1) + 1)
        while not (c <= self.size_ctl or len(self.table) >= _MAXIMUM_CAPACITY):
            self._transfer()

    def _transfer(self) -> None:
        n = len(self.table)
        grown: list[_Bin | None] = [None] * (2 * n)
        for i, bin_ in enumerate(self.table):
            if bin_ is None:
                continue
            lo, hi = (_split_tree(bin_, n) if bin_.tree else _split_chain(bin_.nodes, n))
            grown[i], grown[i + n] = lo, hi
        self.table = grown
        self.size_ctl = (n << 1) - (n >> 1)

    def keys(self) -> list[str]:
        return [key for bin_ in self.table if bin_ is not None for _, key in bin_.nodes]


def _split_chain(nodes: list[tuple[int, str]], n: int) -> tuple[_Bin | None, _Bin | None]:
    """transfer's split of a chain: the last run of nodes bound for one side is kept as is; each node before
    it is pushed onto the front of its side's list, so those come out reversed."""
    run_bit = nodes[0][0] & n
    last_run = 0
    for j in range(1, len(nodes)):
        if nodes[j][0] & n != run_bit:
            run_bit, last_run = nodes[j][0] & n, j
    lo = list(nodes[last_run:]) if run_bit == 0 else []
    hi = list(nodes[last_run:]) if run_bit != 0 else []
    for node in nodes[:last_run]:
        (lo if node[0] & n == 0 else hi).insert(0, node)
    return (_Bin(lo) if lo else None), (_Bin(hi) if hi else None)


def _split_tree(bin_: _Bin, n: int) -> tuple[_Bin | None, _Bin | None]:
    """transfer's split of a tree bin: both sides keep the first-list order; a side of 6 or fewer becomes a
    plain chain again."""
    lo = [node for node in bin_.nodes if node[0] & n == 0]
    hi = [node for node in bin_.nodes if node[0] & n != 0]
    return (_Bin(lo, len(lo) > _UNTREEIFY_THRESHOLD) if lo else None,
            _Bin(hi, len(hi) > _UNTREEIFY_THRESHOLD) if hi else None)


def properties_order(keys: Iterable[str]) -> list[str]:
    """The keys, as ``setProperty`` in this order into a ``new Properties()`` iterates them on Java 11+."""
    table = _ConcurrentHashMapKeys.with_capacity(_PROPERTIES_INITIAL_CAPACITY)
    for key in keys:
        table.put(key)
    return table.keys()
