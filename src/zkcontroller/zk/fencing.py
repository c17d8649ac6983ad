"""Controller-epoch fencing and batched fenced writes.

Kafka wraps every controller write in ``multi([check(/controller_epoch, epochZkVersion), op])``: a deposed
controller's write fails the check and nothing is written. Kafka sends one such multi per partition; here
many ops share one multi (one check), which cuts round trips and ZooKeeper transactions by the batch size.

A multi is all-or-nothing, so one failing op (say a stale partition-state version) rolls back its batch
mates. ZooKeeper names the failing op; we record that op's outcome and resubmit the ops before it and the
ops after it as two new batches. Each failure therefore costs at most one extra multi, and every op ends
with exactly its own result: success, or the code ZooKeeper gave for *that* op.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Generic, TypeVar

from zkcontroller.coordination.api import (
    CheckedOps,
    CheckOp,
    CoordinationSession,
    CreateOp,
    DeleteOp,
    ErrorResult,
    Op,
    OpResult,
    SetDataOp,
)
from zkcontroller.coordination.errors import ErrorCode, ZkError, error_for_code
from zkcontroller.runtime.tasks import run_workers
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError

K = TypeVar("K", bound=Hashable)

_key = itemgetter(0)
"""A keyed op's key, in C."""

NO_FENCING = -1
"""Expected epoch zkVersion meaning "do not wrap" (Kafka's ``ZkVersion.MatchAnyVersion``)."""

ZOOKEEPER_MAX_REQUEST_BYTES = 0xFFFFF
"""ZooKeeper's default ``jute.maxbuffer``: a larger request makes the server drop the connection."""
DEFAULT_MAX_MULTI_BYTES = 512 * 1024
"""Our budget per multi: half the limit, so estimation error and packet headers can never reach it."""
DEFAULT_MAX_MULTI_OPS = 1000

_OP_OVERHEAD_BYTES = 64
"""Per op: multi header (type, done, err), length prefixes, version/flags and a default ACL, rounded up."""


_MULTI_OVERHEAD_BYTES = 32
"""Per multi request: length prefix, xid, type and the closing multi header, rounded up."""


def estimated_multi_size(ops: Sequence[Op]) -> int:
    """An upper bound of a multi request's serialized size (checked against kazoo's jute serializer)."""
    return _MULTI_OVERHEAD_BYTES + sum(estimated_size(op) for op in ops)


_OPS_WITH_DATA = (CreateOp, SetDataOp)
"""A tuple, not ``CreateOp | SetDataOp``: the union would be rebuilt on every call."""


def estimated_size(op: Op) -> int:
    """An upper bound of the op's serialized size inside a multi request."""
    path = op.path
    size = _OP_OVERHEAD_BYTES + (len(path) if path.isascii() else len(path.encode("utf-8")))  # isascii: O(1)
    if isinstance(op, _OPS_WITH_DATA) and op.data is not None:
        size += len(op.data)
    return size


def check_expected_version(expected_epoch_zk_version: int) -> None:
    if expected_epoch_zk_version < NO_FENCING:
        raise ValueError(
            f"Expected controller epoch zkVersion {expected_epoch_zk_version} should be non-negative "
            f"or equal to {NO_FENCING}"
        )


def _epoch_check(expected_epoch_zk_version: int) -> list[Op]:
    check_expected_version(expected_epoch_zk_version)
    if expected_epoch_zk_version == NO_FENCING:
        return []
    return [CheckOp(paths.CONTROLLER_EPOCH, expected_epoch_zk_version)]


def _raise_for_check(code: ErrorCode, expected_epoch_zk_version: int) -> None:
    if code == ErrorCode.BAD_VERSION:
        raise ControllerMovedError(
            f"Controller epoch zkVersion check fails. Expected zkVersion = {expected_epoch_zk_version}"
        )
    raise error_for_code(code, paths.CONTROLLER_EPOCH)


async def fenced_multi(
    session: CoordinationSession, ops: Sequence[Op], expected_epoch_zk_version: int, *, paths_checked: bool = False
) -> tuple[OpResult, ...]:
    """Run ``ops`` in one multi behind the epoch check; returns the ops' own results (check stripped).

    ``paths_checked``: every op's path is known valid (see `CheckedOps`), so the store does not validate them again.
    Raises `ControllerMovedError` if the check fails with BADVERSION (nothing was written), or the
    check's ZooKeeper error for any other check failure (e.g. NONODE).
    """
    check = _epoch_check(expected_epoch_zk_version)
    result = await session.multi(CheckedOps((*check, *ops)) if paths_checked else [*check, *ops])
    if check and isinstance(result.results[0], ErrorResult) and result.results[0].code != ErrorCode.OK:
        _raise_for_check(result.results[0].code, expected_epoch_zk_version)
    return result.results[len(check):]


