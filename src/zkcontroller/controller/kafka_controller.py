"""KafkaController: election, failover, resignation and event dispatch (spec §2, §3).

Every broker runs one; at most one is active. The event families live in `broker_events` and `topic_events`.
All state changes happen inside `process`, one event at a time; watches and broker responses only enqueue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from zkcontroller.controller.broker_events import BrokerEventHandlers
from zkcontroller.controller.channel_manager import ControllerChannelManager
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.errors import IllegalControllerStateError
from zkcontroller.controller.event_log import CONTROLLER_LOGGER, EventLog, PrefixedLogger, StateChangeLogger
from zkcontroller.controller.event_manager import ControllerEventManager
from zkcontroller.controller.events import (
    BrokerChange,
    BrokerModifications,
    ControllerChange,
    ControllerEvent,
    Expire,
    LeaderAndIsrResponseReceived,
    PartitionModifications,
    Reelect,
    RegisterBrokerAndReelect,
    SessionReconnected,
    Startup,
    TopicChange,
    UpdateMetadataResponseReceived,
)
from zkcontroller.controller.failover import (
    initialize_controller_context,
    register_failover_watches,
    unregister_failover_watches,
)
from zkcontroller.controller.partition_state_machine import PartitionStateMachine
from zkcontroller.controller.replica_state_machine import ReplicaStateMachine
from zkcontroller.controller.request_batch import ControllerBrokerRequestBatch
from zkcontroller.controller.topic_events import TopicEventHandlers
from zkcontroller.coordination.api import EventType
from zkcontroller.model import BrokerInfo
from zkcontroller.protocol.control_requests import (
    AnyControlRequest,
    ControlResponse,
    Errors,
    LeaderAndIsrRequest,
    UpdateMetadataRequest,
)
from zkcontroller.protocol.transport import BrokerTransport
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class KafkaController(BrokerEventHandlers, TopicEventHandlers):
    def __init__(
        self,
        config: ControllerConfig,
        zk: KafkaZkClient,
        broker_info: BrokerInfo,
        broker_epoch: int,
        transport: BrokerTransport,
        runtime: Runtime,
        event_log: EventLog,
    ) -> None:
        self.config = config
        self.zk = zk
        self.broker_info = broker_info
        self.broker_epoch = broker_epoch
        self.runtime = runtime
        self.event_log = event_log
        self.context = ControllerContext()
        epoch = self._epoch
        self.log = PrefixedLogger(CONTROLLER_LOGGER, config.broker_id, epoch)
        self.state_change_logger = StateChangeLogger(config.broker_id, epoch, event_log)
        self.channel_manager = ControllerChannelManager(
            config.broker_id, transport, self._on_broker_response, epoch, runtime
        )
        self.request_batch = self._new_batch()
        self.replica_state_machine = ReplicaStateMachine(
            config, self.context, zk, self._new_batch(), self.state_change_logger
        )
        self.partition_state_machine = PartitionStateMachine(
            config, self.context, zk, self._new_batch(), self.state_change_logger
        )
        self.event_manager = ControllerEventManager(config.broker_id, self, runtime, self._on_event_processed)
        self.active_controller_id = -1
        self.on_registered: Callable[[int], None] | None = None
        """Told the new broker epoch after a re-registration (the broker's own fencing needs it)."""
        self._node_handlers = {}
        self._child_handlers = {}
        self._handlers: dict[type, Callable[[Any], Awaitable[None]]] = {
            Startup: self.process_startup,
            ControllerChange: self.process_controller_change,
            Reelect: self.process_reelect,
            Expire: self.process_expire,
            RegisterBrokerAndReelect: self.process_register_broker_and_reelect,
            SessionReconnected: self.process_session_reconnected,
            BrokerChange: self.process_broker_change,
            BrokerModifications: self.process_broker_modifications,
            TopicChange: self.process_topic_change,
            PartitionModifications: self.process_partition_modifications,
            LeaderAndIsrResponseReceived: self.process_leader_and_isr_response,
            UpdateMetadataResponseReceived: self.process_update_metadata_response,
        }

    def _epoch(self) -> int:
        return self.context.epoch

    def _new_batch(self) -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(
            self.config.broker_id, self.context, self.channel_manager.send_request, self.state_change_logger
        )

    # ---------------------------------------------------------------- lifecycle

    def startup(self) -> None:
        """Kafka's ``startup()``: queue Startup and start the event loop task."""
        self.register_node_handler(paths.CONTROLLER, self._controller_change_handler)
        self.event_manager.put(Startup())
        self.event_manager.start()

    async def shutdown(self) -> None:
        await self.event_manager.close()
        await self.on_controller_resignation()

    def abort(self) -> None:
        """A crash: stop processing at once, send nothing more (used by failure drills and the simulator)."""
        self.event_manager.abort()
        self.channel_manager.shutdown()

    def before_initializing_session(self) -> Any:
        """The old session expired: drop queued events and resign before a new session is created."""
        return self.event_manager.clear_and_put(Expire())

    def after_initializing_session(self) -> None:
        self.event_manager.put(RegisterBrokerAndReelect())

    def on_session_reconnected(self) -> None:
        self.event_manager.put(SessionReconnected())

    @staticmethod
    def _controller_change_handler(event_type: EventType) -> ControllerEvent | None:
        return Reelect() if event_type is EventType.NODE_DELETED else ControllerChange()

    # ---------------------------------------------------------------- event dispatch

    async def process(self, event: ControllerEvent) -> None:
        try:
            await self._handlers[type(event)](event)
        except ControllerMovedError:
            self.log.info(f"Controller moved to another broker when processing {event}.")
            await self.maybe_resign()
        except IllegalControllerStateError as e:
            await self.handle_illegal_state(e)
        except Exception as e:  # Kafka logs any other failure and keeps processing events
            self.log.error(f"Error processing event {event}", e)

    def preempt(self, event: ControllerEvent) -> None:
        """Nothing this controller queues carries a callback that must hear it was dropped."""

    def _on_event_processed(self, event: ControllerEvent, queue_time_ms: int, processing_time_ms: int) -> None:
        self.event_log.emit(
            "controller_event",
            controller_id=self.controller_id,
            controller_epoch=self.context.epoch,
            event=event.name,
            queue_time_ms=queue_time_ms,
            processing_time_ms=processing_time_ms,
        )

    # ---------------------------------------------------------------- election (§2.3–§2.7)

    async def process_startup(self, _event: Startup) -> None:
        await self.zk.path_exists(paths.CONTROLLER, self._on_watch)
        await self.elect()

    async def process_controller_change(self, _event: ControllerChange) -> None:
        await self.maybe_resign()

    async def process_reelect(self, _event: Reelect) -> None:
        await self.maybe_resign()
        await self.elect()

    async def process_expire(self, _event: Expire) -> None:
        self.active_controller_id = -1
        await self.on_controller_resignation()

    async def process_register_broker_and_reelect(self, _event: RegisterBrokerAndReelect) -> None:
        self.broker_epoch = await self.zk.register_broker(self.broker_info)
        self.log.info(f"Registered broker with new broker epoch {self.broker_epoch}")
        if self.on_registered is not None:
            self.on_registered(self.broker_epoch)
        await self.maybe_resign()
        await self.elect()

    async def process_session_reconnected(self, _event: SessionReconnected) -> None:
        """Re-read everything watched (re-arming the watches the dropped connection disarmed)."""
        await self.maybe_resign()
        if not self.is_active:
            await self.elect()
            return
        await self.process_broker_change(BrokerChange())
        await self.process_topic_change(TopicChange())
        for topic in sorted(self.context.all_topics):
            await self.process_partition_modifications(PartitionModifications(topic=topic))

    async def current_controller_id(self) -> int:
        controller_id = await self.zk.get_controller_id(self._on_watch)
        return -1 if controller_id is None else controller_id

    async def elect(self) -> None:
        self.active_controller_id = await self.current_controller_id()
        if self.active_controller_id != -1:
            self.log.debug(f"Broker {self.active_controller_id} has been elected as the controller, so stopping")
            return
        try:
            epoch, epoch_zk_version = await self.zk.register_controller_and_increment_controller_epoch(
                self.controller_id
            )
            self.context.epoch, self.context.epoch_zk_version = epoch, epoch_zk_version
            self.active_controller_id = self.controller_id
            self.log.info(
                f"{self.controller_id} successfully elected as the controller. Epoch incremented to {epoch} and "
                f"epoch zk version is now {epoch_zk_version}"
            )
            self.event_log.emit("controller_elected", controller_id=self.controller_id, controller_epoch=epoch)
            await self.on_controller_failover()
        except ControllerMovedError:
            await self.maybe_resign()
            if self.active_controller_id != -1:
                self.log.debug(
                    f"Broker {self.active_controller_id} was elected as controller instead of broker "
                    f"{self.controller_id}"
                )
            else:
                self.log.warn(
                    "A controller has been elected but just resigned, this will result in another round of election"
                )
        except Exception as e:
            self.log.error(
                f"Error while electing or becoming controller on broker {self.controller_id}. Trigger controller "
                "movement immediately",
                e,
            )
            await self.trigger_controller_move()

    async def maybe_resign(self) -> None:
        was_active = self.is_active
        self.register_node_handler(paths.CONTROLLER, self._controller_change_handler)
        await self.zk.path_exists(paths.CONTROLLER, self._on_watch)
        self.active_controller_id = await self.current_controller_id()
        if was_active and not self.is_active:
            await self.on_controller_resignation()

    async def trigger_controller_move(self) -> None:
        self.active_controller_id = await self.current_controller_id()
        if not self.is_active:
            self.log.warn("Controller has already moved when trying to trigger controller movement")
            return
        expected = self.context.epoch_zk_version
        self.active_controller_id = -1
        await self.on_controller_resignation()
        try:
            await self.zk.delete_controller(expected)
        except ControllerMovedError:
            self.log.warn("Controller has already moved when trying to trigger controller movement")

    async def handle_illegal_state(self, error: Exception) -> None:
        self.log.error("Forcing the controller to resign", error)
        self.request_batch.clear()
        await self.trigger_controller_move()

    # ---------------------------------------------------------------- failover and resignation (§2.5, §2.6)

    async def on_controller_failover(self) -> None:
        await register_failover_watches(self)
        await initialize_controller_context(self)
        self.send_update_metadata_request(sorted(self.context.live_or_shutting_down_broker_ids))
        await self.replica_state_machine.startup()
        await self.partition_state_machine.startup()
        self.log.info(f"Ready to serve as the new controller with epoch {self.context.epoch}")
        self.event_log.emit("controller_ready", controller_id=self.controller_id, controller_epoch=self.context.epoch)

    async def on_controller_resignation(self) -> None:
        epoch = self.context.epoch
        unregister_failover_watches(self)
        self.channel_manager.shutdown()
        self.context.reset_context()
        self.request_batch.clear()
        self.log.info("Resigned")
        if epoch:
            self.event_log.emit("controller_resigned", controller_id=self.controller_id, controller_epoch=epoch)

    # ---------------------------------------------------------------- broker responses (§7.5)

    def _on_broker_response(self, broker_id: int, request: AnyControlRequest, response: ControlResponse) -> None:
        if isinstance(request, LeaderAndIsrRequest):
            self.event_manager.put(
                LeaderAndIsrResponseReceived(broker_id=broker_id, request=request, response=response)
            )
        elif isinstance(request, UpdateMetadataRequest):
            self.event_manager.put(UpdateMetadataResponseReceived(broker_id=broker_id, response=response))

    async def process_leader_and_isr_response(self, event: LeaderAndIsrResponseReceived) -> None:
        if not self.is_active or event.response is None:
            return
        response = event.response
        if response.error is not Errors.NONE:
            self.state_change_logger.error(
                f"Received error {response.error.name} in LeaderAndIsr response {response} "
                f"from broker {event.broker_id}"
            )
            return
        errors = response.partition_error_map()
        offline = sorted(tp for tp, err in errors.items() if err is Errors.KAFKA_STORAGE_ERROR)
        online = {tp for tp, err in errors.items() if err is Errors.NONE}
        current = self.context.replicas_on_offline_dirs.get(event.broker_id, set())
        updated = (current - online) | set(offline)
        self.context.replicas_on_offline_dirs[event.broker_id] = updated
        new_offline = updated - current
        if new_offline:
            self.state_change_logger.info(
                f"Mark replicas {','.join(str(tp) for tp in sorted(new_offline))} on broker {event.broker_id} "
                "as offline"
            )
            replicas = {
                p for p in self.context.replicas_on_brokers({event.broker_id}) if p.topic_partition in new_offline
            }
            await self.on_replicas_become_offline(replicas)

    async def process_update_metadata_response(self, event: UpdateMetadataResponseReceived) -> None:
        if not self.is_active or event.response is None:
            return
        if event.response.error is not Errors.NONE:
            self.state_change_logger.error(
                f"Received error {event.response.error.name} in UpdateMetadata response {event.response} from "
                f"broker {event.broker_id}"
            )
