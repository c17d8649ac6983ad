"""The seed articles' split-brain case, on the simulator: a controller freezes in the middle of a long
BrokerChange (on a slow store) the moment one of its writes lands; another broker becomes controller; the old
one resumes and carries on with its stale event. It must not change ZooKeeper afterwards, must resign when it
notices, and brokers that have seen the newer controller epoch must refuse the requests it still sends.

These replace the narrow doubles that stood in for the freeze (a session holding every multi, a transport
holding one controller's requests): the simulator freezes the whole broker process at its seams instead.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.sim.helpers import ci_config

from zkcontroller.protocol.control_requests import ControlRequest, Errors
from zkcontroller.sim.split_brain import zombie_episode
from zkcontroller.sim.world import SimWorld
from zkcontroller.zk import paths
from zkcontroller.zk.znodes.controller import ControllerZNode

SEEDS = [0, 1, 2, 3, 4]


def _episode(depose: str, seed: int) -> tuple[SimWorld, dict[str, Any]]:
    seen: dict[str, Any] = {}

    async def body(world: SimWorld) -> None:
        await world.create_topic(world.config.partitions)
        await world.wait_stable(60_000)
        old = world.active_controllers()[0]
        seen["old"] = old
        seen["old_epoch"] = world.zk.controller_epoch()
        seen["old_broker_epoch"] = old.control_plane.broker_epoch
        world.checker.delivery_log = []
        await zombie_episode(world, depose)
        seen["paused"] = any(broker_id == old.broker_id for _, broker_id in world.pauses)
        await world.wait_stable(60_000)
        seen["controllers"] = [h.broker_id for h in world.active_controllers()]
        found = world.zk.read(paths.CONTROLLER)
        seen["controller_znode"] = None if found is None else ControllerZNode.decode(found[0])
        seen["epoch"] = world.zk.controller_epoch()
        seen["old_context_epoch"] = old.controller.context.epoch
        seen["old_active"] = old.controller.is_active
        seen["old_broker_epoch_after"] = old.control_plane.broker_epoch

    world = SimWorld(ci_config("split-brain", seed, partitions=40))
    seen["result"] = world.run(body)
    return world, seen


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("depose", ["expire-session", "move-controller"])
def test_stalled_controller_cannot_write_and_resigns(depose: str, seed: int) -> None:
    _, seen = _episode(depose, seed)
    result = seen["result"]
    assert result.ok, result.violations
    assert seen["paused"], "the controller never froze mid-event"
    old = seen["old"]
    assert old.broker_id not in seen["controllers"] and len(seen["controllers"]) == 1
    assert seen["controller_znode"] == seen["controllers"][0]
    assert seen["epoch"] == seen["old_epoch"] + 1
    assert not seen["old_active"] and seen["old_context_epoch"] == 0  # resigned: context reset
    assert result.split_brain.window_ms > 0  # it did believe it was controller alongside the new one
    assert result.split_brain.stale_writes_landed == 0  # nothing it tried landed
    if depose == "move-controller":
        assert result.split_brain.stale_writes_attempted >= 1  # its session was live: the epoch check stopped it
    else:
        assert seen["old_broker_epoch_after"] > seen["old_broker_epoch"]  # re-registered on a new session


@pytest.mark.parametrize("seed", SEEDS)
def test_brokers_refuse_requests_from_the_deposed_controller(seed: int) -> None:
    world, seen = _episode("expire-session", seed)
    assert seen["result"].ok
    old, new_epoch = seen["old"], seen["epoch"]
    log = world.checker.delivery_log or []
    stale = [(b, req, resp, before) for b, req, resp, before in log
             if isinstance(req, ControlRequest)  # not the brokers' own Fetch traffic
             and req.controller_id == old.broker_id and req.controller_epoch < new_epoch]
    assert stale, "the deposed controller sent nothing after it resumed"
    refused = [(b, resp) for b, _, resp, before in stale if before is not None and before >= new_epoch]
    assert refused, "no broker had seen the new controller before the old one's requests arrived"
    for _, response in refused:
        codes = {response.error} | {e for _, e in response.partition_errors}
        assert Errors.STALE_CONTROLLER_EPOCH in codes
        assert all(e is not Errors.NONE for _, e in response.partition_errors)
    for host in world.hosts:
        if host.up:
            assert host.control_plane.controller_epoch == new_epoch
