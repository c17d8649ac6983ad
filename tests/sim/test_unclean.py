"""Unclean leader election enabled at runtime in the simulator: the scenario really elects from outside the ISR
(and the old leaders come back ahead and truncate), every existing invariant holds, and each unclean-election
invariant fires when what it forbids happens (the ``unclean-read-as-enabled`` mutation; by hand)."""

from __future__ import annotations

from typing import Any

from tests.sim.helpers import ci_config, describe_failures, run

from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch
from zkcontroller.sim.invariants_unclean import UncleanElection
from zkcontroller.sim.scenarios import SCENARIO_SETUP, scenario_body
from zkcontroller.sim.world import SimResult, SimWorld
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import TopicPartitionStateZNode

SCENARIO = "unclean-election-under-faults"


def _run(seed: int, *, tweak: Any = None, **changes: object) -> tuple[SimWorld, SimResult]:
    world = SimWorld(ci_config(SCENARIO, seed, **changes))
    SCENARIO_SETUP[SCENARIO](world)
    if tweak is not None:
        tweak(world)
    return world, world.run(scenario_body(SCENARIO))


def test_unclean_elections_happen_and_every_invariant_holds() -> None:
    results: list[SimResult] = []
    elections: list[UncleanElection] = []
    config_paths: set[str] = set()
    for seed in range(6):
        world, result = _run(seed)
        results.append(result)
        elections += world.checker.unclean.elections
        config_paths.update(world.checker.unclean._configs)
        assert result.unclean_elections == len(world.checker.unclean.elections)
    failures = [r for r in results if r.violations]
    assert not failures, describe_failures(failures)
    assert len(elections) >= 6, f"only {len(elections)} unclean elections in 6 seeds: the scenario lost its point"
    assert all(e.logged for e in elections), "an unclean election is missing from the event log"
    assert any(e.lost_offsets > 0 for e in elections), "no unclean election lost offsets: no old leader was ahead"
    # the operator used both levels: topic overrides and the dynamic broker default
    assert any(p.startswith("/config/topics/") for p in config_paths)
    assert paths.broker_config_path(paths.DEFAULT_ENTITY) in config_paths


def test_electing_from_outside_the_isr_where_it_is_disabled_is_caught() -> None:
    """The controller reads every topic's config as unclean-enabled: its elections under a disabled config land."""
    # which seeds catch it moves with every change to the schedule (the brokers' topic config reads moved seeds
    # 0-19 from 15 to 11): the bound is a rate well below what the runs give, not any run's figure
    results = [run(SCENARIO, seed, mutations=("unclean-read-as-enabled",)) for seed in range(20)]
    caught = [r for r in results if any(v.invariant == "unclean-election-only-when-enabled" for v in r.violations)]
    assert len(caught) >= 8, f"only {len(caught)}/20 seeds caught the mutation"
    assert all(v.invariant == "unclean-election-only-when-enabled" for r in caught for v in r.violations)


def test_an_unclean_election_missing_from_the_event_log_is_caught() -> None:
    """Deaf to the event log, the checker sees every unclean election as unlogged, and must say so wherever its
    rule holds the controller to it: the writer still running and active in the election's epoch at the end. An
    election whose controller lost its tenure meanwhile is excused (`invariants_unclean`). Which seeds elect,
    and whose controller keeps its tenure, moves with every change to the schedule (a broker no longer reading
    ``/config/changes`` on a session event moved seeds 2 and 4 into the excused case, followers truncating on
    fetch moved seed 1, the controller reading a notification pass's topics in one read moved seeds 0, 1, 9): the
    bound is a rate, five seeds caught within the first 24 (about half are caught over many seeds)."""
    def deaf(world: SimWorld) -> None:
        world.checker.unclean.on_event = lambda _line: None  # type: ignore[method-assign]

    caught = 0
    for seed in range(24):
        if caught >= 5:
            break
        world, result = _run(seed, tweak=deaf)
        assert all(v.invariant == "unclean-election-logged" for v in result.violations), describe_failures([result])
        if result.violations:
            caught += 1
            continue
        for election in world.checker.unclean.elections:  # none caught: each must have been excused
            host = world.host_of(election.writer)
            controller = None if host is None else host.controller
            assert host is None or host.state != "running" or controller is None or not controller.is_active \
                or controller.context.epoch != election.controller_epoch, f"seed {seed}: {election} not caught"
    assert caught >= 5, f"only {caught}/24 seeds caught an unclean election missing from the event log"


def test_a_leader_from_outside_the_isr_written_by_someone_else_is_caught() -> None:
    async def body(world: SimWorld) -> None:
        topic = await world.create_topic(1, 2)
        assert topic is not None
        await world.wait_stable(30_000)
        path = paths.partition_state_path(topic, 0)
        found = world.zk.read(path)
        assert found is not None
        state = TopicPartitionStateZNode.decode(found[0], path, 0)
        lai = state.leader_and_isr
        outsider = min({h.broker_id for h in world.hosts} - set(lai.isr))
        forged = LeaderAndIsr(outsider, lai.leader_epoch + 1, (outsider,), 0)
        await world._admin_session.set_data(
            path, TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(forged, state.controller_epoch)))

    result = SimWorld(ci_config("custom", 3)).run(body)
    assert "unclean-election-picks-live-out-of-sync-replica" in {v.invariant for v in result.violations}
