"""The znode tree of the embedded store: nodes, stats, and one transaction's mutations with undo.

Kept apart from sessions and watches so the tree's rules (parents, ephemerals, versions, sequence
counters) can be read, and property-tested, on their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CreateMode,
    Stat,
    parent_of,
    sequence_suffix,
)
from zkcontroller.coordination.errors import (
    BadArgumentsError,
    BadVersionError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
)


@dataclass(slots=True)
class Node:
    data: bytes | None
    """None is ZooKeeper's null data, kept apart from b"" (both have ``data_length`` 0)."""
    czxid: int
    ctime: int
    mzxid: int
    mtime: int
    pzxid: int
    ephemeral_owner: int = 0
    version: int = 0
    cversion: int = 0
    aversion: int = 0
    child_creates: int = 0  # the sequential-name counter (see `Transaction.create`)
    children: set[str] = field(default_factory=set)
    cached_stat: Stat | None = field(default=None, compare=False, repr=False)
    """The last `stat()`, shared until a mutation below clears it: bulk reads of unchanged nodes (a
    controller failover reads 100k partition states) then build no `Stat` at all. Every writer of a field
    the stat shows sets this to None."""

    def stat(self) -> Stat:
        cached = self.cached_stat
        if cached is None:
            cached = self.cached_stat = Stat(
                self.czxid, self.mzxid, self.ctime, self.mtime, self.version, self.cversion, self.aversion,
                self.ephemeral_owner, 0 if self.data is None else len(self.data), len(self.children), self.pzxid,
            )
        return cached


class Change(NamedTuple):
    """One committed mutation, as the watch manager needs to see it (a NamedTuple: one per node written, built
    in a fraction of a frozen dataclass's time)."""

    kind: str  # "created" | "deleted" | "changed"
    path: str


class Transaction:
    """Mutations under one zxid. Each step records its undo; `rollback` restores the tree exactly. The undo
    closures never hold the transaction, so a committed one is freed by reference counting at once: a cycle per
    transaction left ~12 objects per znode written to the cyclic collector (1.2 million after creating 50,000
    partitions, one 1.5-4 s pass to free them)."""

    def __init__(self, tree: Tree, zxid: int, now_ms: int) -> None:
        self.tree = tree
        self.zxid = zxid
        self.now_ms = now_ms
        self.changes: list[Change] = []
        self._undo: list[Callable[[], None]] = []

    def create(self, path: str, data: bytes | None, mode: CreateMode, owner: int) -> str:
        nodes = self.tree.nodes
        parent_path = parent_of(path)  # also right for a sequential "/a/" (parent "/a")
        parent = nodes.get(parent_path)
        if parent is None:
            raise NoNodeError(path)
        if parent.ephemeral_owner:
            raise NoChildrenForEphemeralsError(path)
        if mode.sequential:
            # ZooKeeper 3.8 numbers sequential children by the parent's count of child *creations*: its
            # cversion counts deletes too, but the server's pending parent record that supplies the
            # number does not (measured against a real 3.8 server; pinned by the contract suite).
            path = path + sequence_suffix(parent.child_creates)
        if path == "/" or path in nodes:
            raise NodeExistsError(path)
        name = path[len(parent_path) + 1 :] if parent_path != "/" else path[1:]
        node = Node(
            data=data,
            czxid=self.zxid,
            ctime=self.now_ms,
            mzxid=self.zxid,
            mtime=self.now_ms,
            pzxid=self.zxid,
            ephemeral_owner=owner if mode.ephemeral else 0,
        )
        old_parent = (parent.cversion, parent.pzxid, parent.child_creates)
        nodes[path] = node
        parent.children.add(name)
        parent.child_creates += 1
        parent.cversion += 1
        parent.pzxid = self.zxid
        parent.cached_stat = None
        ephemerals = self.tree.ephemerals
        if node.ephemeral_owner:
            ephemerals.setdefault(owner, set()).add(path)

        def undo() -> None:  # captures no `self`: a closure holding its transaction made each one cyclic garbage
            del nodes[path]
            parent.children.discard(name)
            parent.cversion, parent.pzxid, parent.child_creates = old_parent
            parent.cached_stat = None
            if node.ephemeral_owner:
                ephemerals.get(owner, set()).discard(path)

        self._undo.append(undo)
        self.changes.append(Change("created", path))
        return path

    def delete(self, path: str, version: int) -> None:
        if path == "/":
            raise BadArgumentsError(path, "cannot delete the root")
        nodes = self.tree.nodes
        node = self._existing(path, version)
        if node.children:
            raise NotEmptyError(path)
        parent_path = parent_of(path)
        parent = nodes[parent_path]
        name = path.rsplit("/", 1)[1]
        old_parent = (parent.cversion, parent.pzxid)
        del nodes[path]
        parent.children.discard(name)
        parent.cversion += 1
        parent.pzxid = self.zxid
        parent.cached_stat = None
        owner = node.ephemeral_owner
        ephemerals = self.tree.ephemerals
        if owner:
            ephemerals.get(owner, set()).discard(path)

        def undo() -> None:  # no `self` here either (see `create`)
            nodes[path] = node
            parent.children.add(name)
            parent.cversion, parent.pzxid = old_parent
            parent.cached_stat = None
            if owner:
                ephemerals.setdefault(owner, set()).add(path)

        self._undo.append(undo)
        self.changes.append(Change("deleted", path))

    def set_data(self, path: str, data: bytes | None, version: int) -> Stat:
        node = self._existing(path, version)
        old = (node.data, node.version, node.mzxid, node.mtime)
        node.data = data
        node.version += 1
        node.mzxid = self.zxid
        node.mtime = self.now_ms
        node.cached_stat = None

        def undo() -> None:
            node.data, node.version, node.mzxid, node.mtime = old
            node.cached_stat = None

        self._undo.append(undo)
        self.changes.append(Change("changed", path))
        return node.stat()

    def check(self, path: str, version: int) -> None:
        self._existing(path, version)

    def rollback(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()
        self.changes.clear()

    def _existing(self, path: str, version: int) -> Node:
        node = self.tree.nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        if version != ANY_VERSION and version != node.version:
            raise BadVersionError(path)
        return node


class Tree:
    """The znode tree: a flat path → node map (children kept as names on each parent)."""

    def __init__(self, now_ms: int = 0) -> None:
        root = Node(data=b"", czxid=0, ctime=now_ms, mzxid=0, mtime=now_ms, pzxid=0)
        self.nodes: dict[str, Node] = {"/": root}
        self.ephemerals: dict[int, set[str]] = {}

    def get(self, path: str) -> Node:
        node = self.nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        return node

    def children(self, path: str) -> list[str]:
        return sorted(self.get(path).children)
