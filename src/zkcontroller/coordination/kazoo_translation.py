"""Translation between kazoo's types and the coordination API's: stats, exceptions, events.

Kept apart from `kazoo_store` so the session logic reads without the tables, and so both backends' error
mapping (ZooKeeper's codes onto `coordination.errors`) has one home on the kazoo side.
"""

from __future__ import annotations

from kazoo.exceptions import ConnectionClosedError, ZookeeperError
from kazoo.exceptions import ConnectionLoss as KazooConnectionLoss
from kazoo.exceptions import SessionExpiredError as KazooSessionExpired
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import EventType as KazooEventType
from kazoo.protocol.states import KeeperState, ZnodeStat

from zkcontroller.coordination.api import (
    EventType,
    SessionState,
    Stat,
)
from zkcontroller.coordination.errors import (
    ConnectionLossError,
    OperationTimeoutError,
    SessionExpiredError,
    ZkError,
    error_for_code,
)

EVENT_TYPES = {
    KazooEventType.CREATED: EventType.NODE_CREATED,
    KazooEventType.DELETED: EventType.NODE_DELETED,
    KazooEventType.CHANGED: EventType.NODE_DATA_CHANGED,
    KazooEventType.CHILD: EventType.NODE_CHILDREN_CHANGED,
    KazooEventType.NONE: EventType.NONE,
}
KEEPER_STATES = {
    KeeperState.CONNECTED: SessionState.CONNECTED,
    KeeperState.CONNECTED_RO: SessionState.CONNECTED,
    KeeperState.CONNECTING: SessionState.DISCONNECTED,
    KeeperState.EXPIRED_SESSION: SessionState.EXPIRED,
    KeeperState.AUTH_FAILED: SessionState.AUTH_FAILED,
    KeeperState.CLOSED: SessionState.CLOSED,
}


def to_stat(s: ZnodeStat) -> Stat:
    return Stat(
        czxid=s.czxid,
        mzxid=s.mzxid,
        ctime=s.ctime,
        mtime=s.mtime,
        version=s.version,
        cversion=s.cversion,
        aversion=s.aversion,
        ephemeral_owner=s.ephemeralOwner,
        data_length=s.dataLength,
        num_children=s.numChildren,
        pzxid=s.pzxid,
    )


def to_zk_error(exc: BaseException, path: str | None) -> BaseException:
    """Map kazoo's exceptions onto ours; anything unexpected passes through unchanged."""
    if isinstance(exc, ZkError):
        return exc
    if isinstance(exc, KazooConnectionLoss):
        return ConnectionLossError(path)
    if isinstance(exc, KazooSessionExpired | ConnectionClosedError):
        return SessionExpiredError(path)
    if isinstance(exc, KazooTimeoutError):
        return OperationTimeoutError(path)
    if isinstance(exc, ZookeeperError) and isinstance(getattr(exc, "code", None), int):
        return error_for_code(exc.code, path)
    return exc
