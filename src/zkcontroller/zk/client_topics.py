"""Topics: assignments and topic ids, partition states (batched fenced creates and conditional updates),
and topic znode deletion."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CreateOp,
    DeleteOp,
    ErrorResult,
    Op,
    OpResult,
    SetDataOp,
    SetDataResult,
    Watcher,
)
from zkcontroller.coordination.errors import ErrorCode, NoNodeError, ZkError, error_for_code
from zkcontroller.model import (
    INITIAL_PARTITION_EPOCH,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicId,
    TopicIdReplicaAssignment,
    TopicPartition,
    sorted_partitions,
)
from zkcontroller.zk import paths
from zkcontroller.zk.client_base import BulkRead, KafkaZkClientBase
from zkcontroller.zk.errors import require_data
from zkcontroller.zk.fencing import raise_for_result
from zkcontroller.zk.pipeline import pipelined
from zkcontroller.zk.write_ops import checked_partition_state_paths, set_data_ops
from zkcontroller.zk.znodes import TopicPartitionStateZNode, TopicZNode

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class UpdateLeaderAndIsrResult:
    """Per partition: written (with its new zkVersion), version conflict (re-read and retry), or failed; each in
    partition order (callers rely on ``finished``'s, not to sort it again)."""

    finished: dict[TopicPartition, LeaderAndIsr] = field(default_factory=dict)
    to_retry: list[TopicPartition] = field(default_factory=list)
    failed: dict[TopicPartition, ZkError] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CreatePartitionStatesResult:
    """Per partition: state znode created (zkVersion 0), or the error (NODEEXISTS: already initialised)."""

    created: dict[TopicPartition, LeaderIsrAndControllerEpoch] = field(default_factory=dict)
    failed: dict[TopicPartition, ZkError] = field(default_factory=dict)


def _as_error(result: OpResult | ZkError, path: str) -> ZkError | None:
    if isinstance(result, ZkError):
        return result
    if isinstance(result, ErrorResult):
        return error_for_code(result.code, path)
    return None


class TopicOps(KafkaZkClientBase):
    # ------------------------------------------------------------------ assignments

    async def get_all_topics_in_cluster(self, watch: Watcher | None = None) -> set[str]:
        return set(await self.get_children(paths.TOPICS, watch))

    async def get_topic_assignments(
        self, topics: Iterable[str], watch: Watcher | None = None, *, lenient: bool = False
    ) -> BulkRead[str, TopicIdReplicaAssignment]:
        """Topic ids and full assignments, read pipelined (``getReplicaAssignmentAndTopicIdForTopics``).

        ``lenient`` reads as Kafka does (`TopicZNode.decode_lenient`): a topic znode that is not JSON is an
        empty assignment, also listed in ``read_as_empty``; otherwise it is malformed."""
        if lenient:
            return await self._read_many_lenient(sorted(set(topics)), TopicZNode.path, TopicZNode.decode_lenient,
                                                 watch)
        return await self._read_many(
            sorted(set(topics)), TopicZNode.path,
            lambda _topic, data, _stat, path: TopicZNode.decode(data, path), watch,
        )

    async def get_full_replica_assignment_for_topics(
        self, topics: Iterable[str]
    ) -> BulkRead[TopicPartition, ReplicaAssignment]:
        read = await self.get_topic_assignments(topics)
        values = {tp: ra for t in read.values.values() for tp, ra in t.assignment.items()}
        return BulkRead(values, read.malformed)

    async def get_partitions_for_topics(self, topics: Iterable[str]) -> BulkRead[str, list[int]]:
        read = await self.get_topic_assignments(topics)
        values = {t: sorted(tp.partition for tp in a.assignment) for t, a in read.values.items()}
        return BulkRead(values, read.malformed)

    async def create_topic_assignment(
        self, topic: str, topic_id: TopicId | None, assignment: Mapping[TopicPartition, ReplicaAssignment]
    ) -> None:
        """What admin tools do to create a topic (not fenced); NodeExistsError if it exists. Created first and its
        parent only if missing, as Kafka's ``createRecursive`` does: one round trip, not three, a topic."""
        path, data = TopicZNode.path(topic), TopicZNode.encode(topic_id, assignment)
        try:
            await self._session.create(path, data)
        except NoNodeError:
            await self._session.ensure_path(paths.TOPICS)
            await self._session.create(path, data)

    async def set_topic_assignment(
        self,
        topic: str,
        topic_id: TopicId | None,
        assignment: Mapping[TopicPartition, ReplicaAssignment],
        expected_epoch_zk_version: int,
    ) -> None:
        """Fenced unconditional rewrite (reassignment progress, restore, topic id)."""
        path = TopicZNode.path(topic)
        op = SetDataOp(path, TopicZNode.encode(topic_id, assignment), ANY_VERSION)
        raise_for_result(await self._fenced(op, expected_epoch_zk_version), path)

    async def assign_topic_ids(
        self, topics: Iterable[TopicIdReplicaAssignment], expected_epoch_zk_version: int
    ) -> list[TopicIdReplicaAssignment]:
        """Give every topic lacking an id a fresh random one (from the injected source) and write it back,
        fenced (§9.4). Returns all topics with their ids; raises the first failed write's error."""
        if self._rng is None:
            raise RuntimeError("KafkaZkClient needs an injected rng to generate topic ids")
        out, ops = [], []
        for t in sorted(topics, key=lambda t: t.topic):
            if t.topic_id is None:
                t = TopicIdReplicaAssignment(t.topic, TopicId.generate(self._rng), t.assignment)
                ops.append((t.topic, SetDataOp(TopicZNode.path(t.topic),
                                               TopicZNode.encode(t.topic_id, t.assignment), ANY_VERSION)))
            out.append(t)
        results = await self._fenced_batch(ops, expected_epoch_zk_version)
        for topic, result in results.items():
            error = _as_error(result, TopicZNode.path(topic))
            if error is not None:
                raise error
        return out

    # ------------------------------------------------------------------ partition states

    async def get_topic_partition_states(
        self, partitions: Iterable[TopicPartition], watch: Watcher | None = None
    ) -> BulkRead[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Leader, ISR, controller epoch and zkVersion of many partitions, read pipelined."""
        return await self._read_many(
            sorted_partitions(set(partitions)), TopicPartitionStateZNode.path,
            lambda _tp, data, stat, path: TopicPartitionStateZNode.decode(data, path, stat.version), watch,
        )

    async def get_topic_partition_state(
        self, tp: TopicPartition, watch: Watcher | None = None
    ) -> LeaderIsrAndControllerEpoch | None:
        """One partition's state (raises `ZnodeDecodeError` if malformed)."""
        path = TopicPartitionStateZNode.path(tp)
        found = await self.get_data_and_stat(path, watch)
        if found is None:
            return None
        return TopicPartitionStateZNode.decode(require_data(found[0], path), path, found[1].version)

    async def create_topic_partition_states(
        self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch], expected_epoch_zk_version: int
    ) -> CreatePartitionStatesResult:
        """Initialise partitions: fenced creates of ``partitions``, ``partitions/<p>`` (existing is fine)
        and then ``partitions/<p>/state``, each level batched."""
        parts = sorted_partitions(states)
        topics = sorted({tp.topic for tp in parts})
        expected = expected_epoch_zk_version
        await self._create_parents([(t, paths.topic_partitions_path(t)) for t in topics], expected)
        await self._create_parents([(tp, paths.topic_partition_path(tp.topic, tp.partition)) for tp in parts],
                                   expected)
        ops: list[tuple[TopicPartition, Op]] = [
            (tp, CreateOp(TopicPartitionStateZNode.path(tp), TopicPartitionStateZNode.encode(states[tp])))
            for tp in parts
        ]
        results = await self._fenced_batch(ops, expected)
        out = CreatePartitionStatesResult()
        for tp in parts:
            error = _as_error(results[tp], TopicPartitionStateZNode.path(tp))
            if error is None:
                lai = states[tp].leader_and_isr.with_zk_version(INITIAL_PARTITION_EPOCH)
                out.created[tp] = LeaderIsrAndControllerEpoch(lai, states[tp].controller_epoch)
            else:
                out.failed[tp] = error
        return out

    async def _create_parents(self, keyed_paths: list[tuple[object, str]], expected: int) -> None:
        # null data, as Kafka's createTopicPartitions / createTopicPartition (``zkClient.createRecursive`` of null)
        results = await self._fenced_batch([(key, CreateOp(path, None)) for key, path in keyed_paths], expected)
        for key, path in keyed_paths:
            error = _as_error(results[key], path)
            if error is not None and error.code != ErrorCode.NODE_EXISTS:
                log.warning("Failed to create %s: %s", path, error)

    async def update_leader_and_isr(
        self,
        leader_and_isrs: Mapping[TopicPartition, LeaderAndIsr],
        controller_epoch: int,
        expected_epoch_zk_version: int,
    ) -> UpdateLeaderAndIsrResult:
        """Conditional writes of partition states (expected version = each one's ``zk_version``), batched.

        Raises `ControllerMovedError` if our epoch is stale. BADVERSION → ``to_retry`` (the caller re-reads
        and retries); any other failure → ``failed``; success → ``finished`` with the new zkVersion.
        """
        parts = sorted_partitions(leader_and_isrs)
        lais = [leader_and_isrs[tp] for tp in parts]
        state_paths, paths_checked = checked_partition_state_paths(parts)
        ops: list[tuple[TopicPartition, Op]] = list(zip(parts, set_data_ops(
            state_paths, TopicPartitionStateZNode.encode_all(lais, controller_epoch),
            [lai.zk_version for lai in lais]), strict=True))
        results = await self._fenced_batch(ops, expected_epoch_zk_version, paths_checked=paths_checked)
        out = UpdateLeaderAndIsrResult()
        finished = out.finished
        new_tuple = tuple.__new__  # `LeaderAndIsr.with_zk_version` without its two Python frames
        for (tp, _), lai in zip(ops, lais, strict=True):
            result = results[tp]
            if isinstance(result, SetDataResult):
                finished[tp] = new_tuple(LeaderAndIsr, (lai.leader, lai.leader_epoch, lai.isr, result.stat.version))
            elif isinstance(result, ErrorResult) and result.code == ErrorCode.BAD_VERSION:
                out.to_retry.append(tp)
            else:
                out.failed[tp] = _as_error(result, TopicPartitionStateZNode.path(tp)) or error_for_code(
                    ErrorCode.SYSTEM_ERROR, TopicPartitionStateZNode.path(tp))
        return out

    # ------------------------------------------------------------------ deletion

    async def delete_topic_znode(self, topic: str, expected_epoch_zk_version: int) -> None:
        """Recursively delete ``/brokers/topics/<t>``: listings unfenced, every delete fenced (§1.4).

        The whole subtree goes in ordered batches (children before parents), not one multi per node.
        """
        nodes = await self._subtree_deepest_first(TopicZNode.path(topic))
        results = await self._fenced_batch([(p, DeleteOp(p)) for p in nodes], expected_epoch_zk_version,
                                           ordered=True)
        for path in nodes:
            error = _as_error(results[path], path)
            if error is not None and error.code != ErrorCode.NO_NODE:
                raise error

    async def _subtree_deepest_first(self, root: str) -> list[str]:
        """Every node under ``root`` (included), deepest level first; each level listed pipelined."""
        if not await self.path_exists(root):
            return []
        levels = [[root]]
        while levels[-1]:
            listings = await pipelined(levels[-1], self.get_children, self.limits.max_in_flight)
            levels.append([f"{parent}/{child}" for parent, children in zip(levels[-1], listings, strict=True)
                           for child in children])
        return [path for level in reversed(levels) for path in level]
