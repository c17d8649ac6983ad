"""A stale controller's resignation (and its handling of the events that tell it it lost the controller) is no
action on the cluster: no split-brain window of its own. What it did or tried still counts."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from tests.analytics.test_transform import T0, events

from zkcontroller.analytics import incidents
from zkcontroller.analytics.controller_timeline import CANDIDATE_COLUMNS
from zkcontroller.analytics.timeline_tables import rows_frame

pytestmark = pytest.mark.spark
STALE, NEW = dict(controller_id=1, controller_epoch=1), dict(controller_id=2, controller_epoch=2)


def windows(spark, rows: list[dict[str, object]]) -> list[tuple[object, ...]]:
    """(end ms, stale actions, stale refused, new actions) of the windows of controller 1 (epoch 1) acting after
    controller 2 (epoch 2) began at 1000, as the timeline bounds them (to 1000 + the stale's last line)."""
    candidate = {"cluster": "c", "start_ms": T0 + 1000, "end_ms": T0 + max(int(r["ms"]) for r in rows),
                 "stale_controller_id": 1, "stale_epoch": 1, "new_controller_id": 2, "new_epoch": 2}
    got = incidents.split_brain_windows(rows_frame(spark, [candidate], CANDIDATE_COLUMNS), events(spark, rows))
    return [(r.duration_ms, r.stale_actions, r.stale_refused, r.new_actions) for r in got.collect()]


BEGUN = [dict(ms=0, kind="controller_elected", **STALE), dict(ms=1000, kind="controller_elected", **NEW),
         dict(ms=1000, kind="partition_state_change", topic="t", partition=0, to_state="OnlinePartition", leader=2,
              **NEW)]


def test_a_late_resignation_is_no_split_brain(spark) -> None:
    resigned = [*BEGUN, dict(ms=1063, kind="controller_event", event_name="Expire", **STALE),
                dict(ms=1063, kind="controller_resigned", **STALE),
                dict(ms=1070, kind="controller_event", event_name="ControllerChange", **STALE)]
    assert windows(spark, resigned) == []


def test_what_the_stale_controller_did_or_tried_still_counts(spark) -> None:
    acted = [*BEGUN, dict(ms=1050, kind="controller_event", event_name="TopicChange", **STALE),
             dict(ms=1060, kind="leader_and_isr_ignored", broker_id=3, topic="t", partition=0, **STALE),
             dict(ms=1063, kind="controller_resigned", **STALE)]
    assert windows(spark, acted) == [(60, 1, 1, 2)]  # the window ends at its last attempt, not its resignation


def test_zookeeper_refusing_the_stale_controller_s_write_is_a_refusal(spark) -> None:
    """"Controller moved to another broker …" (Kafka's ControllerMovedException: ZooKeeper's epoch-zkVersion check
    refused the write) states no epoch: the stale controller's line inside the window is its refused attempt, as
    is a line with that exception under it (a lost election). They counted nowhere (an action had to state an
    epoch); the event whose handling was refused stays an action."""
    tried = [*BEGUN, dict(ms=1040, kind="controller_moved", controller_id=1),  # "… when moving some partitions …"
             dict(ms=1041, kind="controller_moved", controller_id=1),  # "… when processing TopicChange."
             dict(ms=1041, kind="controller_moved", controller_id=2),  # another controller's (not this window's)
             dict(ms=1042, kind="other", controller_id=1, exception="org.apache.kafka.common.errors."
                  "ControllerMovedException: Controller moved to another broker. Aborting controller startup "
                  "procedure"),
             dict(ms=1045, kind="controller_event", event_name="TopicChange", **STALE),
             dict(ms=1050, kind="controller_resigned", **STALE)]
    assert windows(spark, tried) == [(45, 1, 3, 2)]


def test_the_events_of_who_is_controller_are_the_controllers() -> None:
    """``CONTROLLER_CHANGE_EVENTS`` are our controller's events of Kafka's ControllerChange and ControllerShutdown
    states (the names its ``controller_event`` records carry)."""
    from zkcontroller.controller import events as controller_events
    from zkcontroller.controller.states import ControllerState

    found = {cls.__name__ for cls in vars(controller_events).values()
             if isinstance(cls, type) and issubclass(cls, controller_events.ControllerEvent)
             and cls.state in (ControllerState.CONTROLLER_CHANGE, ControllerState.CONTROLLER_SHUTDOWN)}
    assert found == set(incidents.CONTROLLER_CHANGE_EVENTS)
