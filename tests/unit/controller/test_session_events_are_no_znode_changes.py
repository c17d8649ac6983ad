"""A session event (no path) reaching a controller watch is no znode change, as in Kafka's ZooKeeperClient, which
hands path-less events to the state-change handlers only: none of the controller's node or child handlers turns it
into an event (read on the dead session, each would fail SESSION_EXPIRED, as the broker's /config/changes listener
did before 2026-11-27). The expiry reaches the controller once, through the broker's session listener (Expire)."""

from __future__ import annotations

import pytest

from zkcontroller.controller.core import WatchRegistry
from zkcontroller.controller.events import ConfigChangeNotification, ControllerChange, ControllerEvent
from zkcontroller.coordination.api import EventType, SessionState, WatchedEvent
from zkcontroller.zk import paths


@pytest.mark.parametrize("state", [SessionState.DISCONNECTED, SessionState.EXPIRED, SessionState.CLOSED])
def test_a_session_event_reaches_no_handler(state: SessionState) -> None:
    queued: list[ControllerEvent] = []
    watches = WatchRegistry(queued.append)
    watches.register_node_handler(paths.CONTROLLER, lambda _type: ControllerChange())
    watches.register_child_handler(paths.CONFIG_CHANGES, ConfigChangeNotification)
    watches.on_watch(WatchedEvent(EventType.NONE, state, None))
    assert queued == []
    watches.on_watch(WatchedEvent(EventType.NODE_CHILDREN_CHANGED, SessionState.CONNECTED, paths.CONFIG_CHANGES))
    watches.on_watch(WatchedEvent(EventType.NODE_DATA_CHANGED, SessionState.CONNECTED, paths.CONTROLLER))
    assert queued == [ConfigChangeNotification(), ControllerChange()]
