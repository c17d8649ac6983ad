"""Election rules (spec §5.7) as properties over random clusters, plus the context wrappers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    OfflinePartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
    elect_leaders_for_controlled_shutdown,
    elect_leaders_for_offline,
    elect_leaders_for_preferred_replica,
    elect_leaders_for_reassign,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
)
from zkcontroller.model import Broker, EndPoint, LeaderAndIsr, ReplicaAssignment
from zkcontroller.model import TopicPartition as TP

TP0 = TP("t", 0)
BROKER_IDS = st.integers(min_value=0, max_value=7)


@st.composite
def partitions(draw: st.DrawFn) -> tuple[tuple[int, ...], LeaderAndIsr, frozenset[int], frozenset[int]]:
    """(RS, current leadership with ISR ⊆ RS, online brokers, shutting-down brokers)."""
    rs = tuple(draw(st.lists(BROKER_IDS, min_size=1, max_size=5, unique=True)))
    isr = tuple(draw(st.lists(st.sampled_from(rs), min_size=1, max_size=len(rs), unique=True)))
    online = frozenset(draw(st.sets(BROKER_IDS)))
    shutting = frozenset(draw(st.sets(BROKER_IDS)))
    leader = draw(st.sampled_from((*isr, -1)))
    lai = LeaderAndIsr(leader, draw(st.integers(0, 100)), isr, draw(st.integers(0, 100)))
    return rs, lai, online, shutting


def _bumped(old: LeaderAndIsr, new: LeaderAndIsr) -> bool:
    return new.leader_epoch == old.leader_epoch + 1 and new.zk_version == old.zk_version


@given(partitions(), st.booleans())
def test_offline_election_rules(p: tuple, unclean_enabled: bool) -> None:
    rs, lai, online, _ = p
    result = leader_for_offline(TP0, lai, rs, online, unclean_enabled)
    live_isr = [r for r in rs if r in online and r in lai.isr]
    assert result.recipients == tuple(r for r in rs if r in online)
    if live_isr:
        assert result.leader_and_isr is not None and not result.unclean
        assert result.leader_and_isr.leader == live_isr[0]
        assert result.leader_and_isr.isr == tuple(r for r in lai.isr if r in online)
        assert _bumped(lai, result.leader_and_isr)
    elif unclean_enabled and result.recipients:
        assert result.unclean and result.leader_and_isr is not None
        assert result.leader_and_isr.leader == result.recipients[0]
        assert result.leader_and_isr.isr == (result.recipients[0],)
        assert _bumped(lai, result.leader_and_isr)
    else:
        assert result.leader_and_isr is None and not result.unclean


@given(partitions())
def test_offline_leader_is_always_online_and_clean_leader_in_isr(p: tuple) -> None:
    rs, lai, online, _ = p
    result = leader_for_offline(TP0, lai, rs, online, False)
    if result.leader_and_isr is not None:
        assert result.leader_and_isr.leader in online and result.leader_and_isr.leader in lai.isr
        assert result.leader_and_isr.leader in result.leader_and_isr.isr


@given(partitions())
def test_reassign_election_rules(p: tuple) -> None:
    rs, lai, online, _ = p
    target = rs[: max(1, len(rs) - 1)]
    result = leader_for_reassign(TP0, lai, target, online)
    assert result.recipients == target  # not filtered by liveness
    expected = next((r for r in target if r in online and r in lai.isr), None)
    if expected is None:
        assert result.leader_and_isr is None
    else:
        assert result.leader_and_isr == LeaderAndIsr(expected, lai.leader_epoch + 1, lai.isr, lai.zk_version)


@given(partitions())
def test_preferred_election_rules(p: tuple) -> None:
    rs, lai, online, _ = p
    result = leader_for_preferred_replica(TP0, lai, rs, online)
    assert result.recipients == rs
    if rs[0] in online and rs[0] in lai.isr:
        assert result.leader_and_isr == LeaderAndIsr(rs[0], lai.leader_epoch + 1, lai.isr, lai.zk_version)
    else:
        assert result.leader_and_isr is None


@given(partitions())
def test_controlled_shutdown_election_rules(p: tuple) -> None:
    rs, lai, online, shutting = p
    online_or_shutting = online | shutting
    result = leader_for_controlled_shutdown(TP0, lai, rs, online_or_shutting, shutting)
    assert result.recipients == tuple(r for r in rs if r in online_or_shutting)
    expected = next((r for r in rs if r in online_or_shutting and r in lai.isr and r not in shutting), None)
    if expected is None:
        assert result.leader_and_isr is None
        return
    new = result.leader_and_isr
    assert new is not None and new.leader == expected and _bumped(lai, new)
    assert new.isr == tuple(r for r in lai.isr if r not in shutting)
    assert not set(new.isr) & shutting


def test_no_leadership_means_no_election() -> None:
    result = leader_for_offline(TP0, None, (1, 2), {1, 2}, True)
    assert result.leader_and_isr is None and result.recipients == (1, 2)


def test_strategy_strings_are_kafkas() -> None:
    assert str(OfflinePartitionLeaderElectionStrategy(False)) == "OfflinePartitionLeaderElectionStrategy(false)"
    assert str(OfflinePartitionLeaderElectionStrategy(True)) == "OfflinePartitionLeaderElectionStrategy(true)"
    assert str(ReassignPartitionLeaderElectionStrategy()) == "ReassignPartitionLeaderElectionStrategy"
    assert str(PreferredReplicaPartitionLeaderElectionStrategy()) == "PreferredReplicaPartitionLeaderElectionStrategy"
    assert str(ControlledShutdownPartitionLeaderElectionStrategy()) == (
        "ControlledShutdownPartitionLeaderElectionStrategy")


# ---------------------------------------------------------------------- context wrappers


def _broker(i: int) -> Broker:
    return Broker(i, (EndPoint(f"h{i}", 9092, "PLAINTEXT", "PLAINTEXT"),))


def _context(live: set[int], shutting: set[int] = frozenset(), assignment: tuple[int, ...] = (1, 2, 3),
             ) -> ControllerContext:
    ctx = ControllerContext()
    ctx.set_live_brokers({_broker(b): 100 + b for b in live})
    ctx.shutting_down_broker_ids |= shutting
    ctx.set_all_topics({"t"})
    ctx.update_partition_full_replica_assignment(TP0, ReplicaAssignment(assignment))
    return ctx


@given(partitions(), st.booleans())
def test_offline_wrapper_counts_exactly_the_unclean_elections(p: tuple, unclean: bool) -> None:
    rs, lai, online, shutting = p
    ctx = ControllerContext()
    ctx.set_live_brokers({_broker(b): 1 for b in online | shutting})
    ctx.shutting_down_broker_ids |= shutting
    ctx.update_partition_full_replica_assignment(TP0, ReplicaAssignment(rs))
    [result] = elect_leaders_for_offline(ctx, [(TP0, lai)], {TP0: unclean})
    truly_online = online - shutting
    assert result == leader_for_offline(TP0, lai, rs, truly_online, unclean)
    assert ctx.stats.unclean_leader_elections == (1 if result.unclean else 0)
    assert not result.unclean or unclean


def test_offline_wrapper_excludes_offline_dirs_and_shutting_down() -> None:
    ctx = _context(live={1, 2, 3}, shutting={2})
    ctx.replicas_on_offline_dirs[1] = {TP0}
    [result] = elect_leaders_for_offline(ctx, [(TP0, LeaderAndIsr(1, 4, (1, 2, 3)))], {})
    assert result.leader_and_isr == LeaderAndIsr(3, 5, (3,))
    assert result.recipients == (3,)


def test_controlled_shutdown_wrapper_moves_leadership_off_shutting_broker() -> None:
    ctx = _context(live={1, 2, 3}, shutting={1})
    [result] = elect_leaders_for_controlled_shutdown(ctx, [(TP0, LeaderAndIsr(1, 0, (1, 2, 3)))])
    assert result.leader_and_isr == LeaderAndIsr(2, 1, (2, 3))
    assert result.recipients == (1, 2, 3)


def test_reassign_and_preferred_wrappers() -> None:
    ctx = _context(live={2, 4})
    ctx.update_partition_full_replica_assignment(TP0, ReplicaAssignment((3, 4, 2, 1), (4,), (1,)))
    lai = LeaderAndIsr(1, 7, (1, 2, 4))
    [reassigned] = elect_leaders_for_reassign(ctx, [(TP0, lai)])
    assert reassigned.leader_and_isr == LeaderAndIsr(4, 8, (1, 2, 4)) and reassigned.recipients == (3, 4, 2)
    [preferred] = elect_leaders_for_preferred_replica(ctx, [(TP0, lai)])
    assert preferred.leader_and_isr is None and preferred.recipients == (3, 4, 2, 1)
