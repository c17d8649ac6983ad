"""A broker's Prometheus endpoint (``prometheus-client``) with Kafka's metric names as the Prometheus JMX
exporter's usual Kafka rules map them (``kafka.controller<type=KafkaController, name=X><>Value`` becomes
``kafka_controller_kafkacontroller_x``; a meter's ``Count`` becomes ``..._count``; a timer adds quantiles).

Gauges are read at scrape time from the broker's controller candidate and control plane; event timings come
from the controller's event records (the `EventLog` sink this module provides), so nothing in the
controller changes for metrics. The replica metrics come from the data plane (the replica manager): its
leaders' own ISRs for UnderReplicatedPartitions, and the ISR shrinks and expands it committed (through AlterIsr,
or before IBP 2.7-IV2 through its own ZooKeeper writes) for IsrShrinksPerSec and IsrExpandsPerSec.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from zkcontroller.broker.control_plane import PartitionRole
from zkcontroller.cluster.kafka_server import KafkaServer
from zkcontroller.controller.events import ControllerEvent

_BUCKETS_MS = (1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)


def _event_timers() -> dict[str, str]:
    """Controller event class name → its ControllerStats timer (e.g. ``LeaderElectionRateAndTimeMs``)."""
    timers: dict[str, str] = {}
    pending: list[type] = [ControllerEvent]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        timer = getattr(cls, "state", None)
        if timer is not None and timer.timer_name is not None:
            timers[cls.__name__] = timer.timer_name
    return timers


_CONTROLLER_EVENT = '"type":"controller_event"'
"""How every ``controller_event`` record is encoded (`encode_record`: compact, header first)."""


class BrokerMetrics(Collector):
    def __init__(self, server_ref: Any) -> None:
        """``server_ref()`` returns the running `KafkaServer` or None (before start-up)."""
        self._server_ref = server_ref
        self.registry = CollectorRegistry()
        self.registry.register(self)
        self._timers = _event_timers()
        self.event_queue_time = Histogram("kafka_controller_controllereventmanager_eventqueuetimems",
                                          "EventQueueTimeMs: time events wait in the controller's queue",
                                          buckets=_BUCKETS_MS, registry=self.registry)
        self.rate_and_time = Histogram("kafka_controller_controllerstats_rateandtimems",
                                       "ControllerStats <state>RateAndTimeMs, labelled by Kafka's timer name",
                                       ["name"], buckets=_BUCKETS_MS, registry=self.registry)

    def event_sink(self, line: str) -> None:
        """An `EventLog` sink: each processed controller event feeds the queue-time and state timers.

        Only ``controller_event`` records are decoded: a broker failure emits tens of thousands of per-partition
        records, and decoding each cost more than the controller's handling of it."""
        if _CONTROLLER_EVENT not in line:
            return
        record = json.loads(line)
        if record.get("type") != "controller_event":
            return
        self.event_queue_time.observe(record.get("queue_time_ms", 0))
        timer = self._timers.get(record.get("event", ""))
        if timer is not None:
            self.rate_and_time.labels(timer).observe(record.get("processing_time_ms", 0))

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        server: KafkaServer | None = self._server_ref()
        controller = server.controller if server is not None else None
        active = controller is not None and controller.is_active
        context = controller.context if active and controller is not None else None

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            return GaugeMetricFamily(name, doc, value=value)

        yield gauge("kafka_controller_kafkacontroller_activecontrollercount", "ActiveControllerCount", int(active))
        yield gauge("kafka_controller_kafkacontroller_offlinepartitionscount", "OfflinePartitionsCount",
                    context.offline_partition_count if context else 0)
        yield gauge("kafka_controller_kafkacontroller_preferredreplicaimbalancecount",
                    "PreferredReplicaImbalanceCount", context.preferred_replica_imbalance_count if context else 0)
        yield gauge("kafka_controller_kafkacontroller_globaltopiccount", "GlobalTopicCount",
                    len(context.all_topics) if context else 0)
        yield gauge("kafka_controller_kafkacontroller_globalpartitioncount", "GlobalPartitionCount",
                    _read(lambda: sum(len(p) for p in list(context.partition_assignments.values())))
                    if context else 0)
        yield gauge("kafka_controller_controllerstats_uncleanleaderelectionspersec_count",
                    "UncleanLeaderElectionsPerSec (Count)",
                    controller.context.stats.unclean_leader_elections if controller is not None else 0)
        yield gauge("kafka_controller_controllereventmanager_eventqueuesize", "EventQueueSize",
                    controller.event_manager.queue_size if controller is not None else 0)
        plane = server.control_plane if server is not None else None
        hosted = _read(lambda: list(plane.partitions.values())) if plane is not None else []
        leaders = [h for h in hosted if h.role is PartitionRole.LEADER]
        rm = server.replica_manager if server is not None else None
        if rm is not None:  # the leaders' own ISRs, as they shrink and expand them
            data_plane = _read(lambda: list(rm.partitions.values()))
            under = sum(1 for p in data_plane if p.is_leader and len(p.isr) < len(p.replicas))
        else:
            under = sum(1 for h in leaders if len(h.isr) < len(h.replicas))
        yield gauge("kafka_server_replicamanager_leadercount", "LeaderCount", len(leaders))
        yield gauge("kafka_server_replicamanager_partitioncount", "PartitionCount", len(hosted))
        yield gauge("kafka_server_replicamanager_underreplicatedpartitions", "UnderReplicatedPartitions", under)
        yield CounterMetricFamily("kafka_server_replicamanager_isrshrinkspersec", "IsrShrinksPerSec (Count)",
                                  value=rm.isr_shrinks if rm is not None else 0)
        yield CounterMetricFamily("kafka_server_replicamanager_isrexpandspersec", "IsrExpandsPerSec (Count)",
                                  value=rm.isr_expands if rm is not None else 0)
        sessions = rm.fetch_manager.cache if rm is not None else None
        yield gauge("kafka_server_fetchsessioncache_numincrementalfetchsessions", "NumIncrementalFetchSessions",
                    len(sessions) if sessions is not None else 0)
        yield gauge("kafka_server_fetchsessioncache_numincrementalfetchpartitionscached",
                    "NumIncrementalFetchPartitionsCached", sessions.total_partitions if sessions is not None else 0)
        yield CounterMetricFamily("kafka_server_fetchsessioncache_incrementalfetchsessionevictionspersec",
                                  "IncrementalFetchSessionEvictionsPerSec (Count)",
                                  value=sessions.evictions if sessions is not None else 0)

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        """The ``/metrics`` endpoint on a thread of prometheus-client's own."""
        start_http_server(port, host, registry=self.registry)


def _read(fn: Any, attempts: int = 5) -> Any:
    """Scrapes run on prometheus-client's thread while the event loop mutates the broker's dicts: a read that
    meets a resize mid-copy is simply tried again."""
    for _ in range(attempts - 1):
        try:
            return fn()
        except RuntimeError:
            continue
    return fn()
