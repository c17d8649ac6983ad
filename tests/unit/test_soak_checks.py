"""The chaos soak's checker (`zkcontroller.cluster.soak_checks`) on planted snapshots: each violation it exists to
catch is caught and named, and the healthy snapshots around it pass, so a soak that reports nothing has checked."""

from __future__ import annotations

from zkcontroller.cluster.soak_checks import BrokerPartitionView, PartitionState, SoakChecker, ZkSnapshot
from zkcontroller.model import TopicPartition

TP = TopicPartition("t", 0)


def snap(leader: int = 1, epoch: int = 3, isr: tuple[int, ...] = (1, 2, 3), replicas: tuple[int, ...] = (1, 2, 3),
         controller: int | None = 1, controller_epoch: int | None = 5,
         registered: frozenset[int] = frozenset({1, 2, 3})) -> ZkSnapshot:
    return ZkSnapshot(controller, controller_epoch, registered, {TP: PartitionState(replicas, leader, epoch, isr)})


def names(found: list[object]) -> list[str]:
    return [v.invariant for v in found]  # type: ignore[attr-defined]


def test_a_healthy_history_passes_and_is_counted() -> None:
    checker = SoakChecker()
    assert checker.observe(snap()) == []
    assert checker.observe(snap(leader=2, epoch=4, isr=(2, 3), controller=2, controller_epoch=6)) == []
    assert checker.checks_passed == 2


def test_two_leaders_in_one_leader_epoch_are_caught() -> None:
    checker = SoakChecker()
    assert checker.observe(snap(leader=1, epoch=3)) == []
    assert names(checker.observe(snap(leader=2, epoch=3))) == ["one-leader-per-epoch"]


def test_epochs_going_backwards_are_caught() -> None:
    checker = SoakChecker()
    checker.observe(snap(epoch=4, controller_epoch=6))
    found = checker.observe(snap(epoch=3, controller_epoch=5))
    assert sorted(names(found)) == ["controller-epoch-monotonic", "leader-epoch-monotonic"]


def test_two_controllers_in_one_controller_epoch_are_caught() -> None:
    checker = SoakChecker()
    checker.observe(snap(controller=1, controller_epoch=5))
    assert names(checker.observe(snap(controller=2, controller_epoch=5))) == ["one-controller-per-epoch"]


def test_leader_outside_isr_and_isr_outside_replicas_are_caught() -> None:
    found = SoakChecker().observe(snap(leader=3, isr=(1, 4), replicas=(1, 2)))
    assert sorted(names(found)) == ["isr-in-replicas", "leader-in-isr", "leader-in-replicas"]


def test_an_acknowledged_offset_handed_out_twice_and_a_watermark_below_it_are_caught() -> None:
    checker = SoakChecker()
    assert checker.acknowledged(TP, 7) == []
    assert names(checker.acknowledged(TP, 7)) == ["acked-offset-unique"]
    floors = checker.floors()
    assert names(checker.watermarks(floors, {TP: (2, 7)})) == ["high-watermark-monotonic"]
    assert checker.watermarks(checker.floors(), {TP: (2, 8)}) == []
    assert names(checker.watermarks(checker.floors(), {TP: (3, 6)})) == ["high-watermark-monotonic"]


def test_a_log_holding_more_records_than_were_sent_is_caught_as_a_duplicate_append() -> None:
    assert SoakChecker.appended_once({TP: 8}, {TP: (2, 8)}) == []
    assert SoakChecker.appended_once({TP: 9}, {TP: (2, 8)}) == []  # one still in flight, or lost: no violation
    found = SoakChecker.appended_once({TP: 8}, {TP: (2, 9)})
    assert names(found) == ["no-duplicate-appends"]
    assert "high watermark 9, above the 8 records" in str(found[0])
    assert names(SoakChecker.appended_once({}, {TP: (1, 1)})) == ["no-duplicate-appends"]


def test_convergence_wants_one_live_controller_live_leaders_and_agreeing_brokers() -> None:
    agreeing = {b: {TP: BrokerPartitionView(1, 3, (1, 2, 3))} for b in (1, 2, 3)}
    actives = {1: True, 2: False, 3: False}
    assert SoakChecker.unsettled(snap(), [1, 2, 3], actives, agreeing, healed=True) == []
    two_active = SoakChecker.unsettled(snap(), [1, 2, 3], {**actives, 2: True}, agreeing)
    assert names(two_active) == ["one-controller"]
    stale = {**agreeing, 3: {TP: BrokerPartitionView(2, 2, (1, 2, 3))}}
    assert names(SoakChecker.unsettled(snap(), [1, 2, 3], actives, stale)) == ["metadata-agrees"]
    dead_leader = snap(leader=1, isr=(1, 2), registered=frozenset({2, 3}), controller=2)
    found = SoakChecker.unsettled(dead_leader, [2, 3], {2: True, 3: False},
                                  {b: {TP: BrokerPartitionView(1, 3, (1, 2))} for b in (2, 3)}, healed=True)
    assert sorted(names(found)) == ["full-isr-after-heal", "live-leader"]
