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


def _classified_windows(spark, rows: list[dict[str, object]], stale_last_ms: int, resigned_ms: int):
    """The windows of ``rows`` with the candidates ``classify`` gives for controller 1 (epoch 1, its last line
    stating that epoch at ``stale_last_ms``, its "Resigned" at ``resigned_ms``) and controller 2 (epoch 2, from
    1000): the timeline's bound and the window's count together."""
    from zkcontroller.analytics.controller_timeline import Tenure, classify

    stale = Tenure("c", 1, 1, elected_ms=T0, first_seen_ms=T0, last_seen_ms=T0 + stale_last_ms,
                   resigned_ms=T0 + resigned_ms)
    new = Tenure("c", 2, 2, elected_ms=T0 + 1000, first_seen_ms=T0 + 1000, last_seen_ms=T0 + 9000)
    candidates = classify([stale, new]).split_brain_candidates
    got = incidents.split_brain_windows(rows_frame(spark, candidates, CANDIDATE_COLUMNS), events(spark, rows))
    return [(r.duration_ms, r.stale_actions, r.stale_refused, r.new_actions) for r in got.collect()]


def test_a_refusal_after_the_stale_tenure_s_last_epoch_line_is_inside_its_window(spark) -> None:
    """Kafka logs "Controller moved to another broker when processing X." (no epoch) as the stale controller's write
    is refused, and resigns right after: its last action. The window ended at its last line stating its epoch, so
    the refusal fell outside it; and a stale controller whose only attempt after its successor began was refused
    had no window at all."""
    tried = [*BEGUN, dict(ms=1040, kind="controller_event", event_name="TopicChange", **STALE),
             dict(ms=1050, kind="controller_moved", controller_id=1),  # "… when processing TopicChange."
             dict(ms=1063, kind="controller_resigned", **STALE)]
    assert _classified_windows(spark, tried, 1040, 1063) == [(50, 1, 1, 2)]
    only_refused = [*BEGUN[:1], dict(ms=900, kind="controller_event", event_name="TopicChange", **STALE), *BEGUN[1:],
                    dict(ms=1050, kind="controller_moved", controller_id=1),
                    dict(ms=1063, kind="controller_resigned", **STALE)]
    assert _classified_windows(spark, only_refused, 900, 1063) == [(50, 0, 1, 2)]
    # its election lost after it resigned (a refusal naming it, later still) is no action of that tenure
    lost = [*tried, dict(ms=1200, kind="other", controller_id=1, exception="org.apache.kafka.common.errors."
                         "ControllerMovedException: Controller moved to another broker. Aborting controller startup "
                         "procedure")]
    assert _classified_windows(spark, lost, 1040, 1063) == [(50, 1, 1, 2)]
