"""Broker registration (broker epoch = czxid), controller election, and cluster-wide nodes."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from zkcontroller.coordination.api import (
    ANY_VERSION,
    CreateMode,
    CreateOp,
    DeleteOp,
    ErrorResult,
    Op,
    SetDataOp,
    SetDataResult,
    Stat,
    Watcher,
)
from zkcontroller.coordination.errors import BadVersionError, NodeExistsError, NoNodeError, error_for_code
from zkcontroller.coordination.errors import ErrorCode as Code
from zkcontroller.model import INITIAL_CONTROLLER_EPOCH, Broker, BrokerInfo, FeatureZNodeData
from zkcontroller.zk import paths
from zkcontroller.zk.client_base import BulkRead, KafkaZkClientBase
from zkcontroller.zk.errors import ControllerEpochMissingError, ControllerMovedError, ZnodeDecodeError, require_data
from zkcontroller.zk.znodes import (
    BrokerIdZNode,
    ClusterIdZNode,
    ControllerEpochZNode,
    ControllerZNode,
    FeatureZNode,
    ProducerIdBlock,
    ProducerIdBlockZNode,
)

log = logging.getLogger(__name__)
kafka_zk_client_log = logging.getLogger("kafka.zk.KafkaZkClient")
"""Lines Kafka's ``KafkaZkClient`` writes, under its logger (server.log in a broker's files)."""

_MAX_REGISTRATION_ATTEMPTS = 10


@dataclass(frozen=True, slots=True)
class BrokerAndEpoch:
    broker: Broker
    epoch: int
    """The registration znode's czxid (KIP-380 broker epoch)."""


