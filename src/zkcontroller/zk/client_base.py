"""The session-facing core shared by `KafkaZkClient`'s operation families: pipelined reads that keep going
past malformed znodes, and fenced single and batched writes."""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

from zkcontroller.coordination.api import CoordinationSession, CreateMode, Op, OpResult, Stat, Watcher
from zkcontroller.coordination.errors import NodeExistsError, NoNodeError, ZkError
from zkcontroller.zk.errors import NullZnodeDataError, ZnodeDecodeError
from zkcontroller.zk.fencing import BatchLimits, BatchStats, FencedBatchWriter, fenced_op

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

Clock = Callable[[], int]
"""Milliseconds since the epoch; injected so the simulator can run on virtual time."""


@dataclass(frozen=True, slots=True)
class BulkRead(Generic[K, V]):
    """The outcome of reading many znodes: decoded values, and malformed znodes by path.

    A key in neither map had no znode. Malformed znodes are reported, never fatal: callers log and carry on.
    A lenient read (`KafkaZkClientBase._read_many_lenient`) puts the empty value Kafka reads for some bad data in
    ``values`` and why in ``read_as_empty``, for the caller to report.
    """

    values: dict[K, V] = field(default_factory=dict)
    malformed: dict[str, ZnodeDecodeError] = field(default_factory=dict)
    read_as_empty: dict[str, ZnodeDecodeError] = field(default_factory=dict)


class KafkaZkClientBase:
    """Holds the session, clock, random source and batching limits; see `KafkaZkClient`."""

    def __init__(
        self,
        session: CoordinationSession,
        clock: Clock,
        *,
        rng: random.Random | None = None,
        limits: BatchLimits | None = None,
    ) -> None:
        self._session = session
        self._clock = clock
        self._rng = rng
        self.limits = limits or BatchLimits()
        self.last_batch_stats = BatchStats()
        self._registered_session_id: int | None = None

    @property
    def session(self) -> CoordinationSession:
        return self._session

    def replace_session(self, session: CoordinationSession) -> None:
        """Continue on a new session after the old one expired (Kafka re-creates its ZooKeeper handle).

        The id of the session that last registered the broker is kept: it is how a stale ephemeral node
        left by our own expired session is recognised (§1.3).
        """
        self._session = session

    # ------------------------------------------------------------------ reads

    async def get_data_and_stat(
        self, path: str, watch: Watcher | None = None
    ) -> tuple[bytes | None, Stat] | None:
        """A node's data and stat, or None if it does not exist. Data None is a node with null data: Kafka's
        ``getDataAndStat`` reads both as ``None`` data, which each caller then takes as Kafka does."""
        try:
            return await self._session.get_data(path, watch)
        except NoNodeError:
            return None

    async def get_children(self, path: str, watch: Watcher | None = None) -> list[str]:
        """Sorted child names; an absent parent has none (Kafka's ``getChildren``)."""
        try:
            return sorted(await self._session.get_children(path, watch))
        except NoNodeError:
            return []

    async def path_exists(self, path: str, watch: Watcher | None = None) -> bool:
        """Existence check; with ``watch``, also observe the node's creation (Kafka's register-and-check)."""
        return await self._session.exists(path, watch) is not None

    async def _read_many(
        self,
        keys: Sequence[K],
        path_of: Callable[[K], str],
        decode: Callable[[K, bytes, Stat, str], V],
        watch: Watcher | None = None,
        *,
        decode_null: Callable[[K, Stat, str], V] | None = None,
    ) -> BulkRead[K, V]:
        """``get_data`` of many znodes in one batched read, decoded; absent nodes skipped, malformed ones
        reported. A znode with null data goes to ``decode_null``; without one it is malformed
        (`NullZnodeDataError`), as Kafka's JSON decoders throw on null."""
        out: BulkRead[K, V] = BulkRead()
        paths = [path_of(key) for key in keys]
        found = await self._session.get_data_many(paths, watch, max_in_flight=self.limits.max_in_flight)
        for key, path, data_and_stat in zip(keys, paths, found, strict=True):
            if data_and_stat is None:
                continue
            data, stat = data_and_stat
            try:
                if data is not None:
                    out.values[key] = decode(key, data, stat, path)
                elif decode_null is not None:
                    out.values[key] = decode_null(key, stat, path)
                else:
                    raise NullZnodeDataError(path)
            except ZnodeDecodeError as e:
                e.mzxid = stat.mzxid
                out.malformed[path] = e
        return out

    async def _read_many_lenient(
        self,
        keys: Sequence[K],
        path_of: Callable[[K], str],
        decode_lenient: Callable[[bytes | None, str], tuple[V, ZnodeDecodeError | None]],
        watch: Watcher | None = None,
    ) -> BulkRead[K, V]:
        """`_read_many` with a ``decode_lenient`` decoder: what it reads as empty is a value, and is also
        reported in ``read_as_empty``. Null data goes to the decoder too: it knows whether Kafka reads null as
        empty (a config entity) or throws (a topic)."""
        read_as_empty: dict[str, ZnodeDecodeError] = {}

        def decode(_key: K, data: bytes | None, _stat: Stat, path: str) -> V:
            value, ignored = decode_lenient(data, path)
            if ignored is not None:
                read_as_empty[path] = ignored
            return value

        out = await self._read_many(keys, path_of, decode, watch,
                                    decode_null=lambda key, stat, path: decode(key, None, stat, path))
        out.read_as_empty.update(read_as_empty)
        return out

    # ------------------------------------------------------------------ writes

    async def _create_if_absent(self, path: str, data: bytes = b"") -> bool:
        """Create a persistent node; False if it existed already."""
        try:
            await self._session.create(path, data, CreateMode.PERSISTENT)
        except NodeExistsError:
            return False
        return True

    async def _fenced(self, op: Op, expected_epoch_zk_version: int) -> OpResult:
        return await fenced_op(self._session, op, expected_epoch_zk_version)

    async def _fenced_batch(
        self,
        keyed_ops: Sequence[tuple[K, Op]],
        expected_epoch_zk_version: int,
        *,
        ordered: bool = False,
        paths_checked: bool = False,
    ) -> dict[K, OpResult | ZkError]:
        """Many fenced ops in few multis; each key gets its own op's result (see `FencedBatchWriter`).

        ``ordered``: apply strictly in order, one multi at a time (a parent's delete after its children's).
        ``paths_checked``: every op's path is known valid (`coordination.api.CheckedOps`): not validated again.
        """
        limits = replace(self.limits, max_in_flight=1) if ordered else self.limits
        writer: FencedBatchWriter[K] = FencedBatchWriter(self._session, expected_epoch_zk_version, limits,
                                                         paths_checked=paths_checked)
        try:
            return await writer.run(keyed_ops)
        finally:
            self.last_batch_stats = writer.stats
