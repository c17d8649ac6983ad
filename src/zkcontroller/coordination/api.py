"""The coordination store API: ZooKeeper's data model and semantics, independent of any backend.

Everything above this layer (Kafka's znode model, the controller, brokers, the simulator) talks to a
`CoordinationSession`: one ZooKeeper session with asynchronous operations. Each call is an ``await`` point,
which is what lets the simulator interleave other actors in the middle of a long controller event, and what
lets the ZooKeeper backend pipeline many requests on one connection (``asyncio.gather``).

Watches are one-shot callables, fired with a `WatchedEvent` on the session's event loop, following
ZooKeeper's trigger rules (see `embedded` for the exact table). Session state changes go to session
listeners. When the connection drops or the session expires, every armed watcher gets one session event
(type NONE, state DISCONNECTED or EXPIRED) and is disarmed: after CONNECTED comes back, re-read to re-arm.
That is kazoo's behaviour (ZooKeeper's Java client would re-arm them itself), and both backends follow it so
that callers are written once. Closing a session only tells its listeners.
"""

from __future__ import annotations

import abc
import contextlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from zkcontroller.coordination.errors import BadArgumentsError, ErrorCode, NoNodeError, ZkError, error_for_code
from zkcontroller.runtime.tasks import run_workers

ANY_VERSION = -1
"""Expected version meaning "unconditional" for set/delete (ZooKeeper's -1)."""

SEQUENCE_DIGITS = 10


class CreateMode(Enum):
    """ZooKeeper's creation modes (TTL and container nodes are not used by Kafka and not offered)."""

    PERSISTENT = "persistent"
    EPHEMERAL = "ephemeral"
    PERSISTENT_SEQUENTIAL = "persistent_sequential"
    EPHEMERAL_SEQUENTIAL = "ephemeral_sequential"

    @property
    def ephemeral(self) -> bool:
        return self in (CreateMode.EPHEMERAL, CreateMode.EPHEMERAL_SEQUENTIAL)

    @property
    def sequential(self) -> bool:
        return self in (CreateMode.PERSISTENT_SEQUENTIAL, CreateMode.EPHEMERAL_SEQUENTIAL)

    @classmethod
    def of(cls, *, ephemeral: bool = False, sequential: bool = False) -> CreateMode:
        if ephemeral:
            return cls.EPHEMERAL_SEQUENTIAL if sequential else cls.EPHEMERAL
        return cls.PERSISTENT_SEQUENTIAL if sequential else cls.PERSISTENT


class Stat(NamedTuple):
    """ZooKeeper's node metadata, field for field. Times are milliseconds since the epoch of the clock.

    A NamedTuple, not a frozen dataclass: one is built per node written or read (20,000 per broker failure),
    and a tuple is built in C (0.3 µs against 1.4 µs for the dataclass's eleven ``object.__setattr__``)."""

    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    data_length: int
    num_children: int
    pzxid: int


class EventType(Enum):
    NONE = -1  # a session state change, not about a node
    NODE_CREATED = 1
    NODE_DELETED = 2
    NODE_DATA_CHANGED = 3
    NODE_CHILDREN_CHANGED = 4


class SessionState(Enum):
    """The session states a client can observe (ZooKeeper's ``KeeperState`` subset Kafka reacts to)."""

    CONNECTED = "SyncConnected"
    DISCONNECTED = "Disconnected"
    EXPIRED = "Expired"
    AUTH_FAILED = "AuthFailed"
    CLOSED = "Closed"


@dataclass(frozen=True, slots=True)
class WatchedEvent:
    type: EventType
    state: SessionState
    path: str | None


Watcher = Callable[[WatchedEvent], None]
SessionListener = Callable[[SessionState], None]


# ---------------------------------------------------------------------------------------------- multi ops


@dataclass(frozen=True, slots=True)
class CreateOp:
    path: str
    data: bytes | None = b""
    mode: CreateMode = CreateMode.PERSISTENT


@dataclass(frozen=True, slots=True)
class DeleteOp:
    path: str
    version: int = ANY_VERSION


@dataclass(frozen=True, slots=True)
class SetDataOp:
    path: str
    data: bytes | None
    version: int = ANY_VERSION


@dataclass(frozen=True, slots=True)
class CheckOp:
    path: str
    version: int


Op = CreateOp | DeleteOp | SetDataOp | CheckOp


@dataclass(frozen=True, slots=True)
class CreateResult:
    path: str


@dataclass(frozen=True, slots=True)
class DeleteResult:
    pass


@dataclass(frozen=True, slots=True)
class SetDataResult:
    stat: Stat


@dataclass(frozen=True, slots=True)
class CheckResult:
    pass


