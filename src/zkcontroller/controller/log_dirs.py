"""Log-directory failures (spec §9.12): Kafka's ``LogDirEventNotification`` / ``onBrokerLogDirFailure``.

A broker whose log directory fails leaves ``/log_dir_event_notification/log_dir_event_<n>`` naming itself. The
controller cannot tell which replicas were on that directory, so it re-sends LeaderAndIsr for every replica of
the broker (OnlineReplica); the broker answers KAFKA_STORAGE_ERROR for the lost ones, and the response family
(`responses`) takes those offline. The notifications are deleted once read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zkcontroller.controller.events import ControllerEvent, LogDirEventNotification
from zkcontroller.controller.families import EventFamily, Handler
from zkcontroller.controller.states import ReplicaState, sorted_replicas
from zkcontroller.zk import paths


class LogDirEvents(EventFamily):
    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {LogDirEventNotification: self.process_log_dir_event_notification}

    async def register_watches(self) -> None:
        """Steps 1–2: watch the notifications; delete those left from before unread (the LeaderAndIsr the
        failover sends to every replica finds the offline ones anyway)."""
        self.core.watches.register_child_handler(paths.LOG_DIR_EVENT_NOTIFICATION, LogDirEventNotification)
        self.core.log.info("Deleting log dir event notifications")
        stale = await self.core.zk.get_all_log_dir_event_notifications(self.core.on_watch)  # arms the watch
        if stale:
            await self.core.zk.delete_log_dir_event_notifications(stale, self.core.context.fencing.epoch_zk_version)

    def on_resignation(self) -> None:
        self.core.watches.unregister_child_handler(paths.LOG_DIR_EVENT_NOTIFICATION)

    async def on_session_reconnected(self) -> None:
        self.core.events.put(LogDirEventNotification())

    async def process_log_dir_event_notification(self, _event: LogDirEventNotification) -> None:
        core = self.core
        if not core.is_active:
            return
        sequence_numbers = await core.zk.get_all_log_dir_event_notifications(core.on_watch)
        try:
            read = await core.zk.get_broker_ids_from_log_dir_events(sequence_numbers)
            for path, error in sorted(read.malformed.items()):
                core.log.error(f"Ignoring malformed log directory event notification {path}: {error.reason}")
            await self.on_broker_log_dir_failure(sorted(set(read.values.values())))
        finally:
            if sequence_numbers:
                await core.zk.delete_log_dir_event_notifications(sequence_numbers,
                                                                 core.context.fencing.epoch_zk_version)

    async def on_broker_log_dir_failure(self, broker_ids: Iterable[int]) -> None:
        ids = sorted(broker_ids)
        if not ids:
            return
        self.core.log.info(f"Handling log directory failure for brokers {','.join(map(str, ids))}")
        replicas = self.core.context.replicas_on_brokers(set(ids))
        await self.core.replica_state_machine.handle_state_changes(sorted_replicas(replicas), ReplicaState.ONLINE)
