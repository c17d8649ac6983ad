"""The ZooKeeper backend: a `CoordinationSession` on a real ZooKeeper server or ensemble, through kazoo.

Requests go out with kazoo's ``*_async`` calls, so ``asyncio.gather`` over many of them pipelines them on
the one connection (bounded by ``max_in_flight``, like Kafka's ``zookeeper.max.in.flight.requests``).
kazoo calls back on its own threads; everything the caller sees (results, watch events, session states) is
handed to the asyncio loop with ``call_soon_threadsafe``.

Two kazoo behaviours this wrapper normalises so both backends agree:

* kazoo silently starts a *new* session after expiry. A `KazooSession` is one session: on expiry it stops its
  client, and every later call raises `SessionExpiredError`.
* kazoo fires a ``DELETED`` event twice at a watcher registered as both data and child watch; ZooKeeper's own
  client fires it once, and so does this wrapper.

Unwatched bulk reads (`get_data_many` without a watch) go out as ZooKeeper >= 3.6's read-only multi
(``multiRead``, see `kazoo_multi_read`): one request per 1,000 reads instead of one per read. The server arms no
watch for reads inside a ``multiRead``, so watched bulk reads keep the pipelined single reads.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import KeeperState
from kazoo.retry import KazooRetry
from kazoo.security import OPEN_ACL_UNSAFE

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CoordinationSession,
    CreateMode,
    MultiResult,
    Op,
    SessionListener,
    SessionState,
    Stat,
    WatchedEvent,
    Watcher,
    check_multi_ops,
    validate_path,
)
from zkcontroller.coordination.errors import (
    ConnectionLossError,
    ErrorCode,
    SessionExpiredError,
    ZkError,
)
from zkcontroller.coordination.kazoo_jute import chrooted
from zkcontroller.coordination.kazoo_multi_read import MULTI_READ_MAX_OPS, MultiRead, read_results
from zkcontroller.coordination.kazoo_multi_write import Multi, encode_acl, multi_results
from zkcontroller.coordination.kazoo_translation import EVENT_TYPES, KEEPER_STATES, to_stat, to_zk_error

log = logging.getLogger(__name__)
client_cnxn_log = logging.getLogger("org.apache.zookeeper.ClientCnxn")
"""ZooKeeper's own client's logger: the session-expiry line is its, as a Kafka broker's server.log shows it."""

SLOW_CONNECT_NOTICE_S = 1.0
"""How long `KazooSession.connect` waits for the connection before telling its ``on_slow`` hook (a command's
"Connecting to ZooKeeper" line): past a normal connect, well before the bound."""


class _Watch:
    """A kazoo watch wrapping a user watcher; equal when the user watchers are, so kazoo de-duplicates."""

    __slots__ = ("fn", "session")

    def __init__(self, session: KazooSession, fn: Watcher) -> None:
        self.session = session
        self.fn = fn

    def __call__(self, event: Any) -> None:
        self.session._dispatch_watch(self.fn, event)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Watch) and other.fn == self.fn

    def __hash__(self) -> int:
        return hash(self.fn)


