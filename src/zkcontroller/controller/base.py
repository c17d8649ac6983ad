"""What every part of the controller shares: its components, the ZooKeeper watch registry, and the
helpers the event-family handlers (`broker_events`, `topic_events`) and `KafkaController` all use.

Watches are one-shot and armed only by a read (spec §1.7). One callable, `_on_watch`, is passed to every read
that should arm a watch; when a watch fires it looks the path up in the handler registry *at that moment*, so
unregistering a handler silences a watch that is already armed, as in Kafka's ZooKeeperClient.
"""

from __future__ import annotations

from collections.abc import Callable

from zkcontroller.controller.channel_manager import ControllerChannelManager
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.event_log import EventLog, PrefixedLogger, StateChangeLogger
from zkcontroller.controller.event_manager import ControllerEventManager
from zkcontroller.controller.events import ControllerEvent
from zkcontroller.controller.partition_state_machine import PartitionStateMachine
from zkcontroller.controller.replica_state_machine import ReplicaStateMachine
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.coordination.api import EventType, WatchedEvent
from zkcontroller.model import BrokerInfo
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

NodeHandler = Callable[[EventType], ControllerEvent | None]
"""Maps a node event (created / deleted / data changed) on a watched path to the controller event it means."""


class ControllerBase:
    config: ControllerConfig
    zk: KafkaZkClient
    broker_info: BrokerInfo
    broker_epoch: int
    context: ControllerContext
    event_log: EventLog
    log: PrefixedLogger
    state_change_logger: StateChangeLogger
    channel_manager: ControllerChannelManager
    request_batch: ControllerBrokerRequestBatch
    partition_state_machine: PartitionStateMachine
    replica_state_machine: ReplicaStateMachine
    event_manager: ControllerEventManager
    active_controller_id: int
    _node_handlers: dict[str, NodeHandler]
    _child_handlers: dict[str, Callable[[], ControllerEvent]]

    @property
    def controller_id(self) -> int:
        return self.config.broker_id

    @property
    def is_active(self) -> bool:
        return self.active_controller_id == self.controller_id

    # ---------------------------------------------------------------- watch registry

    def register_node_handler(self, path: str, handler: NodeHandler) -> None:
        self._node_handlers[path] = handler

    def unregister_node_handler(self, path: str) -> None:
        self._node_handlers.pop(path, None)

    def register_child_handler(self, path: str, make_event: Callable[[], ControllerEvent]) -> None:
        self._child_handlers[path] = make_event

    def unregister_child_handler(self, path: str) -> None:
        self._child_handlers.pop(path, None)

    def _on_watch(self, event: WatchedEvent) -> None:
        """The one watcher: turn a fired watch into a controller event (never touches state itself)."""
        if event.path is None:
            return  # a session event; the session listener deals with those
        if event.type is EventType.NODE_CHILDREN_CHANGED:
            make_event = self._child_handlers.get(event.path)
            if make_event is not None:
                self.event_manager.put(make_event())
            return
        handler = self._node_handlers.get(event.path)
        if handler is not None:
            controller_event = handler(event.type)
            if controller_event is not None:
                self.event_manager.put(controller_event)

    # ---------------------------------------------------------------- shared helpers

    def send_update_metadata_request(self, broker_ids: list[int], partitions: set | None = None) -> None:
        """Kafka's ``sendUpdateMetadataRequest``: one batch, UpdateMetadata only (may carry no partitions)."""
        self.request_batch.new_batch()
        self.request_batch.add_update_metadata_request_for_brokers(broker_ids, partitions or set())
        self.request_batch.send_requests_to_brokers(self.context.epoch)
