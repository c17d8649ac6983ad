"""Admin requests (topic deletion, legacy reassignment and preferred election), ISR-change and log-dir
notifications, and entity configs (the topic's unclean-leader-election override)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CreateMode,
    CreateOp,
    DeleteOp,
    ErrorResult,
    SetDataOp,
    Watcher,
)
from zkcontroller.coordination.errors import ErrorCode, NodeExistsError, NoNodeError, ZkError, error_for_code
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.client_base import BulkRead, KafkaZkClientBase
from zkcontroller.zk.errors import ZnodeDecodeError, require_data
from zkcontroller.zk.fencing import raise_for_result
from zkcontroller.zk.znodes import (
    UNCLEAN_LEADER_ELECTION_ENABLE,
    BoundReassignment,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityZNode,
    DeleteTopicsTopicZNode,
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
)
from zkcontroller.zk.znodes.sequential import SequentialNotificationZNode

T = TypeVar("T")

log = logging.getLogger(__name__)


class AdminOps(KafkaZkClientBase):
    async def _fenced_deletes(self, node_paths: Sequence[str], expected_epoch_zk_version: int) -> None:
        """Fenced deletes of many nodes, batched; already-absent nodes are fine, other failures raise."""
        results = await self._fenced_batch([(p, DeleteOp(p)) for p in node_paths], expected_epoch_zk_version)
        for path in node_paths:
            result = results[path]
            if isinstance(result, ZkError):
                raise result
            if isinstance(result, ErrorResult) and result.code != ErrorCode.NO_NODE:
                raise error_for_code(result.code, path)

    # ------------------------------------------------------------------ topic deletion

    async def get_topic_deletions(self, watch: Watcher | None = None) -> set[str]:
        return set(await self.get_children(paths.DELETE_TOPICS, watch))

    async def is_topic_marked_for_deletion(self, topic: str) -> bool:
        return await self.path_exists(DeleteTopicsTopicZNode.path(topic))

    async def create_delete_topic_path(self, topic: str) -> None:
        """What ``kafka-topics --delete`` does (admin side, not fenced)."""
        await self._session.ensure_path(paths.DELETE_TOPICS)
        await self._session.create(DeleteTopicsTopicZNode.path(topic), DeleteTopicsTopicZNode.encode())

    async def delete_topic_deletions(self, topics: Iterable[str], expected_epoch_zk_version: int) -> None:
        await self._fenced_deletes([DeleteTopicsTopicZNode.path(t) for t in sorted(set(topics))],
                                   expected_epoch_zk_version)

    # ------------------------------------------------------------------ legacy reassignment

    async def get_partition_reassignment(
        self, watch: Watcher | None = None
    ) -> dict[TopicPartition, tuple[int, ...]] | None:
        """The ZooKeeper-submitted reassignment, None if absent; ``watch`` sees creation too.

        Raises `ZnodeDecodeError` if malformed (Kafka warns and treats it as empty).
        """
        if watch is not None and not await self.path_exists(paths.REASSIGN_PARTITIONS, watch):
            return None
        found = await self.get_data_and_stat(paths.REASSIGN_PARTITIONS)
        if found is None:
            return None
        return ReassignPartitionsZNode.decode(require_data(found[0], paths.REASSIGN_PARTITIONS))  # Kafka: throws

    async def get_bound_partition_reassignment(self) -> BoundReassignment | None:
        """The znode as Kafka's Jackson binding reads it (`ReassignPartitionsZNode.decode_bound`), None if absent."""
        found = await self.get_data_and_stat(paths.REASSIGN_PARTITIONS)
        if found is None:
            return None
        return ReassignPartitionsZNode.decode_bound(require_data(found[0], paths.REASSIGN_PARTITIONS))

    async def reassign_partitions_in_progress(self) -> bool:
        return await self.path_exists(paths.REASSIGN_PARTITIONS)

    async def create_partition_reassignment(self, reassignment: Mapping[TopicPartition, Sequence[int]]) -> None:
        """What the legacy ``kafka-reassign-partitions --zookeeper`` tool does (not fenced)."""
        await self._session.ensure_path(paths.ADMIN)
        await self._session.create(paths.REASSIGN_PARTITIONS, ReassignPartitionsZNode.encode(reassignment))

    async def set_or_create_partition_reassignment(
        self, reassignment: Mapping[TopicPartition, Sequence[int]] | BoundReassignment, expected_epoch_zk_version: int
    ) -> None:
        """Fenced set, or fenced create when the node is gone."""
        data = (ReassignPartitionsZNode.encode_bound(reassignment) if isinstance(reassignment, BoundReassignment)
                else ReassignPartitionsZNode.encode(reassignment))
        path = paths.REASSIGN_PARTITIONS
        result = await self._fenced(SetDataOp(path, data, ANY_VERSION), expected_epoch_zk_version)
        if isinstance(result, ErrorResult) and result.code == ErrorCode.NO_NODE:
            result = await self._fenced(CreateOp(path, data), expected_epoch_zk_version)
        raise_for_result(result, path)

    async def delete_partition_reassignment(self, expected_epoch_zk_version: int) -> None:
        await self._fenced_deletes([paths.REASSIGN_PARTITIONS], expected_epoch_zk_version)

    # ------------------------------------------------------------------ legacy preferred election

    async def get_preferred_replica_election(
        self, watch: Watcher | None = None
    ) -> frozenset[TopicPartition] | None:
        if watch is not None and not await self.path_exists(paths.PREFERRED_REPLICA_ELECTION, watch):
            return None
        found = await self.get_data_and_stat(paths.PREFERRED_REPLICA_ELECTION)
        if found is None:
            return None
        return PreferredReplicaElectionZNode.decode(require_data(found[0], paths.PREFERRED_REPLICA_ELECTION))

    async def create_preferred_replica_election(self, partitions: Iterable[TopicPartition]) -> None:
        await self._session.ensure_path(paths.ADMIN)
        data = PreferredReplicaElectionZNode.encode(partitions)
        await self._session.create(paths.PREFERRED_REPLICA_ELECTION, data)

    async def delete_preferred_replica_election(self, expected_epoch_zk_version: int) -> None:
        await self._fenced_deletes([paths.PREFERRED_REPLICA_ELECTION], expected_epoch_zk_version)

    # ------------------------------------------------------------------ notifications

    async def create_notification(self, kind: type[SequentialNotificationZNode[T]], payload: T) -> str:
        """A persistent sequential notification of ``kind``; returns the created path."""
        return await self._session.create(kind.path(), kind.encode(payload), CreateMode.PERSISTENT_SEQUENTIAL)

    async def get_notification_sequence_numbers(self, kind: type[SequentialNotificationZNode[Any]],
                                                watch: Watcher | None = None) -> list[str]:
        """Sequence numbers of the pending notifications of ``kind``, in order (``watch``: on the parent)."""
        children = await self.get_children(kind.PARENT, watch)
        return [kind.sequence_number(c) for c in children if c.startswith(kind.PREFIX)]

    async def read_notifications(self, kind: type[SequentialNotificationZNode[T]],
                                 sequence_numbers: Iterable[str]) -> BulkRead[str, T]:
        return await self._read_many(sorted(set(sequence_numbers)), kind.path,
                                     lambda _n, data, _s, path: kind.decode(data, path))

    async def delete_notifications(self, kind: type[SequentialNotificationZNode[Any]],
                                   sequence_numbers: Iterable[str], expected_epoch_zk_version: int) -> None:
        await self._fenced_deletes([kind.path(n) for n in sorted(set(sequence_numbers))], expected_epoch_zk_version)

    # Kafka's names for the two notification kinds the controller reads (KafkaZkClient's methods):

    async def propagate_isr_changes(self, partitions: Iterable[TopicPartition]) -> str:
        """A leader's ISR-change notification (persistent sequential); returns the created path."""
        return await self.create_notification(IsrChangeNotificationSequenceZNode, partitions)

    async def get_all_isr_change_notifications(self, watch: Watcher | None = None) -> list[str]:
        return await self.get_notification_sequence_numbers(IsrChangeNotificationSequenceZNode, watch)

    async def get_partitions_from_isr_change_notifications(
        self, sequence_numbers: Iterable[str]
    ) -> BulkRead[str, frozenset[TopicPartition]]:
        read = await self.read_notifications(IsrChangeNotificationSequenceZNode, sequence_numbers)
        return read  # type: ignore[return-value]

    async def delete_isr_change_notifications(self, sequence_numbers: Iterable[str],
                                              expected_epoch_zk_version: int) -> None:
        await self.delete_notifications(IsrChangeNotificationSequenceZNode, sequence_numbers,
                                        expected_epoch_zk_version)

    async def propagate_log_dir_event(self, broker_id: int) -> str:
        return await self.create_notification(LogDirEventNotificationSequenceZNode, broker_id)

    async def get_all_log_dir_event_notifications(self, watch: Watcher | None = None) -> list[str]:
        return await self.get_notification_sequence_numbers(LogDirEventNotificationSequenceZNode, watch)

    async def get_broker_ids_from_log_dir_events(self, sequence_numbers: Iterable[str]) -> BulkRead[str, int]:
        return await self.read_notifications(LogDirEventNotificationSequenceZNode, sequence_numbers)

    async def delete_log_dir_event_notifications(self, sequence_numbers: Iterable[str],
                                                 expected_epoch_zk_version: int) -> None:
        await self.delete_notifications(LogDirEventNotificationSequenceZNode, sequence_numbers,
                                        expected_epoch_zk_version)

    # ------------------------------------------------------------------ configs

    async def get_entity_configs(self, entity_type: str, entity_name: str) -> dict[str, str]:
        """An entity's overrides; none if the node is absent (raises `ZnodeDecodeError` if malformed)."""
        path = paths.config_entity_path(entity_type, entity_name)
        found = await self.get_data_and_stat(path)
        return {} if found is None else ConfigEntityZNode.decode(found[0], path)

    async def get_entity_configs_lenient(self, entity_type: str, entity_name: str
                                         ) -> tuple[dict[str, str], ZnodeDecodeError | None]:
        """An entity's overrides as Kafka reads them (`ConfigEntityZNode.decode_lenient`): none if absent, and
        none, with the reason, for data Kafka ignores; raises `ZnodeDecodeError` for a non-string value."""
        path = paths.config_entity_path(entity_type, entity_name)
        found = await self.get_data_and_stat(path)
        return ({}, None) if found is None else ConfigEntityZNode.decode_lenient(found[0], path)

    async def get_topic_configs(self, topics: Iterable[str], *, lenient: bool = False
                                ) -> BulkRead[str, dict[str, str]]:
        """Topic overrides, read pipelined; ``lenient`` as in `get_entity_configs_lenient` (data Kafka reads as
        no overrides is in ``read_as_empty``)."""
        if lenient:
            return await self._read_many_lenient(sorted(set(topics)), paths.topic_config_path,
                                                 ConfigEntityZNode.decode_lenient)
        return await self._read_many(
            sorted(set(topics)), paths.topic_config_path,
            lambda _t, data, _s, path: ConfigEntityZNode.decode(data, path),
            decode_null=lambda _t, _s, _path: {},  # Kafka's ConfigEntityZNode.decode: null is no overrides
        )

    async def get_broker_configs(self, entity_name: str) -> dict[str, str]:
        """The dynamic broker configs of ``/config/brokers/<entity_name>`` (a broker id or ``<default>``); none if
        absent. The broker counterpart of `get_topic_configs`: raises `ZnodeDecodeError` if malformed, so the
        caller can keep what it had."""
        return await self.get_entity_configs(paths.ConfigType.BROKER, entity_name)

    async def set_or_create_entity_configs(
        self, entity_type: str, entity_name: str, config: Mapping[str, str]
    ) -> None:
        """Admin-side config write (not fenced); brokers learn of it through a change notification."""
        path = paths.config_entity_path(entity_type, entity_name)
        data = ConfigEntityZNode.encode(config)
        try:
            await self._session.set_data(path, data, ANY_VERSION)
        except NoNodeError:
            # created as Kafka's createRecursive does: the parents (a <user>/clients/<id> node's user node too) only
            # if missing
            try:
                await self._session.create(path, data)
            except NoNodeError:
                await self._session.ensure_path(path.rsplit("/", 1)[0])
                await self._session.create(path, data)

    async def create_or_set_entity_configs(
        self, entity_type: str, entity_name: str, config: Mapping[str, str]
    ) -> None:
        """The config of an entity expected to have none yet (a topic being created): Kafka's ``createOrSet`` step
        taken first, a create (parents only if missing) and a setData if the znode is there after all. Ends as
        `set_or_create_entity_configs` does, without its setData failing first for a new topic (on ZooKeeper a
        round trip and an fsynced error transaction)."""
        path = paths.config_entity_path(entity_type, entity_name)
        data = ConfigEntityZNode.encode(config)
        try:
            try:
                await self._session.create(path, data)
            except NoNodeError:
                await self._session.ensure_path(path.rsplit("/", 1)[0])
                await self._session.create(path, data)
        except NodeExistsError:
            await self._session.set_data(path, data, ANY_VERSION)

    async def create_config_change_notification(self, entity_path: str) -> str:
        await self._session.ensure_path(paths.CONFIG_CHANGES)
        return await self.create_notification(ConfigEntityChangeNotificationSequenceZNode, entity_path)

    async def get_unclean_leader_election_override(self, topic: str) -> bool | None:
        """The topic's ``unclean.leader.election.enable`` override, None if not set (use the broker default).

        Parsed as Kafka's ConfigDef parses a BOOLEAN: ``true``/``false``, case-insensitive, trimmed.
        """
        config = await self.get_entity_configs(paths.ConfigType.TOPIC, topic)
        return unclean_leader_election_override(config, paths.topic_config_path(topic))

    async def delete_topic_configs(self, topics: Iterable[str], expected_epoch_zk_version: int) -> None:
        await self._fenced_deletes([paths.topic_config_path(t) for t in sorted(set(topics))],
                                   expected_epoch_zk_version)


def unclean_leader_election_override(config: Mapping[str, str], path: str) -> bool | None:
    """``unclean.leader.election.enable`` in a topic's overrides, None if not set; raises `ZnodeDecodeError` for
    a value ConfigDef's BOOLEAN refuses (``true``/``false``, case-insensitive, trimmed)."""
    value = config.get(UNCLEAN_LEADER_ELECTION_ENABLE)
    if value is None:
        return None
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise ZnodeDecodeError(path, f"{UNCLEAN_LEADER_ELECTION_ENABLE}: {value!r} is not a boolean")
    return text == "true"
