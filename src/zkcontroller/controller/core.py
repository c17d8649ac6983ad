"""`ControllerCore`: what every part of one controller shares, built once per controller.

The event families (`families.EventFamily` subclasses; `KafkaController.families` lists them all) each hold
the core and nothing else of each other; they talk through narrow protocols (see `families`). The core owns:

* the components: config, context, `KafkaZkClient`, the two state machines and the request batch, the channel
  manager, loggers and the event log, the event queue (``events``) and the `Runtime`;
* the watch registry. Watches are one-shot and armed only by a read (spec §1.7). One callable, `on_watch`, is
  passed to every read that should arm a watch; when a watch fires it looks the path up in the registry *at
  that moment*, so unregistering a handler silences a watch that is already armed (Kafka's ZooKeeperClient);
* the `FencingToken` (epoch, epoch zkVersion) captured when this broker wins the election: every fenced write
  and every request batch uses it (it lives in the context, set in one assignment, cleared on resignation).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from zkcontroller.controller.channel_manager import ControllerChannelManager, ResponseCallback
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.dynamic_config import DynamicBrokerConfig
from zkcontroller.controller.event_log import CONTROLLER_LOGGER, EventLog, PrefixedLogger, StateChangeLogger
from zkcontroller.controller.event_manager import ControllerEventManager, ControllerEventProcessor
from zkcontroller.controller.events import ControllerEvent
from zkcontroller.controller.fencing_token import NOT_CONTROLLER, FencingToken
from zkcontroller.controller.partition_state_machine import PartitionStateMachine
from zkcontroller.controller.replica_state_machine import ReplicaStateMachine
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.coordination.api import EventType, WatchedEvent
from zkcontroller.model import TopicPartition
from zkcontroller.protocol.transport import BrokerTransport
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

NodeHandler = Callable[[EventType], ControllerEvent | None]
"""Maps a node event (created / deleted / data changed) on a watched path to the controller event it means."""


class WatchRegistry:
    """Path -> handler for node and child watches; `on_watch` is the one watcher every read is given."""

    def __init__(self, put: Callable[[ControllerEvent], object]) -> None:
        self._put = put
        self._node_handlers: dict[str, NodeHandler] = {}
        self._child_handlers: dict[str, Callable[[], ControllerEvent]] = {}

    def register_node_handler(self, path: str, handler: NodeHandler) -> None:
        self._node_handlers[path] = handler

    def unregister_node_handler(self, path: str) -> None:
        self._node_handlers.pop(path, None)

    def register_child_handler(self, path: str, make_event: Callable[[], ControllerEvent]) -> None:
        self._child_handlers[path] = make_event

    def unregister_child_handler(self, path: str) -> None:
        self._child_handlers.pop(path, None)

    def on_watch(self, event: WatchedEvent) -> None:
        """Turn a fired watch into a controller event (never touches controller state itself)."""
        if event.path is None:
            return  # a session event; the session listener deals with those
        if event.type is EventType.NODE_CHILDREN_CHANGED:
            make_event = self._child_handlers.get(event.path)
            if make_event is not None:
                self._put(make_event())
            return
        handler = self._node_handlers.get(event.path)
        if handler is not None:
            controller_event = handler(event.type)
            if controller_event is not None:
                self._put(controller_event)


class ControllerCore:
    def __init__(
        self,
        config: ControllerConfig,
        zk: KafkaZkClient,
        transport: BrokerTransport,
        runtime: Runtime,
        event_log: EventLog,
        processor: ControllerEventProcessor,
        on_broker_response: ResponseCallback,
        on_processed: Callable[[ControllerEvent, int, int], None],
    ) -> None:
        self.config = config
        self.zk = zk
        self.runtime = runtime
        self.event_log = event_log
        self.context = ControllerContext()
        epoch = self._epoch
        self.log = PrefixedLogger(CONTROLLER_LOGGER, f"[Controller id={config.broker_id}] ")
        self.state_change_logger = StateChangeLogger(config.broker_id, epoch, event_log)
        self.channel_manager = ControllerChannelManager(
            config.broker_id, transport, on_broker_response, epoch, runtime
        )
        self.request_batch = self.new_batch()
        self.replica_state_machine = ReplicaStateMachine(
            config, self.context, zk, self.new_batch(), self.state_change_logger
        )
        self.dynamic_config = DynamicBrokerConfig(config.unclean_leader_election_enable)
        """Dynamic broker configs read from ``/config/brokers/...``; the partition state machine reads it."""
        self.partition_state_machine = PartitionStateMachine(
            config, self.context, zk, self.new_batch(), self.state_change_logger, self.dynamic_config
        )
        self.events = ControllerEventManager(config.broker_id, processor, runtime, on_processed)
        self.watches = WatchRegistry(self.events.put)
        self.on_watch = self.watches.on_watch
        self.active_controller_id = -1

    def _epoch(self) -> int:
        return self.context.epoch

    def new_batch(self) -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(
            self.config.broker_id, self.context, self.channel_manager.send_request, self.state_change_logger,
            self.config.inter_broker_protocol_version)

    @property
    def controller_id(self) -> int:
        return self.config.broker_id

    @property
    def fencing(self) -> FencingToken:
        return self.context.fencing

    @property
    def is_active(self) -> bool:
        """This broker won an election in this tenure and `/controller` still names it.

        Reading our own id back from `/controller` is not enough: a foreign write can put it there (see
        `KafkaController.maybe_resign`), and a broker that never ran failover has no context to act on.
        """
        return self.active_controller_id == self.controller_id and self.context.fencing is not NOT_CONTROLLER

    def send_update_metadata_request(
        self, broker_ids: Iterable[int], partitions: Iterable[TopicPartition] | None = None
    ) -> None:
        """Kafka's ``sendUpdateMetadataRequest``: one batch, UpdateMetadata only (may carry no partitions)."""
        self.request_batch.new_batch()
        self.request_batch.add_update_metadata_request_for_brokers(sorted(broker_ids), set(partitions or ()))
        self.request_batch.send_requests_to_brokers(self.context.fencing)

    def emit(self, record_type: str, **fields: object) -> None:
        """An event-log record stamped with this controller's id and epoch."""
        self.event_log.emit(record_type, controller_id=self.controller_id, controller_epoch=self.context.epoch,
                            **fields)
