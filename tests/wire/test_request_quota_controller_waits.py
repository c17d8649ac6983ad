"""The request quota counts a request's own handling, not its wait for the controller: Kafka's ElectLeaders and
Alter/ListPartitionReassignments handlers hand the request to the controller's event queue with a callback and
return, so the controller's work (and DelayedElectLeader) is no request handler thread time
(``apiLocalCompleteTimeNanos``). Each stand-in controller checks, when asked, that the request's local
completion is already marked at the moment the handler handed it over."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from zkcontroller.broker.client_quota_manager import current_request, start_request
from zkcontroller.cluster.admin_apis.elect_leaders import elect_leaders_handler
from zkcontroller.cluster.admin_apis.reassignments import alter_reassignments_handler, list_reassignments_handler
from zkcontroller.controller.events import ApiError
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.control_requests import Errors

from .test_delete_topics_wire import cache_with


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def now_ms(self) -> int:
        return self.now


class _Controller:
    """Records, at each call, when the request's own work was marked complete; the call itself takes 400 ms."""

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock
        self.marked_at: list[int] = []
        self.is_active = True
        self.elections = SimpleNamespace(elect_leaders=self._elect)

    def _seen(self) -> None:
        timing = current_request()
        assert timing is not None
        self.marked_at.append(timing.local_complete_ms)
        self.clock.now += 400

    async def _elect(self, partitions: list[TopicPartition], election_type: Any) -> dict[TopicPartition, Any]:
        self._seen()
        return {tp: ApiError(Errors.ELECTION_NOT_NEEDED) for tp in partitions}

    async def alter_partition_reassignments(self, targets: dict[TopicPartition, Any]) -> dict[TopicPartition, Any]:
        self._seen()
        return {tp: ApiError(Errors.NONE) for tp in targets}

    async def list_partition_reassignments(self, partitions: Any) -> dict[TopicPartition, Any]:
        self._seen()
        return {}


def _server(clock: _Clock, controller: _Controller) -> SimpleNamespace:
    return SimpleNamespace(controller=controller, active_controller=controller, runtime=clock,
                           control_plane=SimpleNamespace(metadata_cache=cache_with("a")))


async def test_the_controllers_work_is_not_handling_time() -> None:
    clock = _Clock()
    controller = _Controller(clock)
    server = _server(clock, controller)
    elect = elect_leaders_handler(lambda: server)  # type: ignore[arg-type, return-value]
    alter = alter_reassignments_handler(lambda: server)  # type: ignore[arg-type, return-value]
    list_ = list_reassignments_handler(lambda: server)  # type: ignore[arg-type, return-value]
    calls = [lambda: elect(0, [("a", 0)], 30_000),  # 0: preferred
             lambda: alter({("a", 0): [1]}),
             lambda: list_(None)]
    for call in calls:
        clock.now = 1_000

        async def timed(call: Any = call) -> int:
            timing = start_request(clock.now_ms())
            await call()
            return timing.handling_ms(clock.now_ms())

        handling = await asyncio.get_running_loop().create_task(timed())
        assert handling == 0  # the 400 ms inside the controller are a wait
    assert controller.marked_at == [1_000, 1_000, 1_000]