@dataclass(frozen=True, slots=True)
class ErrorResult:
    """A failed multi's per-op outcome: the failing op's code; ``OK`` for ops rolled back before it,
    ``RUNTIME_INCONSISTENCY`` for ops after it (ZooKeeper's convention)."""

    code: ErrorCode

    def error(self, path: str | None = None) -> ZkError:
        return error_for_code(self.code, path)


OpResult = CreateResult | DeleteResult | SetDataResult | CheckResult | ErrorResult


@dataclass(frozen=True, slots=True)
class MultiResult:
    """The outcome of `multi`: one result per op, all successes or all `ErrorResult`."""

    results: tuple[OpResult, ...]

    @property
    def ok(self) -> bool:
        return not any(isinstance(r, ErrorResult) for r in self.results)

    @property
    def code(self) -> ErrorCode:
        """The overall code: the first real error, as ZooKeeper reports for the whole multi."""
        for r in self.results:
            if isinstance(r, ErrorResult) and r.code not in (ErrorCode.OK, ErrorCode.RUNTIME_INCONSISTENCY):
                return r.code
        return ErrorCode.OK

    def failed_index(self) -> int | None:
        for i, r in enumerate(self.results):
            if isinstance(r, ErrorResult) and r.code not in (ErrorCode.OK, ErrorCode.RUNTIME_INCONSISTENCY):
                return i
        return None


def rolled_back_results(n_ops: int, failed_index: int, code: ErrorCode) -> tuple[ErrorResult, ...]:
    """Per-op results of a multi whose op ``failed_index`` failed with ``code``."""
    return tuple(
        ErrorResult(
            ErrorCode.OK
            if i < failed_index
            else code
            if i == failed_index
            else ErrorCode.RUNTIME_INCONSISTENCY
        )
        for i in range(n_ops)
    )


# ---------------------------------------------------------------------------------------------- paths


def validate_path(path: str, *, sequential: bool = False) -> str:
    """Reject paths ZooKeeper rejects (``PathUtils.validatePath``), with the same reasons."""
    if type(path) is str and _PLAIN_PATH.fullmatch(path):  # the paths Kafka's layout uses: one regex, in C
        return path
    return check_path_rules(path, sequential=sequential)


def check_path_rules(path: str, *, sequential: bool = False) -> str:
    """`validate_path` rule by rule, for any path (the plain-path shortcut agrees with it: property-tested)."""
    if not isinstance(path, str) or not path:
        raise BadArgumentsError(repr(path), "path must be a non-empty string")
    if path[0] != "/":
        raise BadArgumentsError(path, "path must start with /")
    if len(path) == 1:
        return path
    if path.endswith("/") and not sequential:
        raise BadArgumentsError(path, "path must not end with /")
    for part in path[1:].split("/")[: -1 if sequential and path.endswith("/") else None]:
        if part == "":
            raise BadArgumentsError(path, "empty node name")
        if part in (".", ".."):
            raise BadArgumentsError(path, "relative paths not allowed")
    if _INVALID_CHARS.search(path):
        raise BadArgumentsError(path, "invalid character in path")
    return path


_PLAIN_PATH = re.compile(r"(?:/[A-Za-z0-9_\-][A-Za-z0-9_.\-]*)+")
"""Paths that pass every rule below: slash-separated names of ASCII letters, digits, ``_``, ``-`` and ``.`` that
do not start with a dot (so never ``.`` or ``..``), no empty name, no trailing slash."""

_INVALID_CHARS = re.compile("[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]")
"""Characters ZooKeeper's ``PathUtils`` refuses in a path."""


def parent_of(path: str) -> str:
    idx = path.rfind("/")
    return "/" if idx <= 0 else path[:idx]


def join(parent: str, child: str) -> str:
    return f"/{child}" if parent == "/" else f"{parent}/{child}"


def sequence_suffix(counter: int) -> str:
    """ZooKeeper's sequential-node suffix: the counter, 10 digits, zero padded."""
    return f"{counter:0{SEQUENCE_DIGITS}d}"


# ---------------------------------------------------------------------------------------------- the session


