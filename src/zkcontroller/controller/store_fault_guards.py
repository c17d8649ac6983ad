"""What the controller does about store contents that would otherwise leave the cluster without a controller
(beyond Kafka): an unreadable ``/controller_epoch`` is reported, watched, and the election re-run once it is
readable; a ``/controller`` owned by this broker's session but naming another broker (written by some other
client) is deleted so that a real election runs."""

from __future__ import annotations

import asyncio
import contextlib

from zkcontroller.controller.core import ControllerCore
from zkcontroller.controller.events import ControllerEvent, Reelect
from zkcontroller.coordination.api import EventType
from zkcontroller.coordination.errors import NoNodeError
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError, require_data
from zkcontroller.zk.znodes import ControllerZNode


class StoreFaultGuards:
    def __init__(self, core: ControllerCore) -> None:
        self._core = core
        self._epoch_retry: asyncio.Task[None] | None = None

    async def unreadable_epoch(self, error: ZnodeDecodeError) -> None:
        """``/controller_epoch`` is not a number: nobody can be elected until it is fixed. Say where and what,
        and re-run the election when the node changes (and, in case no change is seen, after a back-off)."""
        found = await self._core.zk.get_data_and_stat(paths.CONTROLLER_EPOCH)
        held = "nothing (gone)" if found is None else "null data" if found[0] is None else repr(found[0][:64])
        self._core.log.error(
            f"Cannot elect a controller: {error.path} holds {held}, not a controller epoch ({error.reason}). "
            "Waiting for it to be fixed")

        def handle(_event_type: EventType) -> ControllerEvent:
            return Reelect()

        self._core.watches.register_node_handler(paths.CONTROLLER_EPOCH, handle)
        await self._core.zk.path_exists(paths.CONTROLLER_EPOCH, self._core.on_watch)
        if self._epoch_retry is None or self._epoch_retry.done():
            delay_ms = self._core.config.failover_retry_backoff_max_ms
            self._epoch_retry = self._core.runtime.spawn(self._reelect_later(delay_ms),
                                                         f"controller-{self._core.controller_id}-epoch-retry")

    async def _reelect_later(self, delay_ms: int) -> None:
        await self._core.runtime.sleep_ms(delay_ms)
        self._core.events.put(Reelect())

    def cancel(self) -> None:
        if self._epoch_retry is not None:
            self._epoch_retry.cancel()
            self._epoch_retry = None

    async def delete_if_overwritten(self) -> None:
        """Our session owns ``/controller`` but it does not name us: another client overwrote it. Nobody else
        can delete an ephemeral node of ours short of our session ending, so we delete it and let the
        election run (the deletion fires Reelect on every broker)."""
        owner = await self._core.zk.get_controller_owner()
        if owner is None or owner[1] != self._core.zk.session.session_id:
            return
        try:
            named = ControllerZNode.decode(require_data(owner[0], paths.CONTROLLER))
        except ZnodeDecodeError:
            named = None
        if named == self._core.controller_id and self._core.is_active:
            return
        self._core.log.warn(
            f"{paths.CONTROLLER} is owned by this broker's session but names "
            f"{'no readable broker' if named is None else f'broker {named}'} (written by another client); "
            "deleting it so that a controller election runs")
        self._core.active_controller_id = -1
        with contextlib.suppress(NoNodeError):
            await self._core.zk.session.delete(paths.CONTROLLER)
