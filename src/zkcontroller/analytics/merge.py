"""Merge the sources of one cluster: a Kafka-format line that says what an event-log record says is dropped.

``zkcontroller demo`` (and any run of our controller) writes ``events.jsonl`` beside Kafka-format
``controller.log``/``state-change.log`` of the same run. Counting both would double every state change,
election and ISR change, and turn each leaderless interval into a pair of 0-2 ms rows. The event log wins:
it is exact (integer ms, typed fields); Kafka-format lines with no event-log counterpart (requests,
broker-side lines, membership diffs) stay.

An ISR change that changes nothing is dropped too, from every cluster (`without_unchanged_isr`): Kafka 2.8's
controller logs "... after removing replica n from the ISR" for a partition whose ISR already lacks n, though
it writes nothing for it, and our event log rightly has no record of it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from zkcontroller.event_schema import RECORD_TYPES

SHARED_KINDS = tuple(k for k in RECORD_TYPES if k != "controller_event")
"""Kinds both sources can hold (the event log's record types that a Kafka line also parses to)."""
DEFAULT_TOLERANCE_MS = 1000
_SAME_IF_BOTH_KNOWN = ("controller_id", "controller_epoch", "from_state", "to_state", "leader", "broker_id",
                       "leader_epoch", "phase")


def merge_sources(events: DataFrame, clusters: list[str], tolerance_ms: int = DEFAULT_TOLERANCE_MS) -> DataFrame:
    """``events`` without the Kafka-format rows of ``clusters`` that an event-log row of the same cluster,
    kind and partition states within ``tolerance_ms`` (fields both give must agree)."""
    if not clusters:
        return events
    mixed = F.col("cluster").isin(*clusters)
    kept = events.where(~mixed)
    k = events.where(mixed).alias("k")
    j = events.where(mixed & (F.col("source_format") == "jsonl") & F.col("kind").isin(*SHARED_KINDS)).select(
        "cluster", "kind", "topic", "partition", "ts_ms", *_SAME_IF_BOTH_KNOWN).alias("j")
    k_cols, j_cols = (lambda n: F.col(f"k.{n}")), (lambda n: F.col(f"j.{n}"))
    covered = (
        (k_cols("source_format") == "kafka_log") & (k_cols("cluster") == j_cols("cluster"))
        & (k_cols("kind") == j_cols("kind"))
        & k_cols("topic").eqNullSafe(j_cols("topic")) & k_cols("partition").eqNullSafe(j_cols("partition"))
        & (F.abs(k_cols("ts_ms") - j_cols("ts_ms")) <= tolerance_ms)
        & (k_cols("brokers").isNull() | j_cols("broker_id").isNull()
           | F.array_contains(k_cols("brokers"), j_cols("broker_id")))
    )
    for name in _SAME_IF_BOTH_KNOWN:
        covered = covered & (k_cols(name).isNull() | j_cols(name).isNull() | (k_cols(name) == j_cols(name)))
    merged = k.join(j, on=covered, how="left_anti").select(*(F.col(f"k.{c}").alias(c) for c in events.columns))
    return kept.unionByName(merged)


STATE_KINDS = ("partition_state_change", "isr_change", "leader_election")
"""Kinds whose rows can state a partition's (leader, ISR, leader epoch): the controller's own records."""


def without_unchanged_isr(events: DataFrame) -> DataFrame:
    """``events`` without the ``isr_change`` rows whose (leader, ISR members, leader epoch) equal the partition's
    previous known state: the latest earlier row of its cluster and partition (in line order) that states all
    three, of a kind in ``STATE_KINDS``. A partition's first stated state is kept.

    Kafka 2.8's ``ReplicaStateMachine.doRemoveReplicasFromIsr`` writes nothing for a partition whose ISR already
    lacks the replica, yet its caller logs the partition's state "after removing replica n from the ISR" for it
    (each controller that handles the broker's failure again, say); counted, every table would hold one ISR
    change more than happened. The controller epoch is not compared: that line prints the current controller's.

    One window, partitioned by cluster, topic and partition; a row that cannot state a partition's state is a
    window of its own (its line), so no task gathers all of a cluster's other lines.
    """
    can_state = F.coalesce(F.col("kind").isin(*STATE_KINDS) & F.col("topic").isNotNull()
                           & F.col("partition").isNotNull(), F.lit(False))
    states = can_state & F.col("leader").isNotNull() & F.col("isr").isNotNull() & F.col("leader_epoch").isNotNull()
    state = F.when(states, F.struct(F.col("leader").alias("leader"), F.array_sort("isr").alias("isr"),
                                    F.col("leader_epoch").alias("leader_epoch")))
    alone = F.when(~can_state, F.struct("source_file", "line_number"))
    before = Window.partitionBy("cluster", "topic", "partition", alone).orderBy(
        "ts_ms", "source_file", "line_number").rowsBetween(Window.unboundedPreceding, -1)
    previous = F.last(state, ignorenulls=True).over(before)
    unchanged = F.coalesce((F.col("kind") == "isr_change") & (state == previous), F.lit(False))
    return events.select("*", unchanged.alias("_unchanged")).where(~F.col("_unchanged")).select(*events.columns)


def sources_by_cluster(events: DataFrame) -> DataFrame:
    """(cluster, source_format, source_file, events): which files fed each cluster, for the report."""
    return events.groupBy("cluster", "source_format", "source_file").agg(F.count(F.lit(1)).alias("events"))
