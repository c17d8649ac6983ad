"""One controller tenure's start and end: Kafka's ``onControllerFailover`` and ``onControllerResignation``.

Both walk the event families in Kafka's failover order (resignation in reverse); they live apart from the
election in `kafka_controller` because they only touch the families and the core, never the election state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from zkcontroller.controller.core import ControllerCore
from zkcontroller.controller.families import EventFamily
from zkcontroller.controller.fencing_token import NOT_CONTROLLER


class ControllerTenure:
    def __init__(self, core: ControllerCore, families: Sequence[EventFamily]) -> None:
        self.core = core
        self.families = families
        """In Kafka's failover order."""

    async def begin(self) -> None:
        """Failover (spec §2.5): watches, context, the first UpdateMetadata, the state machines, then each
        family's own step (reassignments resume, deletions retry, elections and the rebalance task start)."""
        core = self.core
        features, *others = self.families  # the feature versioning set-up comes before any handler
        await features.register_watches()
        core.log.info("Registering handlers")
        for family in others:
            await family.register_watches()  # steps 1–2 (the notification families delete stale ones)
        core.log.info("Initializing controller context")
        for family in self.families:
            await family.load_context()
        core.channel_manager.startup(sorted(core.context.live_or_shutting_down_brokers, key=lambda b: b.id))
        core.log.info("Sending update metadata request")
        core.send_update_metadata_request(core.context.live_or_shutting_down_broker_ids)
        # One yield: the send threads hand this UpdateMetadata to the transport now, not after the (long,
        # store-bound) state machine start-up; Kafka's send threads run in parallel with its event thread.
        # A bare loop yield, not a timed sleep: no time passes (and a runtime that gates sleeps is not asked).
        await asyncio.sleep(0)
        await core.replica_state_machine.startup()
        await core.partition_state_machine.startup()
        # Kafka says it is ready here, before reassignments resume, deletions retry and pending elections run
        core.log.info(f"Ready to serve as the new controller with epoch {core.context.epoch}")
        core.emit("controller_ready")
        for family in self.families:
            await family.on_failover()

    def end(self, controller_id: int) -> None:
        """Resignation (spec §2.6): families in reverse order, then the channels, context and fencing token."""
        core = self.core
        epoch = core.context.epoch
        for family in reversed(self.families):
            family.on_resignation()
        core.channel_manager.shutdown()
        core.context.reset_context()
        core.context.fencing = NOT_CONTROLLER
        # All three batches: a state change cut short by ControllerMovedError leaves its batch holding what it
        # queued before the fenced write (an OfflineReplica queues StopReplica first); kept, it would make every
        # state change of this broker's next tenure fail at `new_batch`.
        for batch in (core.request_batch, core.partition_state_machine.batch, core.replica_state_machine.batch):
            batch.clear()
        core.log.info("Resigned")
        if epoch:
            core.event_log.emit("controller_resigned", controller_id=controller_id, controller_epoch=epoch)
