"""Offline elections through `PartitionStateMachine._elect`, shortcuts and all, against a plain model of Kafka 2.8's
`collectUncleanLeaderElectionState` followed by `Election.leaderForOffline` (PartitionStateMachine.scala,
Election.scala, PartitionLeaderElectionAlgorithms.scala), partition by partition.

`_elect` routes around the per-partition path twice: it skips the unclean-state read when every ISR keeps a live
member, and `elect_leaders_for_offline` memoizes the election per (replica list, ISR) pair when unclean is off for
all and no log dir failed. Either shortcut keyed or guarded too coarsely (a memo keyed on the replica *set*, a
live-ISR check on the replica list) changes a leader here; `test_offline_election_memo` only sees the memo itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers import ManualClock
from tests.unit.controller.conftest import broker, broker_epoch

from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.election import (
    ElectionResult,
    OfflinePartitionLeaderElectionStrategy,
    elect_leaders_for_offline,
)
from zkcontroller.controller.event_log import EventLog, StateChangeLogger
from zkcontroller.controller.fencing_token import FencingToken
from zkcontroller.controller.partition_state_machine import PartitionStateMachine
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.coordination.embedded_backend import EmbeddedBackend
from zkcontroller.model import LeaderAndIsr, ReplicaAssignment, TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

BROKERS = (1, 2, 3, 4, 5)
TOPICS = ("a", "b", "c")


REPLICA_SETS = ((1, 2), (2, 3), (1, 2, 3), (3, 4, 5), (1, 2, 3, 4), (5,))
"""Few replica sets, so that partitions share a set in different orders (a memo keyed on the set would mix them)."""


@st.composite
def partition(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(replica list, ISR, leader): the replica list a set's order, the ISR any subset in sorted or any order."""
    replicas = tuple(draw(st.permutations(draw(st.sampled_from(REPLICA_SETS)))))
    members = draw(st.permutations(replicas))[: draw(st.integers(0, len(replicas)))]
    isr = tuple(sorted(members) if draw(st.booleans()) else members)
    return replicas, isr, draw(st.sampled_from(replicas))


@st.composite
def cluster(draw: st.DrawFn) -> dict:
    parts = draw(st.lists(partition(), min_size=1, max_size=24))
    tps = [TopicPartition(draw(st.sampled_from(TOPICS)), i) for i in range(len(parts))]
    live = draw(st.sets(st.sampled_from(BROKERS)))
    offline_dirs: dict[int, set[TopicPartition]] = {}
    if draw(st.booleans()):  # a failed log dir: no one set of online brokers for all partitions
        for tp, (replicas, _, _) in zip(tps, parts, strict=True):
            for r in replicas:
                if draw(st.integers(0, 3)) == 0:
                    offline_dirs.setdefault(r, set()).add(tp)
    return {
        "partitions": dict(zip(tps, parts, strict=True)),
        "live": live,
        "offline_dirs": offline_dirs,
        "topic_unclean": {t: draw(st.sampled_from((None, "true", "false"))) for t in TOPICS},
        "broker_unclean": draw(st.booleans()),
        "allow_unclean": draw(st.booleans()),
    }


def kafka_offline_election(c: dict) -> list[ElectionResult]:
    """Kafka 2.8, spelled out: a replica is online when its broker is live and its dir has not failed; a partition
    with a live ISR member is never unclean; otherwise `allowUnclean` or the topic's effective config decides."""
    def online(r: int, tp: TopicPartition) -> bool:
        return r in c["live"] and tp not in c["offline_dirs"].get(r, ())

    out = []
    for tp, (replicas, isr, _leader) in sorted(c["partitions"].items()):  # the old leader plays no part
        if any(online(r, tp) for r in isr):
            unclean = False
        elif c["allow_unclean"]:
            unclean = True
        else:
            override = c["topic_unclean"][tp.topic]
            unclean = c["broker_unclean"] if override is None else override == "true"
        live = tuple(r for r in replicas if online(r, tp))
        chosen = next((r for r in replicas if r in live and r in isr), None)
        if chosen is None and unclean and live:
            chosen = live[0]
        if chosen is None:
            out.append(ElectionResult(tp, None, live))
        elif chosen in isr:
            new_isr = tuple(r for r in isr if online(r, tp))
            out.append(ElectionResult(tp, LeaderAndIsr(chosen, 4, new_isr, 7), live, False))
        else:
            out.append(ElectionResult(tp, LeaderAndIsr(chosen, 4, (chosen,), 7), live, True))
    return out


async def _ours(c: dict) -> tuple[list[ElectionResult], list[ElectionResult], list[ElectionResult]]:
    """`_elect` of every partition, and `elect_leaders_for_offline` with no unclean map (the memo) and with every
    partition marked clean (the per-partition path)."""
    clock = ManualClock()
    backend = EmbeddedBackend(clock)
    try:
        zk = KafkaZkClient(await backend.new_session(), clock)
        await zk.create_top_level_paths()
        for topic, value in c["topic_unclean"].items():
            if value is not None:
                await zk.set_or_create_entity_configs(
                    paths.ConfigType.TOPIC, topic, {"unclean.leader.election.enable": value})
        context = ControllerContext()
        context.fencing = FencingToken(1, 0)
        context.set_live_brokers({broker(b): broker_epoch(b) for b in c["live"]})
        context.replicas_on_offline_dirs.update({b: set(tps) for b, tps in c["offline_dirs"].items()})
        for tp, (replicas, _, _) in c["partitions"].items():
            context.update_partition_full_replica_assignment(tp, ReplicaAssignment(replicas))
        config = ControllerConfig(broker_id=1, unclean_leader_election_enable=c["broker_unclean"])
        logger = StateChangeLogger(1, lambda: context.epoch, EventLog("test", clock, lambda _: None))
        batch = ControllerBrokerRequestBatch(1, context, lambda *_: None, logger)
        psm = PartitionStateMachine(config, context, zk, batch, logger)
        valid = [(tp, LeaderAndIsr(leader, 3, isr, 7)) for tp, (_, isr, leader) in sorted(c["partitions"].items())]
        elected = await psm._elect(valid, OfflinePartitionLeaderElectionStrategy(c["allow_unclean"]))
        return (elected, elect_leaders_for_offline(context, valid, {}),
                elect_leaders_for_offline(context, valid, {tp: False for tp, _ in valid}))
    finally:
        await backend.close()


def _by_partition(results: Sequence[ElectionResult]) -> Mapping[TopicPartition, ElectionResult]:
    return {r.topic_partition: r for r in results}


@settings(max_examples=300, deadline=None)
@given(cluster())
def test_offline_elections_are_kafkas_partition_by_partition(c: dict) -> None:
    elected, memo, per_partition = asyncio.run(_ours(c))
    assert _by_partition(elected) == _by_partition(kafka_offline_election(c))
    assert memo == per_partition
