"""The healing scenarios do what they are named after, and the data-plane liveness checks can fail: with ISR
expansion lost at the delivery seam, or with automatic leader rebalancing off, the cluster does not heal and
the run says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.sim.helpers import ci_config

from zkcontroller.coordination.api import CreateOp, DeleteOp, Op, SetDataOp
from zkcontroller.protocol.inter_broker import AlterIsrRequest, ControlledShutdownRequest
from zkcontroller.sim.scenarios import SCENARIO_SETUP, scenario_body
from zkcontroller.sim.world import SimResult, SimWorld

SEEDS = range(20)


def _run(scenario: str, seed: int, *, tweak: Any = None, **changes: object) -> tuple[SimWorld, SimResult]:
    world = SimWorld(ci_config(scenario, seed, **changes))
    SCENARIO_SETUP.get(scenario, lambda _w: None)(world)
    if tweak is not None:
        tweak(world)
    world.checker.delivery_log = []
    return world, world.run(scenario_body(scenario))


def _alter_isr(world: SimWorld) -> list[AlterIsrRequest]:
    assert world.checker.delivery_log is not None
    return [req for _, req, _, _ in world.checker.delivery_log if isinstance(req, AlterIsrRequest)]


def test_a_paused_follower_is_shrunk_out_by_its_leader_and_expanded_back() -> None:
    shrunk = expanded = 0
    for seed in range(5):
        world, result = _run("paused-follower", seed)
        assert result.ok, result.violations
        replicas = world.config.replication_factor
        for request in _alter_isr(world):
            shrunk += sum(1 for p in request.partitions if len(p.new_isr) < replicas)
            expanded += sum(1 for p in request.partitions if len(p.new_isr) == replicas)
    assert shrunk > 0, "no leader ever shrank an ISR: the follower was never out of sync long enough"
    assert expanded > 0, "no leader ever asked to expand an ISR"


def test_before_alter_isr_leaders_write_their_isr_changes_and_notify_the_controller() -> None:
    """At IBP 2.6 no AlterIsr is sent: leaders write the partition state unfenced and publish
    ``/isr_change_notification`` znodes, which the controller deletes once it has propagated them."""
    seen = {"leader_writes": 0, "notified": 0, "deleted": 0}

    def spy(world: SimWorld) -> None:
        inner = world.checker.on_write

        def on_write(owner: Any, ops: list[Op], landed: bool, fenced: bool) -> None:
            if landed:
                for op in ops:
                    if op.path.startswith("/isr_change_notification/"):
                        if isinstance(op, CreateOp | DeleteOp):
                            seen["notified" if isinstance(op, CreateOp) else "deleted"] += 1
                    elif isinstance(op, SetDataOp) and op.path.endswith("/state") and not fenced:
                        seen["leader_writes"] += 1
            inner(owner, ops, landed, fenced)

        world.checker.on_write = on_write  # type: ignore[method-assign]

    for seed in range(3):
        world, result = _run("paused-follower-ibp-2.6", seed, tweak=spy)
        assert result.ok, result.violations
        assert not _alter_isr(world), "a broker at IBP 2.6-IV0 sent AlterIsr"
        assert world.zk.children("/isr_change_notification") == [], "a notification was left unhandled"
    assert seen["leader_writes"] > 0, "no leader wrote an ISR change itself"
    assert seen["notified"] > 0 and seen["deleted"] == seen["notified"], seen


def test_a_controlled_shutdown_storm_goes_through_the_controller(tmp_path: Path) -> None:
    world, result = _run("controlled-shutdown-storm", 3, log_dir=tmp_path)
    assert result.ok, result.violations
    assert world.checker.delivery_log is not None
    asked = [req for _, req, _, _ in world.checker.delivery_log if isinstance(req, ControlledShutdownRequest)]
    assert len(asked) >= 2
    records = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    moved = [r for r in records if r["type"] == "leader_election" and r["strategy"] == "controlled_shutdown"]
    assert moved, "no leadership was moved off a broker shutting down"
    assert all(r["leader"] != r["old_leader"] for r in moved)


def test_lost_isr_expansions_are_caught_by_liveness_on_most_seeds() -> None:
    caught = 0
    for seed in SEEDS:
        _, result = _run("paused-follower", seed, mutations=("no-isr-expansion",))
        if any(v.invariant == "liveness-after-heal" and "lacks live replicas" in v.detail for v in result.violations):
            caught += 1
    assert caught > len(SEEDS) * 0.8, f"only {caught}/{len(SEEDS)} seeds caught the lost ISR expansions"


def test_without_automatic_rebalancing_leadership_stays_off_the_preferred_replicas() -> None:
    def no_rebalance(world: SimWorld) -> None:
        world.controller_overrides["auto_leader_rebalance_enable"] = False

    caught = 0
    for seed in SEEDS:
        _, result = _run("preferred-election-under-faults", seed, tweak=no_rebalance)
        if any("preferred replica" in v.detail for v in result.violations):
            caught += 1
    assert caught > len(SEEDS) * 0.5, f"only {caught}/{len(SEEDS)} seeds left leadership off the preferred replicas"
