"""Errors of Kafka's ZooKeeper layer (the znode model and `KafkaZkClient`).

ZooKeeper's own failures stay `zkcontroller.coordination.errors.ZkError`; these are the Kafka-level
conditions a caller must tell apart from them (Kafka's `ControllerMovedException`, a malformed znode).
"""

from __future__ import annotations


class KafkaZkError(Exception):
    """Base of the errors raised by the Kafka znode layer."""


class ZnodeDecodeError(KafkaZkError):
    """A znode's content is not what Kafka 2.8 writes: bad JSON, a wrong type, an unknown version.

    It always names the znode so that a caller reading many nodes can log it and carry on with the rest.
    """

    mzxid: int | None = None
    """The znode's mzxid when a bulk read found it malformed (`KafkaZkClientBase._read_many`): which write of the
    znode this is, so a reader reports each bad write once."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"Malformed znode {path}: {reason}")


class UnparseableZnodeError(ZnodeDecodeError):
    """A znode's data is not JSON at all. Kafka's ``Json.parseBytes`` reads such data as ``None``, which most of
    its ZkData decoders turn into an empty value rather than an error (see the ``decode_lenient`` decoders);
    strict readers report it like any other malformed znode."""


class NullZnodeDataError(ZnodeDecodeError):
    """A znode holds null data (ZooKeeper's null, not empty bytes) where Kafka 2.8's decoder needs bytes: its
    ``Json.parseBytes``/``new String`` throws on null (a NullPointerException, not a parse error), so this is
    never read leniently as empty. Kafka reads null as absent only where it says so (``getDataAndStat``'s
    ``Option``, ``ConfigEntityZNode.decode``'s ``bytes != null``); those callers never raise this."""

    def __init__(self, path: str) -> None:
        super().__init__(path, "null data")


class NullDereferenceError(ZnodeDecodeError):
    """The data binds as Kafka 2.8's Jackson reads it (``Json.parseBytesAs``), but leaves a null that Kafka's decoder
    then dereferences: a NullPointerException, not a JSON error. A reader that takes a JSON error as empty (as
    ``getPartitionReassignment`` does) throws here instead, as it does on null data (`NullZnodeDataError`)."""


def require_data(data: bytes | None, path: str) -> bytes:
    """``data`` for a decoder that, as Kafka's, throws on null: raises `NullZnodeDataError` for None."""
    if data is None:
        raise NullZnodeDataError(path)
    return data


class ControllerMovedError(KafkaZkError):
    """This controller is no longer the controller: its epoch check failed or the election was lost.

    Kafka's ``ControllerMovedException``; nothing of the failed request was written.
    """

    java_class = "org.apache.kafka.common.errors.ControllerMovedException"
    """What a Kafka-format log names it (`runtime.log_lines.qualified_name`), as Kafka's lines show it."""


class ControllerEpochMissingError(KafkaZkError):
    """``/controller_epoch`` vanished between our create attempt and the re-read (Kafka's IllegalState)."""
