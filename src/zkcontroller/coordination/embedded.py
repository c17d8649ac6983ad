"""The embedded store: ZooKeeper's semantics in-process, with no server, wall clock or global randomness.

`EmbeddedServer` is the synchronous, thread-safe core (tree, zxids, sessions, watches). `EmbeddedSession`
(module `embedded_session`)
is one client session on it with the async `CoordinationSession` API. The simulator drives the same server
on virtual time through the injected ``clock`` and the ``round_trip`` hook; the real runtime passes a wall
clock.

Watch trigger rules (ZooKeeper's ``DataTree`` + client ``ZKWatchManager``):

=================  ====================================================  =====================================
operation          fires on the node's path                               fires on the parent
=================  ====================================================  =====================================
create             data/exists watches: NodeCreated                       child watches: NodeChildrenChanged
delete             data/exists and child watches: NodeDeleted             child watches: NodeChildrenChanged
set_data           data/exists watches: NodeDataChanged                   —
=================  ====================================================  =====================================

Watches are one-shot and de-duplicated per session (one callable registered twice, or as both data and child
watch, fires once per event). ``exists`` arms a watch on a missing node; ``get_data``/``get_children`` on a
missing node raise NoNode and arm nothing. Disconnection and expiry disarm every watch of the session after
handing each watcher one session event; close only tells the session listeners (see `api`).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CheckOp,
    CheckResult,
    CreateOp,
    CreateResult,
    DeleteOp,
    DeleteResult,
    EventType,
    MultiResult,
    Op,
    OpResult,
    SessionListener,
    SessionState,
    SetDataOp,
    SetDataResult,
    Stat,
    WatchedEvent,
    Watcher,
    parent_of,
    rolled_back_results,
)
from zkcontroller.coordination.embedded_tree import Change, Transaction, Tree
from zkcontroller.coordination.errors import (
    BadArgumentsError,
    ConnectionLossError,
    SessionExpiredError,
    ZkError,
    error_for_code,
)

Clock = Callable[[], int]
Delivery = list[tuple[Callable[..., None], object]]
Sink = Callable[[Delivery], None]

MAX_REQUEST_BYTES = 1024 * 1024 - 1
"""ZooKeeper's default ``jute.maxbuffer``: a request carrying more data than this is refused."""

SESSION_ID_BASE = 0x1_0000_0000_0000
"""Embedded session ids count up from here (real ones mix server id and time; only uniqueness matters)."""


@dataclass
class _Session:
    session_id: int
    password: bytes
    timeout_ms: int
    sink: Sink
    state: SessionState = SessionState.CONNECTED
    disconnected_at_ms: int | None = None
    listeners: list[SessionListener] = field(default_factory=list)


