"""Hypothesis: the embedded store against a plain dict model, over random ops, multis and session ends. Data is
null (None: ZooKeeper's null, as ``zkCli.sh create /x`` writes) as well as bytes, empty ones included: the two
stay apart, and a null node's ``dataLength`` is 0."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CreateMode,
    CreateOp,
    DeleteOp,
    Op,
    SetDataOp,
    parent_of,
)
from zkcontroller.coordination.embedded import EmbeddedServer
from zkcontroller.coordination.errors import ErrorCode, ZkError

NAMES = st.sampled_from(["a", "b", "c"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map(lambda parts: "/" + "/".join(parts))
DATA = st.one_of(st.none(), st.binary(max_size=8))
VERSIONS = st.sampled_from([ANY_VERSION, 0, 1, 2])


@dataclass
class ModelNode:
    data: bytes | None
    version: int
    owner: int


class Model:
    """What ZooKeeper promises, stated as simply as possible."""

    def __init__(self) -> None:
        self.nodes: dict[str, ModelNode] = {}

    def exists(self, path: str) -> bool:
        return path == "/" or path in self.nodes

    def children(self, path: str) -> list[str]:
        return [p for p in self.nodes if parent_of(p) == path]

    def apply(self, op: Op, session: int) -> ErrorCode:
        """Apply one op, returning its result code (OK when applied)."""
        node = self.nodes.get(op.path)
        if isinstance(op, CreateOp):
            parent = parent_of(op.path)
            if not self.exists(parent):
                return ErrorCode.NO_NODE
            if parent != "/" and self.nodes[parent].owner:
                return ErrorCode.NO_CHILDREN_FOR_EPHEMERALS
            if node is not None:
                return ErrorCode.NODE_EXISTS
            self.nodes[op.path] = ModelNode(op.data, 0, session if op.mode.ephemeral else 0)
            return ErrorCode.OK
        if node is None:
            return ErrorCode.NO_NODE
        if op.version not in (ANY_VERSION, node.version):
            return ErrorCode.BAD_VERSION
        if isinstance(op, DeleteOp):
            if self.children(op.path):
                return ErrorCode.NOT_EMPTY
            del self.nodes[op.path]
        elif isinstance(op, SetDataOp):
            node.data, node.version = op.data, node.version + 1
        return ErrorCode.OK


def op_strategy() -> st.SearchStrategy[Op]:
    return st.one_of(
        st.builds(CreateOp, PATHS, DATA, st.sampled_from([CreateMode.PERSISTENT, CreateMode.EPHEMERAL])),
        st.builds(DeleteOp, PATHS, VERSIONS),
        st.builds(SetDataOp, PATHS, DATA, VERSIONS),
    )


class EmbeddedStoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 1_000
        self.server = EmbeddedServer(lambda: self.now)
        self.model = Model()
        self.sessions: list[int] = [self._open()]

    def _open(self) -> int:
        sid, _ = self.server.open_session(10_000, lambda delivery: None)
        return sid

    @rule(op=op_strategy(), which=st.integers(0, 3))
    def single_op(self, op: Op, which: int) -> None:
        session = self.sessions[which % len(self.sessions)]
        expected = self.model.apply(op, session)
        try:
            self.server.single(session, op)
            actual = ErrorCode.OK
        except ZkError as e:
            actual = e.code
        assert actual is expected, (op, actual, expected)

    @rule(ops=st.lists(op_strategy(), min_size=1, max_size=4), which=st.integers(0, 3))
    def multi(self, ops: list[Op], which: int) -> None:
        session = self.sessions[which % len(self.sessions)]
        before = {p: ModelNode(n.data, n.version, n.owner) for p, n in self.model.nodes.items()}
        codes = [self.model.apply(op, session) for op in ops]
        failed = next((i for i, c in enumerate(codes) if c is not ErrorCode.OK), None)
        if failed is not None:
            self.model.nodes = before  # all or nothing
        result = self.server.multi(session, ops)
        assert result.failed_index() == failed
        if failed is not None:
            assert result.code is codes[failed]

    @rule()
    def open_session(self) -> None:
        self.sessions.append(self._open())

    @precondition(lambda self: len(self.sessions) > 1)
    @rule(which=st.integers(0, 3), expire=st.booleans())
    def end_session(self, which: int, expire: bool) -> None:
        session = self.sessions.pop(which % len(self.sessions))
        (self.server.expire_session if expire else self.server.close_session)(session)
        self.model.nodes = {p: n for p, n in self.model.nodes.items() if n.owner != session}

    @precondition(lambda self: len(self.sessions) > 1)
    @rule(which=st.integers(0, 3))
    def time_out_while_disconnected(self, which: int) -> None:
        session = self.sessions.pop(which % len(self.sessions))
        self.server.disconnect(session)
        self.now += 10_000
        self.server.tick()
        self.model.nodes = {p: n for p, n in self.model.nodes.items() if n.owner != session}

    @invariant()
    def tree_matches_model(self) -> None:
        dump = self.server.dump()
        assert sorted(p for p in dump if p != "/") == sorted(self.model.nodes)
        session = self.sessions[0]
        for path, node in self.model.nodes.items():
            data, stat = self.server.get_data(session, path, None)
            assert data == node.data and (data is None) == (node.data is None) and stat.version == node.version
            assert stat.data_length == len(node.data or b"")
            assert stat.ephemeral_owner == node.owner
            assert stat.num_children == len(self.model.children(path))


EmbeddedStoreMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestEmbeddedStore = EmbeddedStoreMachine.TestCase
