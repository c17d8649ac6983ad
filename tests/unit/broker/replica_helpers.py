"""Two or three replica managers on a manual clock, wired through the in-process transport."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest
from tests.helpers import ManualClock

from zkcontroller.broker.config import ReplicationConfig
from zkcontroller.broker.control_plane import BrokerControlPlane
from zkcontroller.broker.partition import IsrProposal
from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors, LeaderAndIsrPartitionState
from zkcontroller.protocol.inter_broker import FetchRequest
from zkcontroller.runtime.in_process import InProcessTransport

from .helpers import MY_EPOCH, leader_and_isr, update_metadata

LAG_MS = 200
TIMEOUT_MS = 10_000


class ManualRuntime:
    """The Runtime port on a `ManualClock`: sleeping yields one loop turn, time moves only when a test says.
    With ``run_tasks`` False, background loops (fetchers, periodic checks, ISR managers) never run: the test
    drives each round itself; a request's own task always runs. Request timeouts (>= 10 s) never fire here."""

    def __init__(self, clock: ManualClock, run_tasks: bool = False) -> None:
        self.clock = clock
        self.run_tasks = run_tasks
        self.rng = random.Random(7)
        self.tasks: list[asyncio.Task[Any]] = []

    def now_ms(self) -> int:
        return self.clock()

    async def sleep_ms(self, ms: int) -> None:
        if ms >= TIMEOUT_MS:
            await asyncio.Event().wait()
        await asyncio.sleep(0)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        if not self.run_tasks and not name.startswith("request"):
            coro.close()
            coro = asyncio.sleep(0)
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.append(task)
        return task


def config(**overrides: Any) -> ReplicationConfig:
    return ReplicationConfig(replica_lag_time_max_ms=LAG_MS, **overrides)


class Brokers:
    """Replica managers for brokers 1..n sharing one transport and clock; ``controller`` answers AlterIsr."""

    def __init__(self, n: int = 3, cfg: ReplicationConfig | None = None,
                 controller: Callable[[Any], Any] | None = None, run_tasks: bool = False) -> None:
        self.clock = ManualClock()
        self.runtime = ManualRuntime(self.clock, run_tasks)
        self.transport = InProcessTransport()
        self.rms: dict[int, ReplicaManager] = {}
        for i in range(1, n + 1):
            plane = BrokerControlPlane(i, MY_EPOCH)
            assert plane.handle(update_metadata(live=tuple(range(1, n + 1)), controller_id=1)).error is Errors.NONE
            rm = ReplicaManager(plane, self.transport, self.runtime, cfg or config())
            self.rms[i] = rm
            self.transport.register(i, self._handler(rm, controller))

    @staticmethod
    def _handler(rm: ReplicaManager, controller: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
        def handle(request: Any) -> Any:
            if isinstance(request, FetchRequest):
                return rm.handle_fetch(request)
            assert controller is not None, f"unexpected {request}"
            return controller(request)
        return handle

    def lead(self, state: LeaderAndIsrPartitionState) -> None:
        """Deliver one LeaderAndIsr to every replica of the partition."""
        for replica in state.replicas:
            response = self.rms[replica].handle_control_request(leader_and_isr(state))
            assert response.partition_errors[0][1] is Errors.NONE

    async def fetch_all(self) -> None:
        for rm in self.rms.values():
            for fetcher in list(rm.fetchers.values()):
                if not fetcher.paused:
                    await fetcher.fetch_once()

    def close(self) -> None:
        for rm in self.rms.values():
            rm.shutdown()
        for task in self.runtime.tasks:
            task.cancel()


def state(leader: int = 1, leader_epoch: int = 0, isr: tuple[int, ...] = (1, 2, 3), zk_version: int = 0,
          replicas: tuple[int, ...] = (1, 2, 3), partition: int = 0) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState("t", partition, 1, leader, leader_epoch, isr, zk_version, replicas)



def lagging_followers(brokers: Brokers) -> ReplicaManager:
    """Broker 1 leads t-0 with ISR 1,2,3 and has appended one record; brokers 2 and 3 have stopped fetching and
    the clock is past the lag time, so the leader's next ISR check shrinks the ISR to (1,). The leader."""
    brokers.lead(state())
    leader = brokers.rms[1]
    brokers.rms[2].pause_fetchers()
    brokers.rms[3].pause_fetchers()
    leader.append(TopicPartition("t", 0), 1)
    brokers.clock.advance(LAG_MS + 1)
    return leader


@pytest.fixture(name="brokers")
def brokers_fixture() -> Iterator[Brokers]:
    """Three brokers on a manual runtime whose background tasks do not run (an AlterIsr manager's queue is only
    drained when a test says), closed at the end."""
    b = Brokers()
    yield b
    b.close()


class RecordingIsrManager:
    """Keeps proposals; ``confirm`` answers them as a controller that accepts everything would."""

    def __init__(self) -> None:
        self.proposals: list[IsrProposal] = []

    def submit(self, proposal: IsrProposal) -> None:
        self.proposals.append(proposal)

    def clear_pending(self, tp: TopicPartition) -> None:
        pass

    def resubmit(self, proposal: IsrProposal) -> None:
        self.proposals.append(proposal)

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        pass
