"""Deletion and reassignment in the simulator: the scenarios do what they are named after, each new invariant
fires when what it forbids happens (by hand, through the admin session's writes), and the
``reassign-drops-origin-early`` mutation is caught on most seeds."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sim.helpers import ci_config, run

from zkcontroller.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from zkcontroller.sim.admin_workload import delete_topic
from zkcontroller.sim.world import SimResult, SimWorld
from zkcontroller.zk import paths
from zkcontroller.zk.znodes import TopicPartitionStateZNode, TopicZNode

SEEDS = range(20)


def _records(log_dir: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (log_dir / "events.jsonl").read_text().splitlines()]


def test_a_deletion_waits_for_the_broker_that_is_down_then_completes(tmp_path: Path) -> None:
    halted = completed = 0
    for seed in range(4):
        log_dir = tmp_path / str(seed)
        assert run("delete-with-broker-down", seed, log_dir=log_dir).ok
        deletions = [r for r in _records(log_dir) if r["type"] == "topic_deletion"]
        halted += sum(1 for r in deletions if r["phase"] == "halted")
        completed += sum(1 for r in deletions if r["phase"] == "completed")
    assert halted > 0, "no deletion ever had to wait for a broker"
    assert completed > 0


def test_reassignments_under_faults_complete(tmp_path: Path) -> None:
    assert run("reassign-under-faults", 1, log_dir=tmp_path).ok
    phases = [r["phase"] for r in _records(tmp_path) if r["type"] == "partition_reassignment"]
    assert "started" in phases and "completed" in phases


def test_operations_started_by_one_controller_are_finished_by_the_next(tmp_path: Path) -> None:
    finished_elsewhere = 0
    for seed in range(6):
        log_dir = tmp_path / str(seed)
        assert run("controller-moves-mid-operation", seed, log_dir=log_dir).ok
        started: dict[tuple[object, object], int] = {}
        for r in _records(log_dir):
            if r["type"] not in ("partition_reassignment", "topic_deletion"):
                continue
            key = (r["topic"], r.get("partition"))
            if r["phase"] in ("started", "queued"):
                started.setdefault(key, int(r["controller_epoch"]))  # type: ignore[arg-type]
            elif r["phase"] == "completed" and key in started and int(r["controller_epoch"]) > started[key]:  # type: ignore[arg-type]
                finished_elsewhere += 1
    assert finished_elsewhere > 0, "no operation outlived the controller that started it"


def test_dropping_the_original_replicas_early_is_caught_on_most_seeds() -> None:
    results = [run("reassign-under-faults", seed, mutations=("reassign-drops-origin-early",)) for seed in SEEDS]
    caught = [r for r in results if any(v.invariant == "replicas-leave-after-target-in-isr" for v in r.violations)]
    assert len(caught) > len(results) * 0.8, f"only {len(caught)}/{len(results)} seeds caught the mutation"


# ---------------------------------------------------------------------- each invariant by hand


def _run(body) -> SimResult:  # type: ignore[no-untyped-def]
    return SimWorld(ci_config("custom", 5)).run(body)


async def _topic(world: SimWorld) -> str:
    name = await world.create_topic(2, 2)
    assert name is not None
    await world.wait_stable(30_000)
    return name


def _invariants(result: SimResult) -> set[str]:
    return {v.invariant for v in result.violations}


def test_a_topic_written_after_its_deletion_is_caught() -> None:
    async def body(world: SimWorld) -> None:
        topic = await _topic(world)
        assert await delete_topic(world, topic)
        for _ in range(300):
            if topic not in world.topics():
                break
            await world.sleep(100)
        assert topic not in world.topics()
        zombie = {TopicPartition(topic, 0): ReplicaAssignment((1, 2))}
        await world._admin_session.create(paths.topic_path(topic), TopicZNode.encode(None, zombie))

    assert "deleted-topic-stays-deleted" in _invariants(_run(body))


def test_replicas_removed_before_the_target_is_in_the_isr_are_caught() -> None:
    async def body(world: SimWorld) -> None:
        topic = await _topic(world)
        current = world.checker.assignment(topic)
        brokers = {h.broker_id for h in world.hosts}
        newcomer = min(brokers - set(current[0]))
        moved = {TopicPartition(topic, p): ReplicaAssignment((current[p][0], newcomer) if p == 0 else r)
                 for p, r in current.items()}
        await world._admin_session.set_data(paths.topic_path(topic), TopicZNode.encode(None, moved))

    assert "replicas-leave-after-target-in-isr" in _invariants(_run(body))


def test_replicas_removed_after_the_target_caught_up_pass_though_the_isr_shrank_since() -> None:
    """The controller decides a completion on a caught-up ISR and writes the topic znode in a later event
    (`CompletedReassignmentsFlush`); a broker failure in between may shrink the ISR first."""
    async def body(world: SimWorld) -> None:
        topic = await _topic(world)
        current = world.checker.assignment(topic)
        kept, leaving = current[0]
        newcomer = min({h.broker_id for h in world.hosts} - {kept, leaving})
        session = world._admin_session

        async def write_topic(first: ReplicaAssignment) -> None:
            assignment = {TopicPartition(topic, p): first if p == 0 else ReplicaAssignment(r)
                          for p, r in current.items()}
            await session.set_data(paths.topic_path(topic), TopicZNode.encode(None, assignment))

        async def write_state(isr: tuple[int, ...]) -> None:
            found = world.zk.read(paths.partition_state_path(topic, 0))
            assert found is not None
            state = TopicPartitionStateZNode.decode(found[0], "", 0)
            lai = LeaderAndIsr(kept, state.leader_and_isr.leader_epoch + 1, isr, 0)
            written = LeaderIsrAndControllerEpoch(lai, state.controller_epoch)
            await session.set_data(paths.partition_state_path(topic, 0), TopicPartitionStateZNode.encode(written))

        await write_topic(ReplicaAssignment((kept, newcomer, leaving), (newcomer,), (leaving,)))
        await write_state((kept, newcomer, leaving))  # the target (kept, newcomer) caught up
        await write_state((kept,))  # then the newcomer's broker fell out of the ISR
        await write_topic(ReplicaAssignment((kept, newcomer)))

    assert "replicas-leave-after-target-in-isr" not in _invariants(_run(body))


def test_a_reassigning_partition_written_without_any_replica_in_its_isr_is_caught() -> None:
    async def body(world: SimWorld) -> None:
        topic = await _topic(world)
        current = world.checker.assignment(topic)
        brokers = {h.broker_id for h in world.hosts}
        newcomer = min(brokers - set(current[0]))
        rs = (*current[0], newcomer)
        moving = {TopicPartition(topic, p): (ReplicaAssignment(rs, (newcomer,), (current[0][1],)) if p == 0
                                              else ReplicaAssignment(r)) for p, r in current.items()}
        await world._admin_session.set_data(paths.topic_path(topic), TopicZNode.encode(None, moving))
        found = world.zk.read(paths.partition_state_path(topic, 0))
        assert found is not None
        state = TopicPartitionStateZNode.decode(found[0], "", 0)
        lai = state.leader_and_isr
        outsider = LeaderIsrAndControllerEpoch(LeaderAndIsr(-1, lai.leader_epoch + 1, (), 0),
                                               state.controller_epoch)
        await world._admin_session.set_data(paths.partition_state_path(topic, 0),
                                            TopicPartitionStateZNode.encode(outsider))

    result = _run(body)
    assert result.violations[0].invariant == "reassignment-keeps-an-isr-member", result.violations
