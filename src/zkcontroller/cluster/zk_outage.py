"""Both cluster prompts' answer to a command that ZooKeeper stopped answering: which verb, at which znode, that
ZooKeeper is unreachable, and whether what the command asked took effect, found out where it can be.

The in-process prompt printed kazoo's CONNECTION_LOSS as it came ("ZooKeeper CONNECTION_LOSS at /brokers/ids:
... (nothing else was done)"), which was not true of a write already sent; the ``--processes`` prompt said a
write "may still take effect", and one kazoo still held did, whenever ZooKeeper came back. What is known is said:
the admin session notes each write a command sends (`WriteRecorder`), so a command that lost the connection
before writing wrote nothing, one whose writes were all answered took effect, and one with a write unanswered is
looked up again once the connection is back (bounded), as a user would with ``describe``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Sequence
from typing import Any

from zkcontroller.coordination.api import (
    CoordinationSession,
    CreateMode,
    MultiResult,
    Op,
    SessionState,
    Stat,
)
from zkcontroller.coordination.delegating import DelegatingSession
from zkcontroller.coordination.errors import ErrorCode, ZkError
from zkcontroller.runtime.poll import poll_until
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

ADMIN_WRITES = frozenset({"create", "delete", "elect"})
"""The verbs whose effect is what the prompt's own session writes (a topic, a deletion mark, an election
request); the broker verbs act through the brokers' sessions, and the rest only read."""

BROKER_VERBS = frozenset({"stop", "start", "kill", "expire", "fail-log-dir"})

OUTCOME_WAIT_S = 3.0
"""How long a lost write's outcome is waited for, the connection back (a server of an ensemble answers within
about a second), before the prompt says it cannot tell yet."""

CONNECTED_POLL_S = 0.05
"""How often that wait looks at the session's state (a field the client's thread sets: no request)."""


def connection_lost(e: BaseException) -> bool:
    """Whether ``e`` is ZooKeeper's CONNECTION_LOSS: the request's answer never came."""
    return isinstance(e, ZkError) and e.code is ErrorCode.CONNECTION_LOSS


class WriteRecorder(DelegatingSession):
    """The prompt's admin session, noting the znodes each command writes and which of those writes are still
    unanswered (sent, then the connection lost, or still held by the client). Reads and the rest are passed
    through (`DelegatingSession`), and `replace` swaps the session under it (the ``--processes`` prompt's, closed to
    drop a held write)."""

    def __init__(self, inner: CoordinationSession) -> None:
        super().__init__(inner)
        self.sent: list[str] = []
        self.unanswered: list[str] = []
        self.applied: list[str] = []
        """Sent and answered with success (not refused, as an existing node's create is)."""

    def begin(self) -> None:
        """A new command: forget the last one's writes."""
        self.sent.clear()
        self.unanswered.clear()
        self.applied.clear()

    def replace(self, inner: CoordinationSession) -> None:
        self.inner = inner

    async def _write(self, written: Sequence[str], call: Awaitable[Any]) -> Any:
        self.sent.extend(written)
        self.unanswered.extend(written)
        try:
            result = await call
        except ZkError as e:
            if not connection_lost(e):  # ZooKeeper answered, with a refusal
                self._answered(written)
            raise
        self._answered(written)
        if not isinstance(result, MultiResult) or result.ok:
            self.applied.extend(written)
        return result

    def _answered(self, written: Sequence[str]) -> None:
        for path in written:
            with contextlib.suppress(ValueError):
                self.unanswered.remove(path)

    async def create(self, path: str, data: bytes | None = b"", mode: CreateMode = CreateMode.PERSISTENT) -> str:
        result: str = await self._write([path], self.inner.create(path, data, mode))
        return result

    async def set_data(self, path: str, data: bytes | None, version: int = -1) -> Stat:
        result: Stat = await self._write([path], self.inner.set_data(path, data, version))
        return result

    async def delete(self, path: str, version: int = -1) -> None:
        await self._write([path], self.inner.delete(path, version))

    async def multi(self, ops: Sequence[Op]) -> MultiResult:
        result: MultiResult = await self._write([op.path for op in ops], self.inner.multi(ops))
        return result

    def __getattr__(self, name: str) -> Any:  # the client's own: hosts, disconnected_for_s
        return getattr(self.inner, name)


def recorded(admin: KafkaZkClient) -> WriteRecorder:
    """``admin``'s session as a `WriteRecorder` (put under it here unless it already is one)."""
    session = admin.session
    if not isinstance(session, WriteRecorder):
        session = WriteRecorder(session)
        admin.replace_session(session)
    return session


