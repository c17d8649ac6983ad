"""Broker membership (spec §9.1–§9.3): ``BrokerChange`` (startups, failures, bounces) and
``BrokerModifications`` (a live broker re-wrote its registration)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zkcontroller.controller.core import ControllerCore, NodeHandler
from zkcontroller.controller.events import BrokerChange, BrokerModifications, ControllerEvent
from zkcontroller.controller.families import EventFamily, Handler, ReassignmentResumer, TopicDeletionClient
from zkcontroller.controller.scala_render import scala_collection
from zkcontroller.controller.states import PartitionAndReplica, PartitionState, ReplicaState, sorted_replicas
from zkcontroller.coordination.api import EventType
from zkcontroller.model import Broker, sorted_partitions
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError


def _ids(ids: Iterable[int]) -> str:
    return ",".join(str(i) for i in sorted(ids))


def _broker_modifications_handler(broker_id: int) -> NodeHandler:
    def handle(event_type: EventType) -> ControllerEvent | None:
        return BrokerModifications(broker_id=broker_id) if event_type is EventType.NODE_DATA_CHANGED else None

    return handle


class BrokerEvents(EventFamily):
    def __init__(self, core: ControllerCore, deletion: TopicDeletionClient | None = None,
                 reassignment: ReassignmentResumer | None = None) -> None:
        super().__init__(core)
        self.context = core.context
        self.deletion = deletion
        self.reassignment = reassignment

    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {BrokerChange: self.process_broker_change, BrokerModifications: self.process_broker_modifications}

    # ---------------------------------------------------------------- failover steps

    async def register_watches(self) -> None:
        self.core.watches.register_child_handler(paths.BROKER_IDS, BrokerChange)

    async def load_context(self) -> None:
        self.context.set_live_brokers(await self.read_live_brokers())
        self.core.log.info(f"Initialized broker epochs cache: {self._epochs_cache()}")
        self.context.shutting_down_broker_ids.clear()
        await self.register_broker_modifications_handlers(sorted(self.context.live_or_shutting_down_broker_ids))

    def on_resignation(self) -> None:
        self.core.watches.unregister_child_handler(paths.BROKER_IDS)
        self.unregister_broker_modifications_handlers(sorted(self.context.live_or_shutting_down_broker_ids))

    async def on_session_reconnected(self) -> None:
        for broker_id in sorted(self.context.live_or_shutting_down_broker_ids):
            self.core.events.put(BrokerModifications(broker_id=broker_id))

    # ---------------------------------------------------------------- watches and reads

    async def register_broker_modifications_handlers(self, broker_ids: list[int]) -> None:
        for broker_id in sorted(broker_ids):
            path = paths.broker_id_path(broker_id)
            self.core.watches.register_node_handler(path, _broker_modifications_handler(broker_id))
            await self.core.zk.path_exists(path, self.core.on_watch)

    def unregister_broker_modifications_handlers(self, broker_ids: list[int]) -> None:
        for broker_id in broker_ids:
            self.core.watches.unregister_node_handler(paths.broker_id_path(broker_id))

    async def read_live_brokers(self) -> dict[Broker, int]:
        """Every registered broker with its epoch; arms the child watch and per-broker data watches.
        Malformed registrations are logged with their path and skipped."""
        zk = self.core.zk
        await zk.get_sorted_broker_list(self.core.on_watch)
        read = await zk.get_all_brokers_and_epochs(self.core.on_watch)
        for path, error in sorted(read.malformed.items()):
            self.core.log.error(f"Skipping broker registration at {path}: {error.reason}")
        return {b.broker: b.epoch for b in read.values.values()}

    # ---------------------------------------------------------------- BrokerChange

    async def process_broker_change(self, _event: BrokerChange) -> None:
        if not self.core.is_active:
            return
        current = await self.read_live_brokers()
        cur_ids = {b.id for b in current}
        known = set(self.context.live_or_shutting_down_broker_ids)
        cached_epochs = self.context.live_broker_id_and_epochs
        new = cur_ids - known
        dead = known - cur_ids
        bounced = {b.id for b, epoch in current.items() if b.id in known and epoch > cached_epochs[b.id]}
        by_id = {b.id: (b, e) for b, e in current.items()}
        self.core.log.info(
            f"Newly added brokers: {_ids(new)}, deleted brokers: {_ids(dead)}, bounced brokers: {_ids(bounced)}, "
            f"all live brokers: {_ids(cur_ids)}"
        )
        channels = self.core.channel_manager
        for broker_id in sorted(new):
            channels.add_broker(by_id[broker_id][0])
        for broker_id in sorted(bounced):
            channels.remove_broker(broker_id)
            channels.add_broker(by_id[broker_id][0])
        for broker_id in sorted(dead):
            channels.remove_broker(broker_id)
        if new:
            self.context.add_live_brokers({by_id[i][0]: by_id[i][1] for i in new})
            await self.on_broker_startup(sorted(new))
        if bounced:
            self.context.remove_live_brokers(bounced)
            await self.on_broker_failure(sorted(bounced))
            self.context.add_live_brokers({by_id[i][0]: by_id[i][1] for i in bounced})
            await self.on_broker_startup(sorted(bounced))
        if dead:
            self.context.remove_live_brokers(dead)
            await self.on_broker_failure(sorted(dead))
        if new or bounced or dead:
            self.core.log.info(f"Updated broker epochs cache: {self._epochs_cache()}")

    def _epochs_cache(self) -> str:
        """The context's broker epochs, a ``mutable.HashMap`` (printed ``HashMap(..)`` by Scala 2.13)."""
        epochs = sorted(self.context.live_broker_id_and_epochs.items())
        return scala_collection("HashMap", (f"{i} -> {e}" for i, e in epochs))

    async def on_broker_startup(self, new_brokers: list[int]) -> None:
        self.core.log.info(f"New broker startup callback for {_ids(new_brokers)}")
        for broker_id in new_brokers:
            self.context.replicas_on_offline_dirs.pop(broker_id, None)
            self.core.emit("broker_registered", broker_id=broker_id,
                           broker_epoch=self.context.live_broker_id_and_epochs.get(broker_id))
        new_set = set(new_brokers)
        existing = sorted(set(self.context.live_or_shutting_down_broker_ids) - new_set)
        self.core.send_update_metadata_request(existing)
        with_leaders = {
            tp for tp in self.context.partitions_with_leaders if tp.topic not in self.context.topics_to_be_deleted
        }
        self.core.send_update_metadata_request(sorted(new_set), with_leaders)
        replicas = self.context.replicas_on_brokers(new_set)
        await self.core.replica_state_machine.handle_state_changes(sorted_replicas(replicas), ReplicaState.ONLINE)
        await self.core.partition_state_machine.trigger_online_partition_state_change()
        if self.reassignment is not None:
            await self.reassignment.maybe_resume_reassignments_on_brokers(new_set)
        deleting = {r for r in replicas if self.context.is_topic_queued_up_for_deletion(r.topic_partition.topic)}
        if deleting and self.deletion is not None:
            self.core.log.info(
                f"Some replicas {','.join(str(r) for r in sorted_replicas(deleting))} for topics scheduled for "
                f"deletion {','.join(sorted(self.context.topics_to_be_deleted))} are on the newly restarted brokers "
                f"{_ids(new_brokers)}. Signaling restart of topic deletion for these topics")
            await self.deletion.resume_deletion_for_topics({r.topic_partition.topic for r in deleting})
        await self.register_broker_modifications_handlers(new_brokers)

    async def on_broker_failure(self, dead_brokers: list[int]) -> None:
        self.core.log.info(f"Broker failure callback for {_ids(dead_brokers)}")
        for broker_id in dead_brokers:
            self.context.replicas_on_offline_dirs.pop(broker_id, None)
            self.core.emit("broker_failed", broker_id=broker_id)
        shutting_down = set(dead_brokers) & self.context.shutting_down_broker_ids
        if shutting_down:
            self.context.shutting_down_broker_ids -= shutting_down
            self.core.log.info(f"Removed {_ids(shutting_down)} from list of shutting down brokers.")
        await self.on_replicas_become_offline(self.context.replicas_on_brokers(set(dead_brokers)),
                                              sorted_distinct=True)
        self.unregister_broker_modifications_handlers(dead_brokers)

    async def on_replicas_become_offline(self, replicas: Iterable[PartitionAndReplica], *,
                                         sorted_distinct: bool = False) -> None:
        """Spec §9.2: offline leaders lose leadership, leaders are elected, the replicas go Offline.

        ``sorted_distinct``: ``replicas`` is a list already in order without repeats (`replicas_on_brokers`'), so
        neither this sort nor the replica state machine's de-duplication is made again (a broker failure's 20,000
        nested tuples: ~1.6 ms to sort a sorted list, ~3 ms to de-duplicate it)."""
        queued = self.context.topics_to_be_deleted
        deleting: set[PartitionAndReplica] = set()
        rest = list(replicas) if sorted_distinct else sorted_replicas(replicas)
        if queued:  # else no replica is of a topic being deleted: a broker failure's 20,000 are not tested one by one
            deleting = {r for r in rest if r[0][0] in queued}  # `r.topic_partition.topic`
            if deleting:
                rest = [r for r in rest if r[0][0] not in queued]
        offline_leaders = self.context.partitions_with_offline_leader_in_order()  # distinct: a dict's keys
        psm, rsm = self.core.partition_state_machine, self.core.replica_state_machine
        await psm.handle_state_changes(sorted_partitions(offline_leaders), PartitionState.OFFLINE, distinct=True)
        await psm.trigger_online_partition_state_change()
        await rsm.handle_state_changes(rest, ReplicaState.OFFLINE, sorted_distinct=sorted_distinct)
        if deleting and self.deletion is not None:
            # their deletion cannot finish while they are offline: ReplicaDeletionIneligible, retried later
            await self.deletion.fail_replica_deletion(deleting)
        if not offline_leaders:
            self.core.send_update_metadata_request(self.context.live_or_shutting_down_broker_ids)

    # ---------------------------------------------------------------- BrokerModifications

    async def process_broker_modifications(self, event: BrokerModifications) -> None:
        if not self.core.is_active:
            return
        try:
            found = await self.core.zk.get_broker(event.broker_id, self.core.on_watch)
        except ZnodeDecodeError as e:  # keep the cached registration and say where the bad one is
            self.core.log.error(f"Ignoring malformed registration of broker {event.broker_id}: {e}")
            return
        old = self.context.live_or_shutting_down_broker(event.broker_id)
        if found is None or old is None:
            return
        new = found.broker
        if new.endpoints != old.endpoints or new.features != old.features:
            self.core.log.info(f"Updated broker metadata: {old} -> {new}")
            self.context.update_broker_metadata(old, new)
            self.core.log.info(f"Broker info update callback for {event.broker_id}")  # Kafka's onBrokerUpdate
            self.core.send_update_metadata_request(self.context.live_or_shutting_down_broker_ids)
