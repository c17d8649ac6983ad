"""ZooKeeper's error codes and the exceptions that carry them.

The numeric codes are ZooKeeper's own (``KeeperException.Code``) so that log lines, per-op `multi` results and
the Kafka-facing layers can speak the same language on both backends.
"""

from __future__ import annotations

from enum import IntEnum


class ErrorCode(IntEnum):
    """ZooKeeper result codes. ``OK`` inside a failed `multi` means "rolled back"."""

    OK = 0
    SYSTEM_ERROR = -1
    RUNTIME_INCONSISTENCY = -2
    DATA_INCONSISTENCY = -3
    CONNECTION_LOSS = -4
    MARSHALLING_ERROR = -5
    UNIMPLEMENTED = -6
    OPERATION_TIMEOUT = -7
    BAD_ARGUMENTS = -8
    API_ERROR = -100
    NO_NODE = -101
    NO_AUTH = -102
    BAD_VERSION = -103
    NO_CHILDREN_FOR_EPHEMERALS = -108
    NODE_EXISTS = -110
    NOT_EMPTY = -111
    SESSION_EXPIRED = -112
    INVALID_CALLBACK = -113
    INVALID_ACL = -114
    AUTH_FAILED = -115
    SESSION_MOVED = -118
    NOT_READ_ONLY = -119


class ZkError(Exception):
    """Base of all coordination-layer errors; ``code`` is ZooKeeper's, ``path`` the znode concerned."""

    code: ErrorCode = ErrorCode.SYSTEM_ERROR

    def __init__(self, path: str | None = None, message: str | None = None) -> None:
        self.path = path
        detail = message or self.code.name
        super().__init__(f"{detail} for {path}" if path else detail)


class RuntimeInconsistencyError(ZkError):
    code = ErrorCode.RUNTIME_INCONSISTENCY


class ConnectionLossError(ZkError):
    code = ErrorCode.CONNECTION_LOSS


class OperationTimeoutError(ZkError):
    code = ErrorCode.OPERATION_TIMEOUT


class BadArgumentsError(ZkError):
    code = ErrorCode.BAD_ARGUMENTS


class NoNodeError(ZkError):
    code = ErrorCode.NO_NODE


class NoAuthError(ZkError):
    code = ErrorCode.NO_AUTH


class BadVersionError(ZkError):
    code = ErrorCode.BAD_VERSION


class NoChildrenForEphemeralsError(ZkError):
    code = ErrorCode.NO_CHILDREN_FOR_EPHEMERALS


class NodeExistsError(ZkError):
    code = ErrorCode.NODE_EXISTS


class NotEmptyError(ZkError):
    code = ErrorCode.NOT_EMPTY


class SessionExpiredError(ZkError):
    code = ErrorCode.SESSION_EXPIRED


class AuthFailedError(ZkError):
    code = ErrorCode.AUTH_FAILED


class SessionMovedError(ZkError):
    code = ErrorCode.SESSION_MOVED


_BY_CODE: dict[ErrorCode, type[ZkError]] = {
    cls.code: cls
    for cls in (
        RuntimeInconsistencyError,
        ConnectionLossError,
        OperationTimeoutError,
        BadArgumentsError,
        NoNodeError,
        NoAuthError,
        BadVersionError,
        NoChildrenForEphemeralsError,
        NodeExistsError,
        NotEmptyError,
        SessionExpiredError,
        AuthFailedError,
        SessionMovedError,
    )
}


def error_for_code(code: ErrorCode | int, path: str | None = None) -> ZkError:
    """Build the exception for a ZooKeeper result code (a plain ZkError for codes without a class)."""
    code = ErrorCode(code)
    cls = _BY_CODE.get(code)
    if cls is None:
        err = ZkError(path, code.name)
        err.code = code
        return err
    return cls(path)
