"""Own thread-CPU by function inside a measured interval (``bench_controller.py --by-function``).

cProfile times every call and roughly doubles the controller's CPU; py-spy's samples follow the wall clock, so on a
shared host they count the core being taken away. This wraps a chosen list of batch-level functions (a state
machine's step, a request batch's adds, the store writes' building: each called a few times per event, so the
wrapping costs nothing measurable) and records each call's *own* CPU (``time.thread_time``, less the wrapped
functions it called). Coroutine functions are timed per step, so awaits and the other tasks that run meanwhile
are not counted. The per-partition work inside an unwrapped helper goes to its nearest wrapped caller.

A step's samples carry the ``time.perf_counter`` at which they ended, so a figure can be cut at an instant (the
broker failure's last LeaderAndIsr handed). Functions are named ``module:Qualified.name`` under ``zkcontroller``;
module-level functions are replaced in every ``zkcontroller`` module that imported them by name.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

DEFAULT_FUNCTIONS = [
    "controller.brokers:BrokerEvents.on_broker_failure",
    "controller.brokers:BrokerEvents.on_replicas_become_offline",
    "controller.controlled_shutdown:ControlledShutdownEvents.do_controlled_shutdown",
    "controller.controlled_shutdown:ControlledShutdownEvents._partitions_to_act_on",
    "controller.partition_state_machine:PartitionStateMachine.trigger_online_partition_state_change",
    "controller.partition_state_machine:PartitionStateMachine.handle_state_changes",
    "controller.partition_state_machine:PartitionStateMachine._do_handle_state_changes",
    "controller.partition_state_machine:PartitionStateMachine._move_online",
    "controller.partition_state_machine:PartitionStateMachine._log_online",
    "controller.partition_state_machine:PartitionStateMachine._set_states",
    "controller.partition_state_machine:PartitionStateMachine.elect_leader_for_partitions",
    "controller.partition_state_machine:PartitionStateMachine._do_elect_leader_for_partitions",
    "controller.partition_state_machine:PartitionStateMachine._elect",
    "controller.partition_state_machine:PartitionStateMachine._write_elected",
    "controller.replica_state_machine:ReplicaStateMachine.handle_state_changes",
    "controller.replica_state_machine:ReplicaStateMachine._do_handle_state_changes",
    "controller.replica_state_machine:ReplicaStateMachine._to_offline",
    "controller.replica_state_machine:ReplicaStateMachine.remove_replicas_from_isr",
    "controller.replica_state_machine:ReplicaStateMachine._do_remove_replicas_from_isr",
    "controller.state_machine:StateMachine._in_batch",
    "controller.request_batch:ControllerBrokerRequestBatch.add_leader_and_isr_requests",
    "controller.request_batch:ControllerBrokerRequestBatch.add_stop_replica_requests",
    "controller.request_batch:ControllerBrokerRequestBatch.add_update_metadata_request_for_brokers",
    "controller.request_batch:ControllerBrokerRequestBatch._update_metadata_partition_states",
    "controller.request_batch:ControllerBrokerRequestBatch._send_leader_and_isr_requests",
    "controller.request_batch:ControllerBrokerRequestBatch._send_update_metadata_requests",
    "controller.request_batch:ControllerBrokerRequestBatch._send_stop_replica_requests",
    "controller.context:ControllerContext.put_partition_leadership_infos",
    "controller.context:ControllerContext.put_partition_states",
    "controller.context:ControllerContext.replicas_on_brokers",
    "controller.context:ControllerContext.partitions_in_states_in_order",
    "controller.context:ControllerContext.partitions_with_offline_leader_in_order",
    "controller.context:ControllerContext.partition_leaders_on_broker",
    "controller.context:ControllerContext.leader_epochs",
    "controller.election:elect_leaders_for_offline",
    "controller.election:elect_leaders_for_controlled_shutdown",
    "controller.election:elect_leaders_for_preferred_replica",
    "controller.event_log:StateChangeLogger.partitions_changed",
    "controller.event_log:StateChangeLogger.replicas_changed",
    "controller.event_log:StateChangeLogger.leaders_elected",
    "controller.event_log:StateChangeLogger.isrs_changed",
    "controller.event_log:EventLog.flush",  # the lines those four hold back with a lines_sink, built here
    "zk.client_topics:TopicOps.update_leader_and_isr",
    "zk.znodes.topics:TopicPartitionStateZNode.encode_all",
    "zk.write_ops:set_data_ops",
    "zk.write_ops:partition_state_paths",
    "zk.write_ops:checked_partition_state_paths",
    "zk.fencing:FencedBatchWriter._split_into_batches",
    "zk.fencing:FencedBatchWriter._apply",
]
"""What bfcut's wrapper timed (twenty-sixth session), by the names of this code."""