class KazooSession(CoordinationSession):
    """One ZooKeeper session through kazoo. Build it with `KazooSession.connect`."""

    multi_read_enabled = True
    """Send unwatched bulk reads as ``multiRead``; benchmarks turn it off for the pipelined before-figure."""

    def __init__(self, client: KazooClient, loop: asyncio.AbstractEventLoop, max_in_flight: int) -> None:
        self._client = client
        self._loop = loop
        self._slots = asyncio.Semaphore(max_in_flight)
        self._listeners: list[SessionListener] = []
        self._state = SessionState.CONNECTED
        self._recent: collections.deque[tuple[Any, Watcher]] = collections.deque(maxlen=64)
        session_id, password = client.client_id
        self._session_id: int = session_id
        self._password: bytes = password
        self._timeout_ms = int(client._session_timeout)
        self._stopping: asyncio.Task[None] | None = None
        self._disconnected_at: float | None = None
        self._hosts = ",".join(f"{h}:{p}" for h, p in client.hosts) + (client.chroot or "")
        self._multi_read = self.multi_read_enabled  # until the server answers UNIMPLEMENTED (ZooKeeper < 3.6)
        self._acl = encode_acl(client.default_acl or OPEN_ACL_UNSAFE)
        """What kazoo's ``create`` would send, encoded once for every create inside a `multi`."""
        client.add_listener(self._on_kazoo_state)

    @classmethod
    async def connect(
        cls,
        hosts: str,
        session_timeout_ms: int = 18000,
        *,
        connect_timeout_s: float = 15.0,
        max_in_flight: int = 128,
        client_id: tuple[int, bytes] | None = None,
        on_slow: Callable[[], None] | None = None,
        slow_after_s: float = SLOW_CONNECT_NOTICE_S,
    ) -> KazooSession:
        """Open a session on ``hosts`` (``host:port[,host:port...][/chroot]``).

        ``on_slow`` is called once if the connection is not up after ``slow_after_s``, so a command can say what
        it is waiting for instead of staying silent until the ``connect_timeout_s`` bound (never when that bound
        is no later: the error would come as soon)."""
        client = KazooClient(
            hosts=hosts,
            timeout=session_timeout_ms / 1000,
            client_id=client_id,
            connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0),
            command_retry=None,
        )
        started = _start_in_thread(client, connect_timeout_s)
        starting = asyncio.wrap_future(started)
        try:
            if on_slow is not None and slow_after_s < connect_timeout_s:
                done, _ = await asyncio.wait({starting}, timeout=slow_after_s)
                if not done:
                    on_slow()
            await asyncio.shield(starting)  # a cancelled caller leaves the start running: see below
        except KazooTimeoutError as e:
            await asyncio.to_thread(stop_kazoo_client, client)
            raise ConnectionLossError(hosts, f"cannot connect to ZooKeeper at {hosts}") from e
        except asyncio.CancelledError:
            # Nobody will own this client. A thread cannot be cancelled, so ``client.start`` may still connect;
            # stop the client once it returns, or kazoo's threads and socket outlive the command (Ctrl-C).
            started.add_done_callback(lambda _: _stop_in_thread(client))
            starting.cancel()  # only the loop's view of it (``started`` is running): no unretrieved error later
            raise
        return cls(client, asyncio.get_running_loop(), max_in_flight)

    @property
    def session_id(self) -> int:
        return self._session_id

    @property
    def session_password(self) -> bytes:
        return self._password

    @property
    def session_timeout_ms(self) -> int:
        return self._timeout_ms

    @property
    def state(self) -> SessionState:
        return self._state

    # ------------------------------------------------------------------ requests

    async def _call(self, path: str | None, start: Callable[[], Any]) -> Any:
        if self._state in (SessionState.EXPIRED, SessionState.CLOSED):
            raise SessionExpiredError(path)
        async with self._slots:
            fut = self._loop.create_future()
            try:
                async_result = start()
            except KazooException as e:
                raise to_zk_error(e, path) from e
            async_result.rawlink(lambda r: self._call_soon(lambda _: _settle(fut, r, path), None))
            return await fut

    async def create(self, path: str, data: bytes | None = b"", mode: CreateMode = CreateMode.PERSISTENT) -> str:
        validate_path(path, sequential=mode.sequential)
        return await self._call(
            path,
            lambda: self._client.create_async(path, data, ephemeral=mode.ephemeral, sequence=mode.sequential),
        )

    async def get_data(self, path: str, watch: Watcher | None = None) -> tuple[bytes | None, Stat]:
        validate_path(path)
        data, stat = await self._call(path, lambda: self._client.get_async(path, self._wrap(watch)))
        return data, to_stat(stat)  # None stays None: ZooKeeper's null data, not b""

    async def get_data_many(
        self, paths: Sequence[str], watch: Watcher | None = None, *, max_in_flight: int = 10
    ) -> list[tuple[bytes | None, Stat] | None]:
        """Unwatched: ``multiRead`` batches of up to 1,000, up to ``max_in_flight`` batches outstanding.

        Watched reads (and servers before 3.6) take the pipelined single reads of the base class: ZooKeeper
        drops the watch flag of a read inside a ``multiRead``, so it could not keep the watch promise.
        """
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        if watch is not None or not self._multi_read or not paths:
            return await super().get_data_many(paths, watch, max_in_flight=max_in_flight)
        for path in paths:
            validate_path(path)
        chunks = [paths[i : i + MULTI_READ_MAX_OPS] for i in range(0, len(paths), MULTI_READ_MAX_OPS)]
        try:
            answers = await _gather_bounded([functools.partial(self._read_chunk, c) for c in chunks], max_in_flight)
        except ZkError as e:
            if e.code is not ErrorCode.UNIMPLEMENTED:
                raise
            log.info("ZooKeeper server has no multiRead (before 3.6): pipelining bulk reads")
            self._multi_read = False
            return await super().get_data_many(paths, watch, max_in_flight=max_in_flight)
        return [item for answer in answers for item in answer]

    async def _read_chunk(self, paths: Sequence[str]) -> list[tuple[bytes | None, Stat] | None]:
        chroot = self._client.chroot
        request = MultiRead([chrooted(chroot, p) for p in paths] if chroot else paths)
        raw = await self._call(paths[0], lambda: _submit(self._client, request))
        return read_results(raw, paths)

    async def exists(self, path: str, watch: Watcher | None = None) -> Stat | None:
        validate_path(path)
        stat = await self._call(path, lambda: self._client.exists_async(path, self._wrap(watch)))
        return None if stat is None else to_stat(stat)

    async def get_children(self, path: str, watch: Watcher | None = None) -> list[str]:
        validate_path(path)
        children = await self._call(path, lambda: self._client.get_children_async(path, self._wrap(watch)))
        return sorted(children)

    async def set_data(self, path: str, data: bytes | None, version: int = ANY_VERSION) -> Stat:
        validate_path(path)
        return to_stat(await self._call(path, lambda: self._client.set_async(path, data, version)))

    async def delete(self, path: str, version: int = ANY_VERSION) -> None:
        validate_path(path)
        await self._call(path, lambda: self._client.delete_async(path, version))

    async def multi(self, ops: Sequence[Op]) -> MultiResult:
        checked = check_multi_ops(ops)
        if not checked:
            return MultiResult(())
        request = Multi(checked, self._client.chroot, self._acl)
        raw = await self._call(checked[0].path, lambda: _submit(self._client, request))
        return MultiResult(multi_results(checked, raw))

    # ------------------------------------------------------------------ watches and session states

    def _wrap(self, watch: Watcher | None) -> _Watch | None:
        return None if watch is None else _Watch(self, watch)

    def _dispatch_watch(self, fn: Watcher, event: Any) -> None:
        """On a kazoo thread: de-duplicate, translate, and hand the event to the loop."""
        if self._state is SessionState.CLOSED or any(ev is event and f == fn for ev, f in self._recent):
            return
        self._recent.append((event, fn))
        translated = WatchedEvent(
            EVENT_TYPES[event.type], KEEPER_STATES.get(event.state, SessionState.DISCONNECTED), event.path
        )
        self._call_soon(fn, translated)

    def _on_kazoo_state(self, state: str) -> None:
        """kazoo's connection listener (kazoo thread): CONNECTED, SUSPENDED or LOST."""
        if state == KazooState.CONNECTED:
            new = SessionState.CONNECTED
        elif state == KazooState.SUSPENDED:
            new = SessionState.DISCONNECTED
        else:
            closed = self._client.client_state == KeeperState.CLOSED
            new = SessionState.CLOSED if closed else SessionState.EXPIRED
        self._call_soon(self._set_state, new)

    def _set_state(self, new: SessionState) -> None:
        if self._state in (SessionState.EXPIRED, SessionState.CLOSED) or new is self._state:
            return
        was, self._state = self._state, new
        self._log_connection_change(was, new)
        for listener in list(self._listeners):
            listener(new)
        if new is SessionState.EXPIRED:
            # ZooKeeper's ClientCnxn line (Kafka's ZooKeeperClient then logs "Session expired.", `KafkaServer`)
            client_cnxn_log.info("Unable to reconnect to ZooKeeper service, session 0x%x has expired, closing "
                                 "socket connection", self._session_id)
            self._stopping = self._loop.create_task(asyncio.to_thread(stop_kazoo_client, self._client))

    def _log_connection_change(self, was: SessionState, new: SessionState) -> None:
        """A lost connection and its return, as ZooKeeper's ClientCnxn logs them under Kafka (its ZooKeeperClient
        logs neither): a ZooKeeper outage left no line before the session expired or the outage ended."""
        if new is SessionState.DISCONNECTED:
            self._disconnected_at = time.monotonic()
            client_cnxn_log.warning("Connection to ZooKeeper at %s lost for session 0x%x, closing socket connection "
                                    "and attempting reconnect (the session expires %d ms after the loss)",
                                    self._hosts, self._session_id, self._timeout_ms)
        elif new is SessionState.CONNECTED and was is SessionState.DISCONNECTED and self._disconnected_at is not None:
            lost_ms = int((time.monotonic() - self._disconnected_at) * 1000)
            self._disconnected_at = None
            client_cnxn_log.info("Session establishment complete on server %s, sessionid = 0x%x, after %d ms "
                                 "without a connection", self._server(), self._session_id, lost_ms)

    def _server(self) -> str:
        """The server the connection is on now (``host:port``), else the connect string."""
        with contextlib.suppress(Exception):  # kazoo's internals: the socket may be gone again already
            host, port = self._client._connection._socket.getpeername()[:2]
            return f"{host}:{port}"
        return self._hosts

    @property
    def hosts(self) -> str:
        """The connect string (``host:port[,...][/chroot]``)."""
        return self._hosts

    @property
    def disconnected_for_s(self) -> float | None:
        """How long the connection has been lost (None: connected, or the session is over)."""
        at = self._disconnected_at
        return None if at is None or self._state is not SessionState.DISCONNECTED else time.monotonic() - at

    def _call_soon(self, fn: Callable[[Any], None], arg: object) -> None:
        # RuntimeError: the loop closed between the check and the call; nobody is left to tell.
        with contextlib.suppress(RuntimeError):
            if not self._loop.is_closed():
                self._loop.call_soon_threadsafe(fn, arg)

    def add_session_listener(self, listener: SessionListener) -> None:
        self._listeners.append(listener)

    async def close(self) -> None:
        if self._state is SessionState.CLOSED:
            return
        self._set_state(SessionState.CLOSED)
        self._state = SessionState.CLOSED
        if self._stopping is None:
            self._stopping = self._loop.create_task(asyncio.to_thread(stop_kazoo_client, self._client))
        await self._stopping


