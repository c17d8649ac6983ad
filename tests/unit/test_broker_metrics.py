"""Broker metrics read controller timings from the event log without decoding every record."""

from __future__ import annotations

from zkcontroller.cluster.metrics import BrokerMetrics
from zkcontroller.controller.event_log import EventLog


def test_broker_metrics_decode_only_controller_event_records() -> None:
    metrics = BrokerMetrics(lambda: None)
    events = EventLog("m", lambda: 0, metrics.event_sink)
    events.emit("partition_state_change", topic="t", partition=0, from_state="OnlinePartition",
                to_state="OfflinePartition")
    events.emit("controller_event", event="TopicChange", queue_time_ms=3, processing_time_ms=7)
    events.emit("controller_event", event="BrokerChange", queue_time_ms=1, processing_time_ms=2)
    counts = {m.name: {s.name: s.value for s in m.samples} for m in metrics.registry.collect()}
    assert counts["kafka_controller_controllereventmanager_eventqueuetimems"][
        "kafka_controller_controllereventmanager_eventqueuetimems_count"] == 2
    assert counts["kafka_controller_controllereventmanager_eventqueuetimems"][
        "kafka_controller_controllereventmanager_eventqueuetimems_sum"] == 4