async def fenced_op(session: CoordinationSession, op: Op, expected_epoch_zk_version: int) -> OpResult:
    """One fenced op (Kafka's wrap/unwrap): its own result, never raising for the op's failure."""
    if not isinstance(op, CreateOp | SetDataOp | DeleteOp):
        raise TypeError(f"{type(op).__name__} cannot be fenced")
    (result,) = await fenced_multi(session, [op], expected_epoch_zk_version)
    return result


def raise_for_result(result: OpResult, path: str) -> OpResult:
    """Turn a failed op's result into the ZooKeeper exception Kafka would have thrown."""
    if isinstance(result, ErrorResult):
        raise error_for_code(result.code, path)
    return result


@dataclass(frozen=True, slots=True)
class BatchLimits:
    max_multi_bytes: int = DEFAULT_MAX_MULTI_BYTES
    max_multi_ops: int = DEFAULT_MAX_MULTI_OPS
    max_in_flight: int = 10


@dataclass(slots=True)
class BatchStats:
    """How many multis a batched write took (for benchmarks and tests)."""

    multis: int = 0
    splits: int = 0


class FencedBatchWriter(Generic[K]):
    """Applies many keyed ops in few fenced multis, giving each key its own result (see module doc).

    A ZooKeeper error for a whole multi (connection loss, session expiry) is recorded for every op of
    that batch, whose outcome is then unknown; other batches carry on. `ControllerMovedError` aborts.
    """

    def __init__(
        self, session: CoordinationSession, expected_epoch_zk_version: int, limits: BatchLimits, *,
        paths_checked: bool = False,
    ) -> None:
        """``paths_checked``: every op's path is known to be valid (`fenced_multi`)."""
        check_expected_version(expected_epoch_zk_version)
        self._session = session
        self._expected = expected_epoch_zk_version
        self._limits = limits
        self._paths_checked = paths_checked
        self._pending: deque[list[tuple[K, Op]]] = deque()
        self.results: dict[K, OpResult | ZkError] = {}
        self.stats = BatchStats()

    def _split_into_batches(self, keyed_ops: Sequence[tuple[K, Op]]) -> None:
        """Consecutive runs of the ops, each within both limits. `estimated_size` is inlined: a call per op was
        a fifth of this loop's time over a broker failure's 20,000 ops (tests/unit/zk/test_fencing.py checks the
        cuts against it)."""
        batch: list[tuple[K, Op]] = []
        empty = estimated_multi_size([CheckOp(paths.CONTROLLER_EPOCH, 0)])
        size = empty
        max_bytes, max_ops = self._limits.max_multi_bytes, self._limits.max_multi_ops
        with_data, pending = _OPS_WITH_DATA, self._pending
        for item in keyed_ops:
            op = item[1]
            path = op.path
            op_size = _OP_OVERHEAD_BYTES + (len(path) if path.isascii() else len(path.encode("utf-8")))
            if isinstance(op, with_data) and op.data is not None:
                op_size += len(op.data)
            if batch and (size + op_size > max_bytes or len(batch) >= max_ops):
                pending.append(batch)
                batch, size = [], empty
            batch.append(item)
            size += op_size
        if batch:
            pending.append(batch)

    async def run(self, keyed_ops: Sequence[tuple[K, Op]]) -> dict[K, OpResult | ZkError]:
        self._split_into_batches(keyed_ops)
        workers = min(self._limits.max_in_flight, len(self._pending))
        await run_workers(workers, self._work)
        return self.results

    async def _work(self) -> None:
        # A worker that splits a batch queues the halves before looping, so no work is ever stranded.
        while self._pending:
            await self._apply(self._pending.popleft())

    async def _apply(self, batch: list[tuple[K, Op]]) -> None:
        self.stats.multis += 1
        try:
            results = await fenced_multi(self._session, [op for _, op in batch], self._expected,
                                         paths_checked=self._paths_checked)
        except ZkError as e:
            for key, _ in batch:
                self.results[key] = e
            return
        failed = _failed_index(results)
        if failed is None:
            self.results.update(zip(map(_key, batch), results, strict=True))
            return
        self.stats.splits += 1
        self.results[batch[failed][0]] = results[failed]
        for part in (batch[failed + 1:], batch[:failed]):  # prefix ends up first: order is kept
            if part:
                self._pending.appendleft(part)


def _failed_index(results: Sequence[OpResult]) -> int | None:
    """The op that failed a multi (rolled-back ops report OK, later ones RUNTIME_INCONSISTENCY).

    A multi's results are all successes or all `ErrorResult`s (`MultiResult`), so a first op that succeeded means
    every op did: the other 999 of a batch are not looked at."""
    if not results or not isinstance(results[0], ErrorResult):
        return None
    benign = (ErrorCode.OK, ErrorCode.RUNTIME_INCONSISTENCY)
    for i, result in enumerate(results):
        if isinstance(result, ErrorResult) and result.code not in benign:
            return i
    return None