async def _gather_bounded(starts: Sequence[Callable[[], Any]], bound: int) -> list[Any]:
    """Run the coroutines ``starts`` make, at most ``bound`` at once, results in order."""
    slots = asyncio.Semaphore(bound)

    async def one(start: Callable[[], Any]) -> Any:
        async with slots:
            return await start()

    return list(await asyncio.gather(*(one(s) for s in starts)))


def _submit(client: KazooClient, request: Any) -> Any:
    """Queue a request kazoo has no public call for (its own ``*_async`` methods do exactly this)."""
    async_result = client.handler.async_result()
    client._call(request, async_result)
    return async_result


def _settle(fut: asyncio.Future[Any], async_result: Any, path: str | None) -> None:
    if fut.done():
        return
    try:
        fut.set_result(async_result.get_nowait())
    except Exception as e:
        fut.set_exception(to_zk_error(e, path))


def _start_in_thread(client: KazooClient, timeout_s: float) -> concurrent.futures.Future[None]:
    """``client.start(timeout_s)`` on a thread of its own, as a future that only that thread settles (so a
    done-callback added when the caller gives up runs exactly when ``start`` returns, whichever comes first)."""
    started: concurrent.futures.Future[None] = concurrent.futures.Future()
    started.set_running_or_notify_cancel()  # from here on nobody can cancel it: it ends when start returns

    def run() -> None:
        try:
            client.start(timeout_s)
        except BaseException as e:
            started.set_exception(e)
        else:
            started.set_result(None)

    threading.Thread(target=run, name="zkcontroller-connect", daemon=True).start()
    return started


def _stop_in_thread(client: KazooClient) -> None:
    """`stop_kazoo_client` without blocking the caller (the event loop, or the thread that ran ``start``)."""
    threading.Thread(target=stop_kazoo_client, args=(client,), name="zkcontroller-disconnect", daemon=True).start()


def stop_kazoo_client(client: KazooClient) -> None:
    """Stop and close a kazoo client, tolerating one whose connection already died.

    kazoo refuses ``close()`` while its connection thread is still winding down after ``stop()``; that
    leaves only sockets for the garbage collector, so it is logged, not raised, in this cleanup path.
    """
    try:
        client.stop()
        client.close()
    except Exception as e:
        log.debug("ignoring error while stopping kazoo client: %s", e)
