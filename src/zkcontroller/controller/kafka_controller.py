"""KafkaController: election, failover, resignation and event dispatch (spec §2, §3).

Every broker runs one; at most one is active. Each event goes to the `EventFamily` that owns it (``self.families``
lists them all, from `features` and `brokers` to `unclean_election`); this module keeps the election events and
runs the families' failover steps in Kafka's order (see `families`). All state changes happen inside `process`,
one event at a time; watches and broker responses only enqueue.

Beyond Kafka: a failover that fails is retried with a growing back-off before this broker gives up
``/controller``, so a cluster whose store holds something no controller can load does not burn through
epochs at full speed; an unreadable ``/controller_epoch`` is reported and watched, and the election re-runs as
soon as it is readable; and a broker whose session owns ``/controller`` while the node names another broker
(written by some other client) deletes it, so that a real election runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence

from zkcontroller.controller.broker_requests import not_controller_response, submit_broker_request
from zkcontroller.controller.brokers import BrokerEvents
from zkcontroller.controller.channel_manager import ControllerChannelManager
from zkcontroller.controller.config import ControllerConfig
from zkcontroller.controller.context import ControllerContext
from zkcontroller.controller.controlled_shutdown import ControlledShutdownEvents
from zkcontroller.controller.core import ControllerCore
from zkcontroller.controller.elections import ElectionEvents
from zkcontroller.controller.errors import IllegalControllerStateError
from zkcontroller.controller.event_log import EventLog, PrefixedLogger
from zkcontroller.controller.event_manager import ControllerEventManager, QueuedEvent
from zkcontroller.controller.events import (
    AdminRequestEvent,
    ApiError,
    ApiPartitionReassignment,
    BrokerChange,
    BrokerRequestEvent,
    ControllerChange,
    ControllerEvent,
    Expire,
    ListPartitionReassignments,
    PartitionModifications,
    Reelect,
    RegisterBrokerAndReelect,
    ReplicaLeaderElection,
    SessionReconnected,
    Startup,
    TopicChange,
)
from zkcontroller.controller.families import EventFamily, Handler
from zkcontroller.controller.features import FeatureVersioning
from zkcontroller.controller.fencing_token import FencingToken
from zkcontroller.controller.isr_notifications import IsrChangeEvents
from zkcontroller.controller.log_dirs import LogDirEvents
from zkcontroller.controller.reassignment import PartitionReassignments, submit_admin_request
from zkcontroller.controller.responses import ResponseEvents
from zkcontroller.controller.store_fault_guards import StoreFaultGuards
from zkcontroller.controller.tenure import ControllerTenure
from zkcontroller.controller.topic_deletion import TopicDeletionManager
from zkcontroller.controller.topics import TopicEvents
from zkcontroller.controller.unclean_election import UncleanElectionEvents
from zkcontroller.coordination.api import EventType
from zkcontroller.coordination.errors import SessionExpiredError
from zkcontroller.model import BrokerInfo, ReplicaAssignment, TopicPartition
from zkcontroller.protocol.control_requests import AnyControlRequest, ControlResponse, Errors
from zkcontroller.protocol.inter_broker import (
    BrokerToControllerRequest,
    BrokerToControllerResponse,
)
from zkcontroller.protocol.transport import BrokerTransport
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError, ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class KafkaController:
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
        self.broker_info = broker_info
        self.broker_epoch = broker_epoch
        self.runtime = runtime
        self.core = core = ControllerCore(
            config, zk, transport, runtime, event_log, self, self._on_broker_response, self._on_event_processed
        )
        self.topic_deletion = TopicDeletionManager(core)
        self.reassignments = PartitionReassignments(core, deletion=self.topic_deletion)
        self.brokers = BrokerEvents(core, deletion=self.topic_deletion, reassignment=self.reassignments)
        self.topics = TopicEvents(core)
        self.responses = ResponseEvents(core, offline_replicas=self.brokers)
        self.controlled_shutdown = ControlledShutdownEvents(core)
        self.elections = ElectionEvents(core)
        self.isr_changes = IsrChangeEvents(core)
        self.isr_changes.reassignments = self.reassignments  # an ISR change may complete a reassignment
        self.log_dirs = LogDirEvents(core)
        self.unclean_election = UncleanElectionEvents(core)
        self.features = FeatureVersioning(core)
        # Kafka's failover order: after the context and the state machines, reassignments resume, then
        # deletions are retried, then pending preferred elections run and the auto-rebalance is scheduled.
        self.families: list[EventFamily] = [
            self.features, self.brokers, self.topics, self.responses, self.reassignments, self.topic_deletion,
            self.controlled_shutdown, self.elections, self.log_dirs, self.isr_changes, self.unclean_election,
        ]
        """In Kafka's failover order: brokers, then topics (whose partitions need the live brokers)."""
        self.tenure = ControllerTenure(core, self.families)
        self.on_registered: Callable[[int], None] | None = None
        """Told the new broker epoch after a re-registration (the broker's own fencing needs it)."""
        self.failover_failures = 0
        """Failovers that failed in a row on this broker (reset by one that succeeds)."""
        self._session_ended_under_event = False
        """The event in progress failed on an ended session (see `process`)."""
        self.guards = StoreFaultGuards(core)
        self._handlers: dict[type, Handler] = {
            Startup: self.process_startup,
            ControllerChange: self.process_controller_change,
            Reelect: self.process_reelect,
            Expire: self.process_expire,
            RegisterBrokerAndReelect: self.process_register_broker_and_reelect,
            SessionReconnected: self.process_session_reconnected,
        }
        for family in self.families:
            for event_type, handler in family.handlers().items():
                if event_type in self._handlers:
                    raise ValueError(f"two handlers for {event_type.__name__}")
                self._handlers[event_type] = handler

    # ---------------------------------------------------------------- what callers read

    @property
    def controller_id(self) -> int:
        return self.config.broker_id

    @property
    def is_active(self) -> bool:
        return self.core.is_active

    @property
    def active_controller_id(self) -> int:
        return self.core.active_controller_id

    @property
    def context(self) -> ControllerContext:
        return self.core.context

    @property
    def event_manager(self) -> ControllerEventManager:
        return self.core.events

    @property
    def zk(self) -> KafkaZkClient:
        return self.core.zk

    @property
    def log(self) -> PrefixedLogger:
        return self.core.log

    @property
    def channel_manager(self) -> ControllerChannelManager:
        return self.core.channel_manager

    # ---------------------------------------------------------------- lifecycle

    def startup(self) -> None:
        """Kafka's ``startup()``: queue Startup and start the event loop task."""
        self.core.watches.register_node_handler(paths.CONTROLLER, self._controller_change_handler)
        self.core.events.put(Startup())
        self.core.events.start()

    async def shutdown(self) -> None:
        self.guards.cancel()
        await self.core.events.close()
        await self.on_controller_resignation()
        self.core.event_log.flush()  # nothing held back once stopped (`EventLog.lines_sink`)

    def abort(self) -> None:
        """A crash: stop processing at once, send nothing more (used by failure drills and the simulator)."""
        self.guards.cancel()
        self.core.events.abort()
        self.core.channel_manager.shutdown()

    def before_initializing_session(self) -> QueuedEvent:
        """The old session expired: drop the queued events (Kafka's ``clearAndPut(Expire)``) so none of the lost
        session's runs on it; Expire then resigns. Call it as soon as the expiry is known, before anything else
        gets to run: the caller waits for Expire's processing to begin before it opens a new session."""
        return self.core.events.clear_and_put(Expire())

    def after_initializing_session(self) -> None:
        self.core.events.put(RegisterBrokerAndReelect())

    def on_session_reconnected(self) -> None:
        self.core.events.put(SessionReconnected())

    @staticmethod
    def _controller_change_handler(event_type: EventType) -> ControllerEvent | None:
        return Reelect() if event_type is EventType.NODE_DELETED else ControllerChange()

    def _on_broker_response(self, broker_id: int, request: AnyControlRequest, response: ControlResponse) -> None:
        self.responses.on_broker_response(broker_id, request, response)

    # ---------------------------------------------------------------- event dispatch

    async def process(self, event: ControllerEvent) -> None:
        """One event; when the session ended under it, one loop turn more before the event thread's next event.

        The store can fail the event's request before the session's listeners hear of the expiry (on the embedded
        store they are told one loop step later). Without the turn, the event thread would take the next event the
        lost session queued and run it on the dead session before the broker's listener clears the queue for
        Expire. Only events the expiry ended yield, so every other interleaving (and simulator trace) is as before.
        """
        self._session_ended_under_event = False
        try:
            try:
                try:
                    await self._handlers[type(event)](event)
                except IllegalControllerStateError as e:
                    await self.handle_illegal_state(e)
            except ControllerMovedError as e:  # Kafka's info(..., e): the failed epoch check says why
                self.core.log.log(logging.INFO, f"Controller moved to another broker when processing {event}.", e)
                await self.maybe_resign()
            except Exception as e:  # Kafka logs any other failure (an illegal state, after resigning) and goes on
                self.core.log.error(f"Error processing event {event}", e)
                if _caused_by_session_expiry(e):
                    self._session_ended_under_event = True
        finally:  # the event's state-change records held back (`EventLog.lines_sink`), also when cancelled
            self.core.event_log.flush_soon(self.runtime)
        if self._session_ended_under_event:
            self._session_ended_under_event = False
            await asyncio.sleep(0)  # the session's listeners, already scheduled, run before the next event

    def preempt(self, event: ControllerEvent) -> None:
        """A dropped event that answers a broker answers NOT_CONTROLLER (Kafka's ``preempt``)."""
        if isinstance(event, BrokerRequestEvent):
            event.callback(not_controller_response(event.request))
        elif isinstance(event, AdminRequestEvent):
            event.callback(ApiError(Errors.NOT_CONTROLLER))
        elif isinstance(event, ReplicaLeaderElection):
            event.callback({tp: ApiError(Errors.NOT_CONTROLLER) for tp in event.partitions or ()})

    async def handle_broker_request(self, request: BrokerToControllerRequest) -> BrokerToControllerResponse:
        """A broker's ControlledShutdown or AlterIsr, answered once its event has been processed here (the
        request handler of this broker routes them to its controller, active or not)."""
        return await submit_broker_request(self.core.events, self._handlers, request)

    async def alter_partition_reassignments(
        self, reassignments: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, ApiError] | ApiError:
        """AlterPartitionReassignments: a target per partition, None cancels; per-partition errors, or one
        top-level error (NOT_CONTROLLER)."""
        items = tuple((tp, None if r is None else tuple(r)) for tp, r in reassignments.items())
        return await submit_admin_request(
            self.core.events, lambda cb: ApiPartitionReassignment(callback=cb, reassignments=items))

    async def list_partition_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, ReplicaAssignment] | ApiError:
        """ListPartitionReassignments: the partitions (None: all) being reassigned, with RS, AR and RR."""
        wanted = None if partitions is None else tuple(partitions)
        return await submit_admin_request(
            self.core.events, lambda cb: ListPartitionReassignments(callback=cb, partitions=wanted))

    def _on_event_processed(self, event: ControllerEvent, queue_time_ms: int, processing_time_ms: int) -> None:
        """One record per processed event, stamped with the controller as this broker knows it: itself while
        active, otherwise the broker ``/controller`` named when it last looked (-1: none)."""
        self.core.event_log.emit(
            "controller_event",
            controller_id=self.controller_id if self.is_active else self.core.active_controller_id,
            controller_epoch=self.core.context.epoch,
            event=event.name,
            queue_time_ms=queue_time_ms,
            processing_time_ms=processing_time_ms,
        )

    # ---------------------------------------------------------------- election (§2.3–§2.7)

    async def process_startup(self, _event: Startup) -> None:
        await self.core.zk.path_exists(paths.CONTROLLER, self.core.on_watch)
        await self.elect()
        self.unclean_election.broker_start_election_done()  # later tenures: no notifications replayed

    async def process_controller_change(self, _event: ControllerChange) -> None:
        await self.maybe_resign()

    async def process_reelect(self, _event: Reelect) -> None:
        await self.maybe_resign()
        await self.elect()

    async def process_expire(self, _event: Expire) -> None:
        self.core.active_controller_id = -1
        await self.on_controller_resignation()

    async def process_register_broker_and_reelect(self, _event: RegisterBrokerAndReelect) -> None:
        self.broker_epoch = await self.core.zk.register_broker(self.broker_info)  # KafkaZkClient logs it
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
        await self.brokers.process_broker_change(BrokerChange())
        await self.topics.process_topic_change(TopicChange())
        for topic in sorted(self.core.context.all_topics):
            await self.topics.process_partition_modifications(PartitionModifications(topic=topic))
        for family in self.families:
            await family.on_session_reconnected()

    async def current_controller_id(self) -> int:
        try:
            controller_id = await self.core.zk.get_controller_id(self.core.on_watch)
        except ZnodeDecodeError as e:  # someone wrote garbage there; the owner's session will clear it
            self.core.log.error(f"Cannot read the active controller: {e}")
            return -1
        return -1 if controller_id is None else controller_id

    async def elect(self) -> None:
        core = self.core
        core.active_controller_id = await self.current_controller_id()
        if core.active_controller_id != -1:
            core.log.debug(f"Broker {core.active_controller_id} has been elected as the controller, so stopping the "
                           "election process.")
            return
        try:
            epoch, epoch_zk_version = await core.zk.register_controller_and_increment_controller_epoch(
                self.controller_id
            )
        except ControllerMovedError:
            await self._lost_election()
            return
        except ZnodeDecodeError as e:
            await self.guards.unreadable_epoch(e)
            return
        core.context.fencing = FencingToken(epoch, epoch_zk_version)
        core.active_controller_id = self.controller_id
        core.log.info(
            f"{self.controller_id} successfully elected as the controller. Epoch incremented to {epoch} and "
            f"epoch zk version is now {epoch_zk_version}"
        )
        core.emit("controller_elected")
        try:
            await self.on_controller_failover()
        except ControllerMovedError:
            await self._lost_election()
        except Exception as e:
            await self._failover_failed(e)
        else:
            self.failover_failures = 0

    async def _lost_election(self) -> None:
        await self.maybe_resign()
        if self.core.active_controller_id != -1:
            self.core.log.debug(
                f"Broker {self.core.active_controller_id} was elected as controller instead of broker "
                f"{self.controller_id}"
            )
        else:
            self.core.log.warn(
                "A controller has been elected but just resigned, this will result in another round of election"
            )

    async def _failover_failed(self, error: Exception) -> None:
        """Kafka resigns at once; we first wait a back-off that doubles with each failure in a row, so a
        failover that fails on every broker runs a few times a minute, not hundreds."""
        if isinstance(error, SessionExpiredError):
            self._session_ended_under_event = True  # `process` yields once after this event
            # The session ended under the failover: its /controller went with it and the Expire queued by the
            # expiry resigns. Kafka would trigger a controller move here, whose first read fails on the same dead
            # session (a second traceback); a back-off would only hold up that Expire and the new session.
            self.core.log.error(f"Error while electing or becoming controller on broker {self.controller_id}. "
                                "The ZooKeeper session expired: no controller movement to trigger", error)
            return
        self.failover_failures += 1
        backoff_ms = min(self.config.failover_retry_backoff_max_ms,
                         self.config.failover_retry_backoff_ms * 2 ** (self.failover_failures - 1))
        self.core.log.error(
            f"Error while electing or becoming controller on broker {self.controller_id}. Trigger controller "
            f"movement in {backoff_ms} ms (failure {self.failover_failures} in a row)",
            error,
        )
        await self.runtime.sleep_ms(backoff_ms)
        await self.trigger_controller_move()

    async def maybe_resign(self) -> None:
        core = self.core
        was_active = self.is_active
        core.watches.register_node_handler(paths.CONTROLLER, self._controller_change_handler)
        await core.zk.path_exists(paths.CONTROLLER, core.on_watch)
        core.active_controller_id = await self.current_controller_id()
        if was_active and not self.is_active:
            await self.on_controller_resignation()
        await self.guards.delete_if_overwritten()

    async def trigger_controller_move(self) -> None:
        core = self.core
        core.active_controller_id = await self.current_controller_id()
        if not self.is_active:
            core.log.warn("Controller has already moved when trying to trigger controller movement")
            return
        expected = core.context.fencing.epoch_zk_version
        core.active_controller_id = -1
        await self.on_controller_resignation()
        try:
            await core.zk.delete_controller(expected)
        except ControllerMovedError:
            core.log.warn("Controller has already moved when trying to trigger controller movement")

    async def handle_illegal_state(self, error: IllegalControllerStateError) -> None:
        """Kafka's ``handleIllegalState``: resign, then rethrow (the event thread logs it)."""
        self.core.log.error("Forcing the controller to resign", error)
        self.core.request_batch.clear()
        await self.trigger_controller_move()
        raise error

    # ---------------------------------------------------------------- failover and resignation (§2.5, §2.6)

    async def on_controller_failover(self) -> None:
        await self.tenure.begin()

    async def on_controller_resignation(self) -> None:
        self.tenure.end(self.controller_id)


def _caused_by_session_expiry(error: BaseException) -> bool:
    """Whether ``error`` is, or was raised while handling or from, a SESSION_EXPIRED (a handler may wrap it)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, SessionExpiredError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
