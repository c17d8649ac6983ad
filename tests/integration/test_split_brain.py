"""The seed articles' split-brain case: a controller stalls in the middle of a long event while another is
elected. It must not change ZooKeeper afterwards, must resign when it notices, and brokers must refuse the
requests it still sends, because they have seen a newer controller epoch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory, RecordingTransport, make_local_cluster
from tests.integration.test_controller_cluster import create_topic, wait_for_states

from zkcontroller.controller.events import BrokerChange
from zkcontroller.coordination.api import (
    CoordinationSession,
    MultiResult,
    Op,
)
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.delegating import DelegatingSession
from zkcontroller.model import Broker
from zkcontroller.protocol.control_requests import AnyControlRequest, ControlResponse, Errors
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class FakeStalledSession(DelegatingSession):
    """Delegates to a real session, but holds every ``multi`` (all fenced writes) until ``release``:
    a controller paused mid-event (a long GC pause, a stuck disk) while the world moves on."""

    def __init__(self, inner: CoordinationSession) -> None:
        super().__init__(inner)
        self.gate = asyncio.Event()
        self.held = 0

    def release(self) -> None:
        self.gate.set()

    async def multi(self, ops: Sequence[Op]) -> MultiResult:
        self.held += 1
        await self.gate.wait()
        return await self.inner.multi(ops)


class FakeDelayingTransport(RecordingTransport):
    """Holds requests from one controller until released, and remembers every response."""

    def __init__(self) -> None:
        super().__init__()
        self.held_controller: int | None = None
        self.gate = asyncio.Event()
        self.responses: list[tuple[int, AnyControlRequest, ControlResponse]] = []
        """Responses to the requests that were held, as the brokers gave them once released."""

    async def send(self, broker: Broker, request: AnyControlRequest) -> ControlResponse:
        # Shielded: once sent, a request is on the wire even if its sender resigns and stops its queues.
        return await asyncio.shield(self._deliver(broker, request))

    async def _deliver(self, broker: Broker, request: AnyControlRequest) -> ControlResponse:
        held = request.controller_id == self.held_controller
        if held:
            await self.gate.wait()
        response = await super().send(broker, request)
        if held:
            self.responses.append((broker.id, request, response))
        return response


@pytest.fixture
async def admin(backend: CoordinationBackend) -> AsyncIterator[KafkaZkClient]:
    session = await backend.new_session()
    yield KafkaZkClient(session, wall_clock_ms)
    await session.close()


async def snapshot(admin: KafkaZkClient, paths: list[str]) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for path in paths:
        found = await admin.get_data_and_stat(path)
        out[path] = None if found is None else found[0]
    return out


@pytest.mark.parametrize("how", ["controller_znode_deleted", "session_expired"])
async def test_stalled_controller_cannot_write_and_resigns(
    make_cluster: ClusterFactory, admin: KafkaZkClient, how: str
) -> None:
    cluster = await make_cluster([1, 2, 3], controlled_shutdown_enable=False)  # a plain BrokerChange
    old = await cluster.wait_for_controller()
    victim = max({1, 2, 3} - {old.controller_id})
    await create_topic(admin, "t", {0: [victim, old.controller_id], 1: [old.controller_id, victim]})
    await wait_for_states(admin, "t", 2, lambda s: True, "topic online")

    stalled = FakeStalledSession(old.zk.session)
    old.zk.replace_session(stalled)
    try:
        await _stall_then_wake(cluster, admin, old, stalled, victim, how)
    finally:
        stalled.release()


async def _stall_then_wake(cluster, admin, old, stalled, victim, how) -> None:
    await cluster.stop_broker(victim)  # a BrokerChange the old controller starts, then stalls in
    await wait_until(lambda: stalled.held > 0, what="the old controller stalled on its first write")

    if how == "controller_znode_deleted":
        await admin.session.delete("/controller")
    else:
        await cluster.expire_broker_session(old.controller_id)
    new = await cluster.wait_for_controller(exclude=old.controller_id)
    assert new.context.epoch == 2
    await wait_for_states(
        admin, "t", 2, lambda s: all(st.controller_epoch == 2 for st in s.values()), "the new controller's writes"
    )
    state_paths = [f"/brokers/topics/t/partitions/{p}/state" for p in (0, 1)] + ["/controller", "/controller_epoch"]
    before = await snapshot(admin, state_paths)

    epoch_before = old.broker_epoch
    stalled.release()  # the old controller wakes up and carries on with its stale event
    await wait_until(lambda: not old.is_active and old.event_manager.queue_size == 0, what="old controller resigned")
    if how == "controller_znode_deleted":
        assert await snapshot(admin, state_paths) == before  # nothing it tried landed
    else:
        await wait_until(lambda: old.broker_epoch > epoch_before, what="re-registration with a new broker epoch")
        await new.event_manager.put(BrokerChange()).await_finished()
    states = await wait_for_states(admin, "t", 2, lambda s: True, "states")
    assert all(st.controller_epoch == new.context.epoch for st in states.values())  # no write from epoch 1
    assert await admin.get_controller_id() == new.controller_id
    assert (await admin.get_controller_epoch())[0] == 2  # type: ignore[index]
    assert old.context.epoch == 0  # resigned: context reset
    assert [s.controller.controller_id for s in cluster.running_brokers() if s.controller.is_active] == [
        new.controller_id
    ]


async def test_brokers_refuse_requests_from_the_deposed_controller(
    backend: CoordinationBackend, admin: KafkaZkClient
) -> None:
    transport = FakeDelayingTransport()
    cluster = await make_local_cluster(backend, [1, 2, 3], transport, controlled_shutdown_enable=False)
    try:
        old = await cluster.wait_for_controller()
        await create_topic(admin, "t", {0: [1, 2, 3]})
        await wait_for_states(admin, "t", 1, lambda s: True, "topic online")
        transport.held_controller = old.controller_id
        victim = max({1, 2, 3} - {old.controller_id})
        await cluster.stop_broker(victim)  # the old controller writes, but its requests are held
        await wait_for_states(admin, "t", 1, lambda s: victim not in s[0].leader_and_isr.isr, "isr shrink")
        await wait_until(lambda: old.event_manager.queue_size == 0, what="the old controller's requests sent")
        stalled = FakeStalledSession(old.zk.session)  # and it stalls, so it cannot win the next election
        old.zk.replace_session(stalled)
        await admin.session.delete("/controller")
        new = await cluster.wait_for_controller(exclude=old.controller_id)
        survivors = sorted({1, 2, 3} - {victim})
        await wait_until(
            lambda: all(cluster.brokers[b].control_plane.controller_epoch == new.context.epoch for b in survivors),
            what="brokers adopted the new epoch",
        )
        transport.gate.set()
        await wait_until(
            lambda: any(r.controller_id == old.controller_id for _, r, _ in transport.responses),
            what="the held requests delivered",
        )
        stale = [(b, resp) for b, r, resp in transport.responses if r.controller_epoch < new.context.epoch]
        assert stale and len(stale) == len(transport.responses), "the deposed controller's requests reached brokers"
        for _, response in stale:
            codes = {response.error} | {e for _, e in response.partition_errors}
            assert Errors.STALE_CONTROLLER_EPOCH in codes
            assert all(e is not Errors.NONE for _, e in response.partition_errors)
        for b in survivors:
            assert cluster.brokers[b].control_plane.controller_epoch == new.context.epoch
        stalled.release()
    finally:
        transport.gate.set()
        await cluster.shutdown()
