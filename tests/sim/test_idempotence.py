"""The idempotent producer in the simulator: its batches are the real v2 format the Produce path reads, each
idempotence invariant fires on a history that breaks it (and none on a correct one), a violation stops a run
like any other, and ``idempotent-failover`` holds every invariant (it did not while the brokers' producer state was the
leader's own: a new or restarted leader appended a retried batch it already held a second time)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.sim.helpers import ci_config, describe_failures, run

from zkcontroller.broker import produce as produce_module
from zkcontroller.broker import producer_ids
from zkcontroller.broker.producer_state import producer_batches
from zkcontroller.coordination.errors import SessionExpiredError
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.wire import log_validator, record_sets
from zkcontroller.sim import idempotent_producer
from zkcontroller.sim.idempotent_producer import MAX_IN_FLIGHT, Batch, _PartitionState, encode_batch
from zkcontroller.sim.invariants_idempotence import Ack, IdempotenceInvariants
from zkcontroller.sim.scenarios import SCENARIO_SETUP, scenario_body
from zkcontroller.sim.world import SimResult, SimWorld

SCENARIO = "idempotent-failover"
REPO = Path(__file__).resolve().parents[2]
TP = TopicPartition("t", 0)


def _history(acks: list[Ack], *, sole_writer: bool = True, gapless: bool = False) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    invariants = IdempotenceInvariants(lambda name, detail: found.append((name, detail)), sole_writer=sole_writer)
    for ack in acks:
        invariants.on_ack(ack)
    if gapless:
        invariants.check_gapless()
    return found


def _ack(base_sequence: int, count: int, base_offset: int, *, pid: int = 7, broker: int = 1,
         delivered: bool = True) -> Ack:
    return Ack(pid, "t", 0, base_sequence, count, base_offset, broker, delivered)


# ---------------------------------------------------------------------- the batches


@pytest.mark.parametrize("version", [3, 8])
def test_a_batch_is_a_valid_v2_batch_carrying_the_producer_fields(version: int) -> None:
    data = encode_batch(4242, 3, 17, 5, 1_767_225_600_123)
    entries = record_sets.inspect(data, version)
    assert log_validator.validate(data, entries, 1_000_000, "t-0") == 5
    [batch] = producer_batches(data, entries)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.count) == (4242, 3, 17, 5)
    assert (batch.max_timestamp, batch.last_sequence, batch.is_transactional) == (1_767_225_600_123, 21, False)


def test_a_retry_waits_until_nothing_earlier_is_in_flight_and_at_most_five_fly() -> None:
    state = _PartitionState(TP, 7)
    for seq in range(7):
        state.batches.append(Batch(TP, 7, seq, 1, b""))
    for batch in list(state.batches)[:MAX_IN_FLIGHT]:
        assert state.sendable() is batch
        batch.state = "in-flight"
    assert state.sendable() is None  # five in flight: the sixth waits
    first, second = state.batches[0], state.batches[1]
    second.state, second.attempts = "queued", 1  # the second failed while the first is still in flight
    assert state.sendable() is None  # Java's shouldStopDrainBatchesForPartition: retries go one at a time, in order
    first.state = "acked"
    assert state.sendable() is second


# ---------------------------------------------------------------------- each invariant fires on its violation


def test_a_correct_history_with_a_retried_duplicate_and_a_lost_answer_breaks_nothing() -> None:
    acks = [_ack(0, 2, 0), _ack(2, 3, 2, delivered=False), _ack(5, 1, 5), _ack(2, 3, 2, broker=2), _ack(6, 4, 6)]
    assert _history(acks, gapless=True) == []


def test_a_range_acknowledged_at_two_places_is_caught() -> None:
    [(name, detail)] = _history([_ack(0, 2, 0), _ack(2, 3, 2, delivered=False), _ack(2, 3, 5, broker=2)])
    assert name == "idempotent-retry-same-offsets"
    assert detail == ("producer 7 t-0: sequences 2..4 at offsets 2..4 (broker 1, answer lost), and again: "
                      "sequences 2..4 at offsets 5..7 (broker 2)")


def test_two_batches_at_overlapping_offsets_are_caught() -> None:
    found = _history([_ack(0, 3, 10), _ack(0, 2, 11, pid=8)])
    assert [name for name, _ in found] == ["idempotent-acks-disjoint"]
    assert "producer 8 t-0: sequences 0..1 at offsets 11..12" in found[0][1]


def test_a_later_sequence_at_an_earlier_offset_is_caught() -> None:
    found = _history([_ack(4, 2, 0), _ack(0, 2, 10)], sole_writer=False)
    assert [name for name, _ in found] == ["idempotent-sequence-order-is-offset-order"]
    assert found[0][1] == ("producer 7 t-0: sequences 4..5 at offsets 0..1 (broker 1) is not after "
                           "sequences 0..1 at offsets 10..11 (broker 1)")


def test_offsets_between_consecutive_batches_are_caught_where_the_producer_writes_alone() -> None:
    # the bug: seq 2..4 reached the follower at 2..4, its answer was lost, the new leader appended the retry at 5..7
    acks = [_ack(0, 2, 0), _ack(2, 3, 5, broker=2)]
    found = _history(acks)
    assert [name for name, _ in found] == ["idempotent-acks-adjacent"]
    assert "offsets 2..4 hold no acknowledged batch" in found[0][1]
    assert _history(acks, sole_writer=False) == []  # another writer may own those offsets


def test_a_hole_between_acknowledged_sequences_is_caught_once_drained() -> None:
    acks = [_ack(0, 2, 0), _ack(5, 1, 2)]  # sequences 2..4 skipped: the leader took 5 without them
    assert _history(acks, sole_writer=False) == []  # not while 2..4 may still be answered
    found = _history(acks, sole_writer=False, gapless=True)
    assert found == [("idempotent-acks-gapless", "producer 7 t-0: sequences 2..4 were never acknowledged, yet "
                                                 "sequences 5..5 at offsets 2..2 (broker 1) was")]


def test_a_refused_next_sequence_is_caught() -> None:
    found: list[tuple[str, str]] = []
    IdempotenceInvariants(lambda n, d: found.append((n, d))).on_out_of_order(7, "t", 0, 12, 3, 2)
    assert found == [("idempotent-next-sequence-accepted", "producer 7 t-0: broker 2 refused sequences 12..14 as "
                                                           "out of order, the batch right after the highest "
                                                           "acknowledged sequence")]


def test_a_violation_stops_a_run_and_is_reported_like_the_others() -> None:
    async def body(world: SimWorld) -> None:
        world.checker.idempotence.on_ack(_ack(0, 2, 0))
        world.checker.idempotence.on_ack(_ack(2, 1, 4))
        await world.sleep(1000)
        raise AssertionError("the run went on after a violation")

    result = SimWorld(ci_config("custom", 1)).run(body)
    assert [v.invariant for v in result.violations] == ["idempotent-acks-adjacent"]
    assert any("VIOLATION idempotent-acks-adjacent" in line for line in result.last_trace)


# ---------------------------------------------------------------------- the scenario


def _run(seed: int) -> tuple[SimWorld, SimResult]:
    world = SimWorld(ci_config(SCENARIO, seed))
    SCENARIO_SETUP[SCENARIO](world)
    return world, world.run(scenario_body(SCENARIO))


def test_the_scenario_produces_through_failovers_and_loses_answers_mid_wait() -> None:
    """Whatever the broker's verdict: the producer gets many batches acknowledged, retries, and the faults catch
    followers holding a batch whose answer the leader never sent."""
    worlds = [_run(seed) for seed in range(4)]
    for world, result in worlds:
        assert world.checker.idempotence.acks >= 100, describe_failures([result]) if result.violations else ""
        assert result.faults >= 1
    assert sum(w.checker.idempotence.acks for w, _ in worlds) >= 1000


def test_the_crash_after_replication_finds_a_batch_in_the_acks_wait() -> None:
    hits = 0
    for seed in range(6):
        world = SimWorld(ci_config(SCENARIO, seed))
        SCENARIO_SETUP[SCENARIO](world)
        record = world.record
        seen: list[str] = []

        def spy(kind: str, detail: str, record=record, seen=seen) -> None:  # type: ignore[no-untyped-def]
            if "past leader" in detail:
                seen.append(detail)
            record(kind, detail)

        world.record = spy  # type: ignore[method-assign]
        world.run(scenario_body(SCENARIO))
        hits += len(seen)
    assert hits >= 2, f"only {hits} crashes caught a fetched, unacknowledged batch in 6 seeds"


def test_idempotent_failover_holds_every_invariant() -> None:
    results = [run(SCENARIO, seed) for seed in range(10)]
    failures = [r for r in results if r.violations]
    assert not failures, describe_failures(failures)


def _run_with_append(seed: int, append: Callable[[SimWorld], Callable[..., Any]]) -> tuple[SimWorld, SimResult]:
    """The scenario with the leaders' append (inside the broker's Produce path) replaced by ``append(world)``."""
    world = SimWorld(ci_config(SCENARIO, seed))
    SCENARIO_SETUP[SCENARIO](world)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(produce_module, "_append", append(world))
        return world, world.run(scenario_body(SCENARIO))


def test_a_raise_in_a_live_brokers_produce_path_is_a_violation_not_a_retry() -> None:
    def append(world: SimWorld) -> Callable[..., Any]:
        def raising(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("append blew up")
        return raising

    world, result = _run_with_append(1, append)
    assert [v.invariant for v in result.violations] == ["produce-path-raised"]
    detail = result.violations[0].detail
    assert "alive and serving): RuntimeError: append blew up at test_idempotence.py:" in detail
    assert "<- produce.py:" in detail
    assert world.checker.idempotence.acks == 0


def test_a_request_failure_from_a_live_broker_is_a_violation_not_a_quiet_retry() -> None:
    """This producer's batches are well-formed, so a Produce failing as a whole (`RequestFailed`, Kafka's
    handleError) from a live broker is a bug too; it was recorded as a failed request and retried."""
    def append(world: SimWorld) -> Callable[..., Any]:
        def failing(*args: Any, **kwargs: Any) -> Any:
            raise record_sets.RequestFailed("append refused the request", "java.lang.IllegalStateException")
        return failing

    _world, result = _run_with_append(1, append)
    assert [v.invariant for v in result.violations] == ["produce-path-raised"]
    assert "RequestFailed" in result.violations[0].detail


def _run_with_first_id_claim_raising(error: Exception) -> tuple[SimWorld, SimResult, list[str]]:
    """The scenario with the first InitProducerId's id allocation raising ``error`` on a live broker (later ones
    allocate as usual); also the ``workload-failed`` records of the run."""
    world = SimWorld(ci_config(SCENARIO, 1))
    SCENARIO_SETUP[SCENARIO](world)
    failed: list[str] = []
    record = world.record

    def spy(kind: str, detail: str) -> None:
        if kind == "workload-failed":
            failed.append(detail)
        record(kind, detail)

    world.record = spy  # type: ignore[method-assign]
    real = producer_ids.ProducerIdManager.generate_producer_id
    raised: list[Exception] = []

    async def first_raises(self: producer_ids.ProducerIdManager) -> int:
        if not raised:
            raised.append(error)
            raise error
        return await real(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(producer_ids.ProducerIdManager, "generate_producer_id", first_raises)
        result = world.run(scenario_body(SCENARIO))
    assert raised, "no InitProducerId reached the id allocation"
    return world, result, failed


def test_an_init_producer_id_raise_on_a_live_broker_is_a_violation() -> None:
    """Before, any InitProducerId failure was recorded as a failed request and retried, a bug included."""
    _world, result, _failed = _run_with_first_id_claim_raising(RuntimeError("id allocation blew up"))
    assert [v.invariant for v in result.violations] == ["init-producer-id-raised"]
    assert "alive and serving): RuntimeError: id allocation blew up at test_idempotence.py:" in \
        result.violations[0].detail


def test_a_zookeeper_session_fault_in_init_producer_id_is_a_failed_request_retried() -> None:
    world, result, failed = _run_with_first_id_claim_raising(SessionExpiredError("/latest_producer_id_block"))
    assert not result.violations, describe_failures([result])
    assert any(f.startswith("InitProducerId on ") and "SessionExpiredError" in f for f in failed), failed
    assert world.checker.idempotence.acks > 0


def test_a_raise_under_a_broker_that_crashes_is_a_failed_request_not_a_violation() -> None:
    """The process dying mid-request (here: inside the append) is a fault: the producer retries elsewhere."""
    real = produce_module._append
    crashes: list[int] = []

    def append(world: SimWorld) -> Callable[..., Any]:
        def crashing(p: Any, entries: Any, acks: int, client_id: Any, cache: Any, target: Any,
                     scanned: Any = None) -> Any:
            if not crashes and target is not None:
                crashes.append(target.broker_id)
                world.host(target.broker_id).crash()
                raise RuntimeError("the process died under the append")
            return real(p, entries, acks, client_id, cache, target, scanned)
        return crashing

    world, result = _run_with_append(1, append)
    assert crashes
    assert not result.violations, describe_failures([result])
    assert world.checker.idempotence.acks >= 100


def test_init_producer_id_builds_one_id_manager_per_broker_process(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []

    class Counting(idempotent_producer.ProducerIdManager):
        def __init__(self, broker_id: int, *args: Any) -> None:
            built.append(broker_id)
            super().__init__(broker_id, *args)

    monkeypatch.setattr(idempotent_producer, "ProducerIdManager", Counting)

    async def body(world: SimWorld) -> None:
        await world.sleep(3000)
        producer = idempotent_producer.IdempotentProducer(world, "t", 1)
        for _ in range(12):
            await producer._init_producer_id()
        assert producer.producer_id >= 0
        assert len(built) == len(producer._id_managers) <= len(world.hosts)

    result = SimWorld(ci_config("custom", 1)).run(body)
    assert not result.violations
    assert built


def test_the_scenario_is_deterministic_across_hash_seeds() -> None:
    """The producer's choices (latencies, batch sizes, which broker it asks) come from the world's generator."""
    program = ("import sys; from tests.sim.helpers import run; r = run('idempotent-failover', 9); "
               "print(r.trace_hash, [(v.invariant, v.detail) for v in r.violations])")
    outputs = set()
    for hash_seed in ("0", "777"):
        done = subprocess.run([sys.executable, "-c", program], env={**os.environ, "PYTHONHASHSEED": hash_seed},
                              capture_output=True, text=True, timeout=120, check=True, cwd=REPO)
        outputs.add(done.stdout)
    assert len(outputs) == 1, outputs