class BrokerOps(KafkaZkClientBase):
    # ------------------------------------------------------------------ broker registration

    async def register_broker(self, info: BrokerInfo) -> int:
        """Create ``/brokers/ids/<id>`` (ephemeral) and return the broker epoch, the node's czxid."""
        path = BrokerIdZNode.path(info.broker.id)
        stat = await self._checked_ephemeral_create(path, BrokerIdZNode.encode(info, self._clock()))
        kafka_zk_client_log.info("Registered broker %d at path %s with addresses: %s, czxid (broker epoch): %d",
                                 info.broker.id, path, ",".join(e.connection_string for e in info.broker.endpoints),
                                 stat.czxid)
        return stat.czxid

    async def _checked_ephemeral_create(self, path: str, data: bytes) -> Stat:
        """Kafka's ``CheckedEphemeral``: create+setData in one multi, so the setData stat gives the czxid;
        on NODEEXISTS decide whether the node is ours, a leftover of our expired session, or another's."""
        for _ in range(_MAX_REGISTRATION_ATTEMPTS):
            session = self._session
            ops: list[Op] = [CreateOp(path, b"", CreateMode.EPHEMERAL), SetDataOp(path, data, 0)]
            result = await session.multi(ops)
            if result.ok:
                stat = result.results[1]
                assert isinstance(stat, SetDataResult)
                self._registered_session_id = session.session_id
                return stat.stat
            if result.code != Code.NODE_EXISTS:
                raise error_for_code(result.code, path)
            existing = await self.get_data_and_stat(path)
            if existing is None:
                continue  # went away meanwhile: create again
            owner = existing[1].ephemeral_owner
            if owner == self._registered_session_id and owner != session.session_id:
                log.warning("Deleting %s left by our expired session 0x%x (ZOOKEEPER-2985)", path, owner)
                with contextlib.suppress(NoNodeError):
                    await session.delete(path, ANY_VERSION)
                continue
            if owner != session.session_id:
                log.error("Error while creating ephemeral at %s, node already exists and owner '0x%x' does "
                          "not match current session '0x%x'", path, owner, session.session_id)
                raise NodeExistsError(path)
            self._registered_session_id = session.session_id
            return existing[1]  # ours already: a retried multi that had committed
        raise NodeExistsError(path, f"gave up registering after {_MAX_REGISTRATION_ATTEMPTS} attempts")

    async def update_broker_info(self, info: BrokerInfo) -> None:
        """Rewrite our own registration (e.g. new endpoints) without changing the broker epoch."""
        await self._session.set_data(BrokerIdZNode.path(info.broker.id),
                                     BrokerIdZNode.encode(info, self._clock()), ANY_VERSION)

    async def get_sorted_broker_list(self, watch: Watcher | None = None) -> list[int]:
        """Registered broker ids (children of ``/brokers/ids``; ``watch`` is a child watch)."""
        ids = []
        for child in await self.get_children(paths.BROKER_IDS, watch):
            try:
                ids.append(paths.parse_broker_id(child))
            except ZnodeDecodeError as e:
                log.warning("%s", e)
        return sorted(ids)

    async def get_broker(self, broker_id: int, watch: Watcher | None = None) -> BrokerAndEpoch | None:
        """One registration with its epoch (raises `ZnodeDecodeError` if malformed)."""
        path = BrokerIdZNode.path(broker_id)
        found = await self.get_data_and_stat(path, watch)
        if found is None:
            return None
        return BrokerAndEpoch(BrokerIdZNode.decode(require_data(found[0], path), path).broker, found[1].czxid)

    async def get_all_brokers_and_epochs(self, watch: Watcher | None = None) -> BulkRead[int, BrokerAndEpoch]:
        """Every registered broker and its epoch, read pipelined; ``watch`` is armed on each node."""
        ids = await self.get_sorted_broker_list()
        return await self._read_many(
            ids, BrokerIdZNode.path,
            lambda _id, data, stat, path: BrokerAndEpoch(BrokerIdZNode.decode(data, path).broker, stat.czxid),
            watch,
        )

    # ------------------------------------------------------------------ controller election

    async def get_controller_id(self, watch: Watcher | None = None) -> int | None:
        """The active controller's broker id; ``watch`` fires on its change (exists-watch if absent)."""
        try:
            data, _ = await self._session.get_data(paths.CONTROLLER, watch)
        except NoNodeError:
            # Arm a creation watch, as Kafka's exists-based handler registration does.
            if watch is not None and await self._session.exists(paths.CONTROLLER, watch) is not None:
                return await self.get_controller_id()
            return None
        return ControllerZNode.decode(require_data(data, paths.CONTROLLER))  # Kafka's Json.parseBytes throws on null

    async def get_controller_owner(self) -> tuple[bytes | None, int] | None:
        """``/controller``'s raw data (None if null) and the session that owns the ephemeral node, or None if
        absent.

        Lets a broker notice that the node its session created was overwritten by another client.
        """
        found = await self.get_data_and_stat(paths.CONTROLLER)
        return None if found is None else (found[0], found[1].ephemeral_owner)

    async def get_controller_epoch(self) -> tuple[int, Stat] | None:
        found = await self.get_data_and_stat(paths.CONTROLLER_EPOCH)
        if found is None:
            return None
        return ControllerEpochZNode.decode(require_data(found[0], paths.CONTROLLER_EPOCH)), found[1]  # Kafka: NPE

    async def register_controller_and_increment_controller_epoch(self, controller_id: int) -> tuple[int, int]:
        """Try to become controller: create ``/controller`` and bump ``/controller_epoch`` atomically.

        Returns ``(epoch, epoch_zk_version)``, the fencing token; raises `ControllerMovedError` if another
        broker won.
        """
        epoch, stat = await self._get_or_create_controller_epoch()
        new_epoch = ControllerEpochZNode.next_epoch(epoch)
        controller_data = ControllerZNode.encode(controller_id, self._clock())
        result = await self._session.multi([
            CreateOp(paths.CONTROLLER, controller_data, CreateMode.EPHEMERAL),
            SetDataOp(paths.CONTROLLER_EPOCH, ControllerEpochZNode.encode(new_epoch), stat.version),
        ])
        if result.ok:
            set_result = result.results[1]
            assert isinstance(set_result, SetDataResult)
            return new_epoch, set_result.stat.version
        if result.code in (Code.NODE_EXISTS, Code.BAD_VERSION):
            return await self._check_controller_and_epoch(controller_id, new_epoch)
        raise error_for_code(result.code, paths.CONTROLLER)

    async def _get_or_create_controller_epoch(self) -> tuple[int, Stat]:
        found = await self.get_controller_epoch()
        if found is not None:
            return found
        with contextlib.suppress(NodeExistsError):
            initial = ControllerEpochZNode.encode(INITIAL_CONTROLLER_EPOCH)
            await self._session.create(paths.CONTROLLER_EPOCH, initial)
        found = await self.get_controller_epoch()
        if found is None:
            raise ControllerEpochMissingError(f"{paths.CONTROLLER_EPOCH} existed but is gone")
        return found

    async def _check_controller_and_epoch(self, controller_id: int, new_epoch: int) -> tuple[int, int]:
        """After NODEEXISTS/BADVERSION: did our own multi commit (its response lost and retried)?"""
        try:
            current = await self.get_controller_id()
        except ZnodeDecodeError:
            current = None
        if current is None:
            raise ControllerMovedError(
                "The ephemeral node at /controller went away while checking whether the controller election "
                "succeeds. Aborting controller startup procedure")
        if current == controller_id:
            found = await self.get_controller_epoch()
            if found is not None and found[0] == new_epoch:
                return new_epoch, found[1].version
        raise ControllerMovedError(
            "Controller moved to another broker. Aborting controller startup procedure")

    async def delete_controller(self, expected_epoch_zk_version: int) -> None:
        """Resign (``triggerControllerMove``): fenced delete of ``/controller``; absent is fine."""
        result = await self._fenced(DeleteOp(paths.CONTROLLER), expected_epoch_zk_version)
        if isinstance(result, ErrorResult) and result.code != Code.NO_NODE:
            raise error_for_code(result.code, paths.CONTROLLER)

    # ------------------------------------------------------------------ cluster-wide nodes

    async def create_top_level_paths(self) -> None:
        """The persistent paths every broker ensures at startup (``ZkData.PersistentZkPaths``)."""
        for path in paths.PERSISTENT_PATHS:
            await self._session.ensure_path(path)

    async def get_cluster_id(self) -> str | None:
        found = await self.get_data_and_stat(paths.CLUSTER_ID)
        return None if found is None else ClusterIdZNode.decode(require_data(found[0], paths.CLUSTER_ID))

    async def create_or_get_cluster_id(self, proposed_cluster_id: str) -> str:
        """Create ``/cluster/id`` with our proposal unless another broker already did; return the id."""
        await self._session.ensure_path(paths.CLUSTER)
        if await self._create_if_absent(paths.CLUSTER_ID, ClusterIdZNode.encode(proposed_cluster_id)):
            return proposed_cluster_id
        cluster_id = await self.get_cluster_id()
        if cluster_id is None:
            raise NoNodeError(paths.CLUSTER_ID, "cluster id node vanished after NODEEXISTS")
        return cluster_id

    async def generate_broker_sequence_id(self) -> int:
        """A new broker-id sequence number: the version an unconditional set of ``/brokers/seqid`` returns."""
        try:
            return (await self._session.set_data(paths.BROKER_SEQUENCE_ID, b"", ANY_VERSION)).version
        except NoNodeError:
            await self._session.ensure_path(paths.BROKER_SEQUENCE_ID)
            return (await self._session.set_data(paths.BROKER_SEQUENCE_ID, b"", ANY_VERSION)).version

    async def get_feature(self, watch: Watcher | None = None) -> tuple[FeatureZNodeData, int] | None:
        """``/feature`` and its ZooKeeper version (the "features epoch" brokers cache); not fenced."""
        found = await self.get_data_and_stat(paths.FEATURE, watch)
        if found is None:
            return None  # Kafka's getDataAndVersion: a null node's None data is ``.get``, which throws
        return FeatureZNode.decode(require_data(found[0], paths.FEATURE)), found[1].version

    async def create_feature(self, value: FeatureZNodeData) -> None:
        await self._session.create(paths.FEATURE, FeatureZNode.encode(value))

    async def update_feature(self, value: FeatureZNodeData) -> int:
        """Unconditional set (as Kafka's ``updateFeatureZNode``); returns the new version."""
        return (await self._session.set_data(paths.FEATURE, FeatureZNode.encode(value), ANY_VERSION)).version

    # ------------------------------------------------------------------ producer id blocks

    async def get_producer_id_block(self) -> tuple[ProducerIdBlock | None, int] | None:
        """``/latest_producer_id_block``'s block and ZooKeeper version (Kafka's ``getDataAndVersion``); the block
        is None while the znode holds null data (every broker creates it so at startup, as Kafka's
        ``createRecursive``), the whole answer None when the znode is absent. A malformed block raises
        `ZnodeDecodeError`, empty data included (Kafka's ``parseProducerIdBlockData`` fails on it), except at
        version 0: a node created empty by an earlier zkcontroller and never written, no block yet."""
        found = await self.get_data_and_stat(paths.LATEST_PRODUCER_ID_BLOCK)
        if found is None:
            return None
        data, stat = found
        if data is None or (data == b"" and stat.version == 0):
            return None, stat.version
        return ProducerIdBlockZNode.decode(data), stat.version

    async def set_producer_id_block(self, block: ProducerIdBlock, expected_version: int) -> bool:
        """Claim ``block`` by a setData conditional on ``expected_version`` (``conditionalUpdatePath``); False if
        another broker wrote first (BADVERSION) or the znode is gone (NONODE): re-read and try again."""
        try:
            await self._session.set_data(paths.LATEST_PRODUCER_ID_BLOCK, ProducerIdBlockZNode.encode(block),
                                         expected_version)
        except (BadVersionError, NoNodeError):
            return False
        return True

    async def create_producer_id_block(self, block: ProducerIdBlock) -> bool:
        """Create the absent znode holding ``block``; False if another broker created it first (NODEEXISTS)."""
        return await self._create_if_absent(paths.LATEST_PRODUCER_ID_BLOCK, ProducerIdBlockZNode.encode(block))