class EmbeddedServer:
    """One in-process "ZooKeeper server": a znode tree, a zxid counter, sessions and their watches."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.RLock()
        self._tree = Tree(now_ms=clock())
        self._zxid = 0
        self._next_session = SESSION_ID_BASE
        self._sessions: dict[int, _Session] = {}
        self._expired_while_away: dict[int, _Session] = {}
        # path -> session id -> watchers (dicts keep registration order: deterministic delivery)
        self._data_watches: dict[str, dict[int, dict[Watcher, None]]] = {}
        self._child_watches: dict[str, dict[int, dict[Watcher, None]]] = {}

    # ------------------------------------------------------------------ sessions

    def open_session(self, timeout_ms: int, sink: Sink) -> tuple[int, bytes]:
        with self._lock:
            self._expire_due()
            sid = self._next_session
            self._next_session += 1
            password = hashlib.sha256(f"embedded-session-{sid}".encode()).digest()[:16]
            self._sessions[sid] = _Session(sid, password, timeout_ms, sink)
            return sid, password

    def session_state(self, session_id: int) -> SessionState:
        with self._lock:
            self._expire_due()
            s = self._sessions.get(session_id)
            return SessionState.EXPIRED if s is None else s.state

    def add_listener(self, session_id: int, listener: SessionListener) -> None:
        with self._lock:
            s = self._sessions.get(session_id)
            if s is not None:
                s.listeners.append(listener)

    def close_session(self, session_id: int) -> None:
        """A client's orderly close: ephemerals go, watches go, listeners hear CLOSED."""
        self._end_session(session_id, SessionState.CLOSED)

    def expire_session(self, session_id: int) -> None:
        """Expire a session now, as the server does when it stops hearing from the client."""
        self._end_session(session_id, SessionState.EXPIRED)

    @property
    def clock(self) -> Clock:
        """The clock sessions time out on (a test or the simulator may move it)."""
        return self._clock

    def disconnect(self, session_id: int) -> None:
        """Cut the client off (a network partition or a paused process); the session lives until timeout."""
        with self._lock:
            s = self._sessions.get(session_id)
            if s is None or s.state is not SessionState.CONNECTED:
                return
            s.state = SessionState.DISCONNECTED
            s.disconnected_at_ms = self._clock()
            delivery = self._session_event_delivery(s, SessionState.DISCONNECTED)
            self._drop_watches(session_id)
        s.sink(delivery)

    def reconnect(self, session_id: int) -> None:
        """Heal the client's connection: listeners hear CONNECTED (or, if it timed out meanwhile, EXPIRED)."""
        with self._lock:
            self._expire_due()
            s = self._sessions.get(session_id)
            if s is None:
                expired = self._expired_while_away.pop(session_id, None)
                if expired is not None:
                    expired.sink([(listener, SessionState.EXPIRED) for listener in expired.listeners])
                return
            if s.state is not SessionState.DISCONNECTED:
                return
            s.state = SessionState.CONNECTED
            s.disconnected_at_ms = None
            delivery = self._session_event_delivery(s, SessionState.CONNECTED)
        s.sink(delivery)

    def tick(self) -> None:
        """Expire sessions whose client has been silent longer than their timeout."""
        with self._lock:
            self._expire_due()

    def _expire_due(self) -> None:
        now = self._clock()
        due = [
            s.session_id
            for s in self._sessions.values()
            if s.disconnected_at_ms is not None and now - s.disconnected_at_ms >= s.timeout_ms
        ]
        for sid in due:
            self._end_session(sid, SessionState.EXPIRED)

    def _end_session(self, session_id: int, final: SessionState) -> None:
        with self._lock:
            s = self._sessions.pop(session_id, None)
            if s is None:
                return
            if s.state is SessionState.DISCONNECTED:
                own: Delivery = []  # it learns of the expiry when it reconnects
                self._expired_while_away[session_id] = s
            elif final is SessionState.CLOSED:
                own = [(listener, final) for listener in s.listeners]
            else:
                # A live client learns of expiry as a real one does: its connection drops (watchers hear
                # DISCONNECTED and are disarmed), and the reconnect attempt is told EXPIRED.
                own = self._session_event_delivery(s, SessionState.DISCONNECTED)
                own += [(listener, final) for listener in s.listeners]
            s.state = final
            self._drop_watches(session_id)
            owned = sorted(self._tree.ephemerals.get(session_id, set()))
            deliveries: dict[int, Delivery] = {}
            if owned:
                txn = Transaction(self._tree, self._next_zxid(), self._clock())
                for path in sorted(owned, key=lambda p: (-p.count("/"), p)):
                    txn.delete(path, ANY_VERSION)
                deliveries = self._trigger(txn.changes)
            self._tree.ephemerals.pop(session_id, None)
        s.sink(own)
        self._deliver(deliveries)

    # ------------------------------------------------------------------ reads

    def get_data(self, session_id: int, path: str, watch: Watcher | None) -> tuple[bytes | None, Stat]:
        with self._lock:
            self._live(session_id)
            node = self._tree.get(path)
            if watch is not None:
                self._arm(self._data_watches, path, session_id, watch)
            return node.data, node.stat()

    def get_data_many(
        self, session_id: int, paths: Sequence[str], watch: Watcher | None
    ) -> list[tuple[bytes | None, Stat] | None]:
        """Many `get_data` answered under one lock hold; None (and no watch) for a missing node."""
        with self._lock:
            self._live(session_id)
            nodes = self._tree.nodes
            out: list[tuple[bytes | None, Stat] | None] = []
            for path in paths:
                node = nodes.get(path)
                if node is None:
                    out.append(None)
                    continue
                if watch is not None:
                    self._arm(self._data_watches, path, session_id, watch)
                out.append((node.data, node.stat()))
            return out

    def exists(self, session_id: int, path: str, watch: Watcher | None) -> Stat | None:
        with self._lock:
            self._live(session_id)
            node = self._tree.nodes.get(path)
            if watch is not None:
                self._arm(self._data_watches, path, session_id, watch)
            return None if node is None else node.stat()

    def get_children(self, session_id: int, path: str, watch: Watcher | None) -> list[str]:
        with self._lock:
            self._live(session_id)
            children = self._tree.children(path)
            if watch is not None:
                self._arm(self._child_watches, path, session_id, watch)
            return children

    # ------------------------------------------------------------------ writes

    def multi(self, session_id: int, ops: Sequence[Op]) -> MultiResult:
        """Apply ``ops`` under one zxid, all or nothing."""
        size = sum(len(op.data) for op in ops if isinstance(op, CreateOp | SetDataOp) and op.data is not None)
        if size > MAX_REQUEST_BYTES:
            raise BadArgumentsError(ops[0].path if ops else None, f"request of {size} bytes exceeds 1 MB")
        with self._lock:
            self._live(session_id)
            txn = Transaction(self._tree, self._zxid + 1, self._clock())
            results: list[OpResult] = []
            for i, op in enumerate(ops):
                try:
                    results.append(self._apply(txn, session_id, op))
                except ZkError as e:
                    txn.rollback()
                    return MultiResult(rolled_back_results(len(ops), i, e.code))
            if txn.changes:
                self._zxid += 1
            deliveries = self._trigger(txn.changes)
        self._deliver(deliveries)
        return MultiResult(tuple(results))

    @staticmethod
    def _apply(txn: Transaction, session_id: int, op: Op) -> OpResult:
        if isinstance(op, CreateOp):
            return CreateResult(txn.create(op.path, op.data, op.mode, session_id))
        if isinstance(op, DeleteOp):
            txn.delete(op.path, op.version)
            return DeleteResult()
        if isinstance(op, SetDataOp):
            return SetDataResult(txn.set_data(op.path, op.data, op.version))
        if isinstance(op, CheckOp):
            txn.check(op.path, op.version)
            return CheckResult()
        raise BadArgumentsError(None, f"unknown op {op!r}")

    def single(self, session_id: int, op: Op) -> OpResult:
        """Apply one op, raising its error (plain create/set/delete have no per-op result list)."""
        result = self.multi(session_id, [op])
        first = result.results[0]
        if not result.ok:
            raise error_for_code(result.code, op.path)
        return first

    # ------------------------------------------------------------------ inspection (tests, simulator)

    @property
    def last_zxid(self) -> int:
        return self._zxid

    def dump(self) -> dict[str, bytes | None]:
        """Every path and its data, for invariant checks and debugging."""
        with self._lock:
            return {p: n.data for p, n in sorted(self._tree.nodes.items())}

    def session_password(self, session_id: int) -> bytes:
        with self._lock:
            return self._sessions[session_id].password

    # ------------------------------------------------------------------ internals

    def _next_zxid(self) -> int:
        self._zxid += 1
        return self._zxid

    def _live(self, session_id: int) -> _Session:
        self._expire_due()
        s = self._sessions.get(session_id)
        if s is None:
            raise SessionExpiredError()
        if s.state is SessionState.DISCONNECTED:
            raise ConnectionLossError()
        return s

    @staticmethod
    def _arm(table: dict[str, dict[int, dict[Watcher, None]]], path: str, sid: int, watch: Watcher) -> None:
        table.setdefault(path, {}).setdefault(sid, {})[watch] = None

    def _drop_watches(self, session_id: int) -> None:
        for table in (self._data_watches, self._child_watches):
            for path in [p for p, by_sid in table.items() if session_id in by_sid]:
                del table[path][session_id]
                if not table[path]:
                    del table[path]

    def _trigger(self, changes: list[Change]) -> dict[int, Delivery]:
        """Take the one-shot watches ``changes`` fire; returns deliveries per session, in order."""
        out: dict[int, dict[tuple[Watcher, str, EventType], None]] = {}

        def fire(table: dict[str, dict[int, dict[Watcher, None]]], path: str, etype: EventType) -> None:
            for sid, watchers in table.pop(path, {}).items():
                for w in watchers:
                    out.setdefault(sid, {})[(w, path, etype)] = None

        for ch in changes:
            if ch.kind == "created":
                fire(self._data_watches, ch.path, EventType.NODE_CREATED)
                fire(self._child_watches, parent_of(ch.path), EventType.NODE_CHILDREN_CHANGED)
            elif ch.kind == "deleted":
                fire(self._data_watches, ch.path, EventType.NODE_DELETED)
                fire(self._child_watches, ch.path, EventType.NODE_DELETED)
                fire(self._child_watches, parent_of(ch.path), EventType.NODE_CHILDREN_CHANGED)
            else:
                fire(self._data_watches, ch.path, EventType.NODE_DATA_CHANGED)
        return {
            sid: [(w, WatchedEvent(etype, SessionState.CONNECTED, path)) for (w, path, etype) in fired]
            for sid, fired in out.items()
        }

    def _deliver(self, deliveries: dict[int, Delivery]) -> None:
        for sid, delivery in deliveries.items():
            with self._lock:
                s = self._sessions.get(sid)
            if s is not None:
                s.sink(delivery)

    def _session_event_delivery(self, s: _Session, state: SessionState) -> Delivery:
        event = WatchedEvent(EventType.NONE, state, None)
        watchers: dict[Watcher, None] = {}
        for table in (self._data_watches, self._child_watches):
            for by_sid in table.values():
                watchers.update(by_sid.get(s.session_id, {}))
        delivery: Delivery = [(listener, state) for listener in s.listeners]
        delivery.extend((w, event) for w in watchers)
        return delivery