async def _connected(session: CoordinationSession, within_s: float) -> bool:
    """Whether the session is connected again within ``within_s``; an expired or closed one never will be."""
    async def settled() -> bool:
        return session.state in (SessionState.CONNECTED, SessionState.EXPIRED, SessionState.CLOSED)

    await poll_until(settled, within_s, CONNECTED_POLL_S)
    return session.state is SessionState.CONNECTED


async def _landed(admin: KafkaZkClient, path: str) -> bool | None:
    """Whether the unanswered write of ``path`` (a create: every write the prompts' verbs send is one) took
    effect, read now: a topic or config znode exists; a deletion mark exists, or its topic is already gone (the
    controller removes both once done); an election request exists (gone: done, or never written: None)."""
    if path.startswith(paths.DELETE_TOPICS + "/"):
        topic = path.rsplit("/", 1)[1]
        return await admin.path_exists(path) or not await admin.path_exists(paths.topic_path(topic))
    if await admin.path_exists(path):
        return True
    return None if path == paths.PREFERRED_REPLICA_ELECTION else False


async def write_outcome(admin: KafkaZkClient, recorder: WriteRecorder, within_s: float) -> bool | None:
    """What became of the command's unanswered writes, looked up once the connection is back within
    ``within_s``: True all took effect, False none did, None not known (not back in time, or not telling)."""
    if not recorder.unanswered:
        return True
    try:
        async with asyncio.timeout(within_s):
            if not await _connected(recorder, within_s):
                return None
            found = {await _landed(admin, path) for path in dict.fromkeys(recorder.unanswered)}
    except (TimeoutError, ZkError):
        return None
    return found.pop() if len(found) == 1 else None


async def outcome_text(verb: str, admin: KafkaZkClient, recorder: WriteRecorder, within_s: float, *,
                       held: bool = False, dropped: bool = False) -> str:
    """Whether ``verb``, cut off by the connection's loss, took effect: what the prompt says after the loss.
    ``held``: its unanswered write may still be held by the client, to be sent when ZooKeeper is back (kazoo keeps
    a request queued while disconnected); ``dropped``: it was held, and the session was closed, so nothing of it
    is sent later (a server that had already received it may still have applied it)."""
    if verb in BROKER_VERBS:
        return "what it did before the loss stands (`status` shows the brokers)"
    if verb not in ADMIN_WRITES:
        return "it changed nothing"
    if not recorder.sent:
        return "it wrote nothing, so it did not take effect (run it again once ZooKeeper answers)"
    unanswered = ", ".join(dict.fromkeys(recorder.unanswered))
    if not recorder.unanswered:
        return ("it took effect: ZooKeeper had taken its writes, only what followed is missing (`describe` shows "
                "the topics once ZooKeeper answers)")
    if verb == "create" and not any(path.startswith(paths.TOPICS + "/") for path in recorder.sent):
        return (f"it did not create the topic: the connection was lost at its config ({unanswered}), before the "
                "topic's own znode was written (run it again: it writes the config anew)")
    if held and not dropped:
        return (f"its write of {unanswered} may still be applied when ZooKeeper is back (the client holds it "
                "until then; `describe` shows whether)")
    applied = list(dict.fromkeys(recorder.applied))
    after = f", after ZooKeeper had taken its write of {', '.join(applied)}" if applied else ""
    landed = None if dropped else await write_outcome(admin, recorder, within_s)
    if landed is True:
        return f"it took effect: ZooKeeper has its write of {unanswered}, read back once the connection returned"
    if landed is False:
        return (f"it did not take effect: its write of {unanswered} never reached ZooKeeper (read back once the "
                f"connection returned){after}; run it again")
    later = "; its session was closed, so nothing of it is sent later" if dropped else ""
    return (f"ZooKeeper may or may not have applied its write of {unanswered} before the connection was lost"
            f"{after}{later} (`describe` shows which once ZooKeeper answers)")


def outage_notice(hosts: str | None, verb: str, error: BaseException) -> str:
    """The start of the line: ZooKeeper (at ``hosts``, the connect string) unreachable, the verb, and the znode
    where its connection was lost."""
    where = f" at {error.path}" if isinstance(error, ZkError) and error.path else ""
    return f"ZooKeeper{f' ({hosts})' if hosts else ''} is not answering: `{verb}` lost its connection{where}"

