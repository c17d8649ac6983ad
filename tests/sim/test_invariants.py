"""Each named invariant fires when what it forbids happens (done here by hand, through the same seams the
simulation uses), so a clean sweep means something. The mutation tests do the same through the real code."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tests.sim.helpers import ci_config

from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkcontroller.protocol.control_requests import UpdateMetadataRequest
from zkcontroller.sim.world import SimResult, SimWorld
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import TopicPartitionStateZNode


def _run(body: Callable[[SimWorld], Awaitable[None]], **changes: object) -> SimResult:
    return SimWorld(ci_config("custom", 9, **changes)).run(body)


async def _topic(world: SimWorld) -> str:
    name = await world.create_topic(3)
    assert name is not None
    await world.wait_stable(30_000)
    return name


async def _write_state(world: SimWorld, topic: str, leader: int, leader_epoch: int, isr: list[int],
                       controller_epoch: int) -> None:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, leader_epoch, tuple(isr), 0), controller_epoch)
    tp = TopicPartition(topic, 0)
    await world._admin_session.set_data(paths.partition_state_path(tp.topic, 0), TopicPartitionStateZNode.encode(state))


def _invariants(result: SimResult) -> set[str]:
    return {v.invariant for v in result.violations}


def test_leader_outside_isr_is_caught() -> None:
    async def body(world: SimWorld) -> None:
        topic = await _topic(world)
        await _write_state(world, topic, 3, 99, [1, 2], world.zk.controller_epoch())

    assert "leader-in-isr-in-replicas" in _invariants(_run(body))


def test_isr_outside_replicas_is_caught() -> None:
    async def body(world: SimWorld) -> None:
        topic = await _topic(world)
        await _write_state(world, topic, 1, 99, [1, 7], world.zk.controller_epoch())

    assert "leader-in-isr-in-replicas" in _invariants(_run(body))


def test_leader_epoch_going_back_is_caught() -> None:
    async def body(world: SimWorld) -> None:
        topic = await _topic(world)
        found = world.zk.read(paths.partition_state_path(topic, 0))
        assert found is not None
        current = TopicPartitionStateZNode.decode(found[0], "", 0)
        lai = current.leader_and_isr
        await _write_state(world, topic, lai.leader, lai.leader_epoch - 1, list(lai.isr), current.controller_epoch)

    assert "epochs-monotonic" in _invariants(_run(body))


def test_controller_epoch_going_back_is_caught() -> None:
    async def body(world: SimWorld) -> None:
        await world._admin_session.set_data(paths.CONTROLLER_EPOCH, b"0")

    assert "epochs-monotonic" in _invariants(_run(body))


def test_two_controllers_in_one_epoch_are_caught() -> None:
    async def body(world: SimWorld) -> None:
        active = world.active_controllers()[0]
        other = next(h for h in world.hosts if h is not active)
        other.controller.context.fencing = active.controller.context.fencing
        other.controller.core.active_controller_id = other.broker_id
        await world.sleep(1)

    assert "one-controller-per-epoch" in _invariants(_run(body))


def test_a_request_with_a_stale_broker_epoch_accepted_is_caught() -> None:
    async def body(world: SimWorld) -> None:
        controller = world.active_controllers()[0]
        target = next(h for h in world.hosts if h is not controller)
        plane = target.control_plane
        request = UpdateMetadataRequest(controller.broker_id, controller.controller.context.epoch,
                                        plane.broker_epoch - 1)
        broker = next(b for b in [target.server.config.broker()])
        await world.network.send(controller.process, broker, request)

    assert "broker-rejects-stale-broker-epoch" in _invariants(_run(body, mutations=("no-broker-epoch-check",)))
    # and with the broker's check on, the same request is refused: no violation
    assert _run(body).ok


def test_no_controller_after_heal_within_the_bound_is_a_liveness_violation() -> None:
    async def body(world: SimWorld) -> None:
        for host in world.hosts:
            world.crash(host.broker_id)

    result = _run(body, liveness_bound_ms=1000)
    assert [v.invariant for v in result.violations] == ["liveness-after-heal"]
    assert "active controllers" in result.violations[0].detail