class CoordinationSession(abc.ABC):
    """One ZooKeeper session. All operations are coroutines; see the module docstring."""

    @property
    @abc.abstractmethod
    def session_id(self) -> int: ...

    @property
    @abc.abstractmethod
    def session_password(self) -> bytes:
        """With `session_id`, what ZooKeeper needs to resume (or deliberately take over) this session."""

    @property
    @abc.abstractmethod
    def session_timeout_ms(self) -> int: ...

    @property
    @abc.abstractmethod
    def state(self) -> SessionState: ...

    @abc.abstractmethod
    async def create(self, path: str, data: bytes | None = b"", mode: CreateMode = CreateMode.PERSISTENT) -> str:
        """Create a node; returns the actual path (with the sequence suffix for sequential modes). ``data`` None
        is ZooKeeper's null data (what Kafka's ``createRecursive`` writes), which reads back as None, not b""."""

    @abc.abstractmethod
    async def get_data(self, path: str, watch: Watcher | None = None) -> tuple[bytes | None, Stat]:
        """Read a node; ``watch`` fires once on its next data change or deletion.

        Data None is a node with null data (ZooKeeper keeps null apart from empty; Kafka's ``getDataAndStat``
        reads it as ``None``, as if absent, where empty data goes to the decoder)."""

    async def get_data_many(
        self, paths: Sequence[str], watch: Watcher | None = None, *, max_in_flight: int = 10
    ) -> list[tuple[bytes | None, Stat] | None]:
        """`get_data` of many nodes, in order; None where a node does not exist (no watch armed there), and
        ``(None, stat)`` where it exists with null data.

        This default pipelines single reads, up to ``max_in_flight`` outstanding (Kafka's
        ``zookeeper.max.in.flight.requests``); a backend that can answer a batch at once overrides it. Any
        error other than a missing node cancels the remaining reads and propagates as itself.
        """
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        results: list[tuple[bytes | None, Stat] | None] = [None] * len(paths)
        next_index = iter(range(len(paths)))

        async def worker() -> None:
            for i in next_index:
                with contextlib.suppress(NoNodeError):
                    results[i] = await self.get_data(paths[i], watch)

        await run_workers(min(max_in_flight, len(paths)), worker)
        return results

    @abc.abstractmethod
    async def exists(self, path: str, watch: Watcher | None = None) -> Stat | None:
        """Stat of a node or None; ``watch`` fires once on creation, data change or deletion."""

    @abc.abstractmethod
    async def get_children(self, path: str, watch: Watcher | None = None) -> list[str]:
        """Child names (unordered, as ZooKeeper); ``watch`` fires once on a child change or deletion."""

    @abc.abstractmethod
    async def set_data(self, path: str, data: bytes | None, version: int = ANY_VERSION) -> Stat:
        """Replace a node's data if its version matches (``ANY_VERSION`` for unconditional); None sets null."""

    @abc.abstractmethod
    async def delete(self, path: str, version: int = ANY_VERSION) -> None:
        """Delete a childless node if its version matches."""

    @abc.abstractmethod
    async def multi(self, ops: Sequence[Op]) -> MultiResult:
        """Apply all ops atomically or none; never raises for an op's failure (see `MultiResult`)."""

    @abc.abstractmethod
    def add_session_listener(self, listener: SessionListener) -> None:
        """Call ``listener`` on the session's event loop for every session state change."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Close the session; its ephemeral nodes go away at once."""

    # ---- conveniences built only on the primitives above, so both backends share them

    async def ensure_path(self, path: str) -> None:
        """Create ``path`` and any missing ancestors as persistent nodes with null data, as Kafka's
        ``makeSurePersistentPathExists``/``createRecursive`` do (``zkCli.sh get`` shows ``null``; a Kafka broker
        reads ``/latest_producer_id_block`` holding null as "no block yet", but empty data as a bad block)."""
        validate_path(path)
        if path == "/":
            return
        parts = path[1:].split("/")
        for i in range(1, len(parts) + 1):
            prefix = "/" + "/".join(parts[:i])
            if i < len(parts) and await self.exists(prefix) is not None:
                continue
            try:
                await self.create(prefix, None)
            except ZkError as e:
                if e.code != ErrorCode.NODE_EXISTS:
                    raise

    async def delete_recursive(self, path: str) -> None:
        """Delete ``path`` and everything below it (children listed, then deleted bottom-up)."""
        try:
            children = await self.get_children(path)
        except ZkError as e:
            if e.code == ErrorCode.NO_NODE:
                return
            raise
        for child in sorted(children):
            await self.delete_recursive(join(path, child))
        try:
            await self.delete(path)
        except ZkError as e:
            if e.code != ErrorCode.NO_NODE:
                raise


class CheckedOps(tuple[Op, ...]):
    """Ops whose paths are already known to pass `validate_path`, built from parts checked once (a broker
    failure's 20,000 partition-state paths are built from a few dozen validated topic prefixes and integer
    partitions: `zk.write_ops.checked_partition_state_paths`). `check_multi_ops` passes them on as they are, where
    it spent ~0.5 µs a path on the regex and the call. Only code that has made that check builds one; anything
    else goes to `multi` as a plain sequence and is validated there."""

    __slots__ = ()


def check_multi_ops(ops: Iterable[Op]) -> Sequence[Op]:
    """Validate every op's path before anything is sent, so a bad argument never half-applies (`CheckedOps`
    were checked when they were built)."""
    if type(ops) is CheckedOps:
        return ops
    out = list(ops)
    for op in out:
        validate_path(op.path, sequential=isinstance(op, CreateOp) and op.mode.sequential)
    return out
