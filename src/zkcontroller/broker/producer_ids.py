"""InitProducerId for idempotent producers: producer ids from blocks claimed in ZooKeeper (Kafka 2.8's
``ProducerIdManager``), answered as ``TransactionCoordinator.handleInitProducerId`` does without a
transactional id.

Any broker answers. Each claims blocks of 1000 ids by a setData on ``/latest_producer_id_block`` conditional on
the znode's version, so no two brokers ever hand out one id. Unlike Kafka, which claims its first block when the
transaction coordinator starts, a broker claims one at its first request: a broker never asked needs no block.

Transactions are not served (there is no transaction coordinator and no ``__transaction_state``): a request with a
transactional id gets what a 2.8 broker answers for an id whose coordinator partition it does not own,
NOT_COORDINATOR, after the same checks of the id and the timeout.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.znodes import ProducerIdBlock

log = logging.getLogger("kafka.coordinator.transaction.ProducerIdManager")

PID_BLOCK_SIZE = 1000
"""Kafka's ``ProducerIdManager.PidBlockSize``."""
LONG_MAX = 2**63 - 1
NO_PRODUCER_ID, NO_PRODUCER_EPOCH = -1, -1
"""``RecordBatch.NO_PRODUCER_ID`` / ``NO_PRODUCER_EPOCH``: what an error answer carries."""
TRANSACTION_MAX_TIMEOUT_MS = 900_000
"""Kafka's default ``transaction.max.timeout.ms``: the transactional id checks run before NOT_COORDINATOR."""

NONE, UNKNOWN_SERVER_ERROR, NOT_COORDINATOR, INVALID_REQUEST, INVALID_TRANSACTION_TIMEOUT = 0, -1, 16, 42, 50


class ProducerIdsExhaustedError(Exception):
    """The next block would pass ``Long.MaxValue`` (Kafka's fatal "Have exhausted all producerIds.")."""


class NoZooKeeperError(Exception):
    """The broker has no ZooKeeper client yet (not started, or restarting)."""


@dataclass(frozen=True, slots=True)
class InitProducerIdResult:
    """Kafka's ``InitProducerIdResult``."""

    producer_id: int
    producer_epoch: int
    error: int


def error_result(error: int) -> InitProducerIdResult:
    """``initTransactionError``: no producer id, no epoch."""
    return InitProducerIdResult(NO_PRODUCER_ID, NO_PRODUCER_EPOCH, error)


class ProducerIdManager:
    """One broker's producer ids: the current block, and the next id in it. ``zk`` is looked up per claim (the
    broker's client exists once it starts, and is replaced when it restarts)."""

    def __init__(self, broker_id: int, zk: Callable[[], KafkaZkClient | None]) -> None:
        self.broker_id = broker_id
        self._zk = zk
        self._block: ProducerIdBlock | None = None
        self._next = -1
        self._lock = asyncio.Lock()
        """Ids are handed out one at a time, and a block is claimed by one request while others wait."""

    @property
    def current_block(self) -> ProducerIdBlock | None:
        return self._block

    async def generate_producer_id(self) -> int:
        """The next unused id, claiming a new block when this one is used up. Raises what the claim raises
        (`ZnodeDecodeError`, `ZkError`, `ProducerIdsExhaustedError`, `NoZooKeeperError`); a failed claim leaves
        the manager as it was, so the next request tries again."""
        async with self._lock:
            if self._block is None or self._next > self._block.block_end:
                block = await self._claim_block()
                self._block, self._next = block, block.block_start
            producer_id = self._next
            self._next += 1
            return producer_id

    async def _claim_block(self) -> ProducerIdBlock:
        """Kafka's ``getNewProducerIdBlock``: read the latest block and its version, write the one after it
        conditionally, and start over when another broker wrote first."""
        while True:
            zk = self._zk()
            if zk is None:
                raise NoZooKeeperError(f"broker {self.broker_id} has no ZooKeeper client")
            found = await zk.get_producer_id_block()
            latest = found[0] if found is not None else None
            if latest is None:
                candidate = ProducerIdBlock(self.broker_id, 0, PID_BLOCK_SIZE - 1)
            else:
                if latest.block_end > LONG_MAX - PID_BLOCK_SIZE:
                    log.error("[ProducerId Manager %d]: Exhausted all producerIds as the next block's end "
                                 "producerId is will has exceeded long type limit (current block end producerId "
                                 "is %d)", self.broker_id, latest.block_end)
                    raise ProducerIdsExhaustedError("Have exhausted all producerIds.")
                candidate = ProducerIdBlock(self.broker_id, latest.block_end + 1, latest.block_end + PID_BLOCK_SIZE)
            # The znode's version after our write: a create makes version 0, a setData conditional on version
            # V that succeeds makes exactly V + 1; Kafka's line names it ("with path version").
            if found is None:
                written = await zk.create_producer_id_block(candidate)
                version = 0
            else:
                written = await zk.set_producer_id_block(candidate, found[1])
                version = found[1] + 1
                if not written:  # Kafka's checkProducerIdBlockZkData: our own write may have landed after all
                    again = await zk.get_producer_id_block()
                    written = again is not None and again[0] == candidate
                    version = again[1] if again is not None else -1
            if written:
                log.info("[ProducerId Manager %d]: Acquired new producerId block (brokerId:%d,"
                         "blockStartProducerId:%d,blockEndProducerId:%d) by writing to Zk with path version %d",
                         self.broker_id, candidate.broker_id, candidate.block_start, candidate.block_end, version)
                return candidate


async def init_producer_id(manager: ProducerIdManager, transactional_id: str | None, transaction_timeout_ms: int,
                           producer_id: int, producer_epoch: int) -> InitProducerIdResult:
    """``KafkaApis.handleInitProducerIdRequest`` and ``TransactionCoordinator.handleInitProducerId`` (no
    authorizer). Without a transactional id every request gets a new producer id at epoch 0, also one that
    names its current id and epoch (KIP-360's epoch bump of an idempotent producer: Kafka "blindly accepts"
    it). Failures of the id allocation propagate (the caller answers UNKNOWN_SERVER_ERROR, as handleError)."""
    if (producer_id == NO_PRODUCER_ID) != (producer_epoch == NO_PRODUCER_EPOCH):
        return error_result(INVALID_REQUEST)
    if transactional_id is None:
        return InitProducerIdResult(await manager.generate_producer_id(), 0, NONE)
    if not transactional_id:
        return error_result(INVALID_REQUEST)
    if not 0 < transaction_timeout_ms <= TRANSACTION_MAX_TIMEOUT_MS:
        return error_result(INVALID_TRANSACTION_TIMEOUT)
    return error_result(NOT_COORDINATOR)