class _Pass:
    """Hands one yielded object of an inner coroutine to the event loop and returns what the loop sends back."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __await__(self):  # type: ignore[no-untyped-def]
        return (yield self.value)


class ByFunction:
    """The wrapper and its samples: (``perf_counter`` at the end, name, own CPU seconds) per call or step."""

    def __init__(self) -> None:
        self.active = False
        self.samples: list[tuple[float, str, float]] = []
        self._stack: list[list[Any]] = []  # [name, CPU at entry, CPU of wrapped callees]

    def _enter(self, name: str) -> None:
        self._stack.append([name, time.thread_time(), 0.0])

    def _leave(self) -> None:
        name, started, inner = self._stack.pop()
        spent = time.thread_time() - started
        if self._stack:
            self._stack[-1][2] += spent
        self.samples.append((time.perf_counter(), name, spent - inner))

    def wrap(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(function):
            @functools.wraps(function)
            async def stepped(*args: Any, **kwargs: Any) -> Any:
                if not self.active:
                    return await function(*args, **kwargs)
                return await self._steps(name, function(*args, **kwargs))
            return stepped

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.active:
                return function(*args, **kwargs)
            self._enter(name)
            try:
                return function(*args, **kwargs)
            finally:
                self._leave()
        return timed

    async def _steps(self, name: str, coro: Coroutine[Any, Any, Any]) -> Any:
        value: object = None
        error: BaseException | None = None
        while True:
            self._enter(name)
            try:
                yielded = coro.throw(error) if error is not None else coro.send(value)
            except StopIteration as stop:
                return stop.value
            finally:
                self._leave()
            try:
                value, error = await _Pass(yielded), None
            except BaseException as e:  # cancellation included: thrown into the inner coroutine
                value, error = None, e

    def install(self, names: Iterable[str]) -> None:
        for full in names:
            module_name, _, qualified = full.partition(":")
            module = importlib.import_module(f"zkcontroller.{module_name}")
            owner: Any = module
            *outer, attribute = qualified.split(".")
            try:
                for part in outer:
                    owner = getattr(owner, part)
                raw = inspect.getattr_static(owner, attribute)
            except AttributeError:  # an older version of the code (a base worktree) may lack it
                print(f"  --by-function: {full} not found, not timed")
                continue
            if isinstance(raw, staticmethod | classmethod):
                setattr(owner, attribute, type(raw)(self.wrap(qualified, raw.__func__)))
                continue
            wrapped = self.wrap(qualified, raw)
            setattr(owner, attribute, wrapped)
            if owner is module:  # `from module import function` elsewhere: those names too
                for other in list(sys.modules.values()):
                    if getattr(other, "__name__", "").startswith("zkcontroller") and \
                            getattr(other, attribute, None) is raw:
                        setattr(other, attribute, wrapped)

    def own_ms(self, start: float, end: float) -> dict[str, tuple[float, int]]:
        """Own CPU ms and calls (steps, for coroutines) per function, of the samples that ended in (start, end]."""
        out: dict[str, list[float]] = {}
        for at, name, seconds in self.samples:
            if start < at <= end:
                entry = out.setdefault(name, [0.0, 0])
                entry[0] += 1000 * seconds
                entry[1] += 1
        return {k: (round(v[0], 1), int(v[1])) for k, v in sorted(out.items(), key=lambda kv: -kv[1][0])}


BY_FUNCTION = ByFunction()
