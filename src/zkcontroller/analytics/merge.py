"""Merge the sources of one cluster: a Kafka-format line that says what an event-log record says is dropped.

``zkcontroller demo`` (and any run of our controller) writes ``events.jsonl`` beside Kafka-format
``controller.log``/``state-change.log`` of the same run. Counting both would double every state change,
election and ISR change, and turn each leaderless interval into a pair of 0-2 ms rows. The event log wins:
it is exact (integer ms, typed fields); Kafka-format lines with no event-log counterpart (requests,
broker-side lines, membership diffs) stay.

An ISR change that changes nothing is dropped too, from every cluster (`unchanged_isr_rows`): Kafka 2.8's
controller logs "... after removing replica n from the ISR" for a partition whose ISR already lacks n, though
it writes nothing for it, and our event log rightly has no record of it. The check reads only the few rows that
state a partition's leader and ISR; the job drops what it finds with a broadcast anti-join (`without_rows`).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from zkcontroller.event_schema import RECORD_TYPES

SHARED_KINDS = tuple(k for k in RECORD_TYPES if k != "controller_event")
"""Kinds both sources can hold (the event log's record types that a Kafka line also parses to)."""
DEFAULT_TOLERANCE_MS = 1000
_SAME_IF_BOTH_KNOWN = ("controller_id", "controller_epoch", "from_state", "to_state", "leader", "broker_id",
                       "leader_epoch", "phase")
MERGE_COLUMNS = ("cluster", "kind", "topic", "partition", "ts_ms", "source_format", "source_file", "line_number",
                 "brokers", *_SAME_IF_BOTH_KNOWN)
"""The columns ``merge_sources`` reads (it returns whichever columns it is given)."""


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
LEADER_ISR_KINDS = ("isr_shrink", "isr_expand", "isr_update")
"""A leader's own ISR lines (``[Partition t-p broker=n] Shrinking/Expanding ISR from … to …``, 2.7+'s ``ISR updated
to … and version updated to […]``): an ISR, no epoch."""
CHECKED_KINDS = (*STATE_KINDS, *LEADER_ISR_KINDS)
"""The only rows ``unchanged_isr_rows`` reads."""
CHECKED_COLUMNS = ("cluster", "topic", "partition", "ts_ms", "source_file", "line_number", "source_format", "kind",
                   "leader", "isr", "leader_epoch", "broker_id")
ROW_KEY = ("cluster", "source_file", "line_number")
"""What names one row of ``events``: a line of an input file of a cluster."""
BROADCAST_CHANGED_PARTITIONS = 100_000
"""Most partitions with an ISR change whose keys (cluster, topic, partition: some 50-100 bytes each)
``unchanged_isr_rows`` sends to every task; at a few hundred thousand that was tens of MB on the driver and in
every executor."""


def unchanged_isr_rows(events: DataFrame, broadcast_limit: int = BROADCAST_CHANGED_PARTITIONS) -> DataFrame:
    """``ROW_KEY`` of the ``isr_change`` rows of ``events`` that change nothing: their (leader, ISR members, leader
    epoch) equal the partition's previous known state. That is the latest earlier row of its cluster and partition
    (in line order) that states all three, of a kind in ``STATE_KINDS``; or, for a Kafka-format line only, that
    state with its ISR replaced by the latest later ``LEADER_ISR_KINDS`` line of its leader (the leader
    changes the ISR without a new leader epoch). A partition's first stated state is kept.

    Kafka 2.8's ``ReplicaStateMachine.doRemoveReplicasFromIsr`` writes nothing for a partition whose ISR already
    lacks the replica, yet its caller logs the partition's state "after removing replica n from the ISR" for it
    (each controller that handles the broker's failure again, say, or the leader shrank the ISR first); counted,
    every table would hold one ISR change more than happened. The controller epoch is not compared: that line
    prints the current controller's. Why the leader's lines are sound evidence, and only for Kafka's lines:
    docs/analytics.md, Merge.

    Reads only the rows of ``CHECKED_KINDS`` and the ``CHECKED_COLUMNS``: one window partitioned by cluster, topic
    and partition over a share of the lines (a third in the benchmark) and a third of the columns, rather
    than a shuffle of every parsed row. Only a partition with an ISR change can hold a no-op one, so the window
    reads only theirs: one Spark action counts those partitions first. None: no window at all. Up to
    ``broadcast_limit``: their keys are broadcast and the other partitions' rows are dropped before the window's
    shuffle (a left-semi join). More: the window reads every row, shuffled by its partition as it needs them
    anyway; a shuffled semi join would shuffle every row too and sort them once more. Spark's own choice
    (``spark.sql.autoBroadcastJoinThreshold``) is not used: over the job's unbuilt cache of these rows it
    knows no size and plans a sort-merge join, shuffling every row, for a handful of keys
    (docs/benchmarks.md, issue 16, twenty-sixth session).
    """
    order = ("ts_ms", "source_file", "line_number")
    rows = events.where(F.col("kind").isin(*CHECKED_KINDS) & F.col("topic").isNotNull()
                        & F.col("partition").isNotNull()).select(*CHECKED_COLUMNS)
    key = ("cluster", "topic", "partition")
    changed = rows.where(F.col("kind") == "isr_change").select(*(F.col(c).alias(f"c_{c}") for c in key)).distinct()
    partitions = changed.count()
    if partitions == 0:
        return rows.select(*ROW_KEY).limit(0)
    if partitions <= broadcast_limit:
        rows = rows.join(F.broadcast(changed), on=reduce(lambda a, b: a & b, (
            F.col(c).eqNullSafe(F.col(f"c_{c}")) for c in key)), how="left_semi")
    at = F.struct(*order)
    members = F.array_sort("isr")
    states = F.col("kind").isin(*STATE_KINDS) & F.col("leader").isNotNull() & F.col("isr").isNotNull() \
        & F.col("leader_epoch").isNotNull()
    state = F.when(states, F.struct(at.alias("at"), F.col("leader").alias("leader"), members.alias("isr"),
                                    F.col("leader_epoch").alias("leader_epoch")))
    leader_line = F.when(F.col("kind").isin(*LEADER_ISR_KINDS) & F.col("broker_id").isNotNull()
                         & F.col("isr").isNotNull(),
                         F.struct(at.alias("at"), F.col("broker_id").alias("leader"), members.alias("isr")))
    before = Window.partitionBy("cluster", "topic", "partition").orderBy(*order).rowsBetween(
        Window.unboundedPreceding, -1)
    staged = rows.select("*", F.last(state, ignorenulls=True).over(before).alias("previous"),
                         F.last(leader_line, ignorenulls=True).over(before).alias("by_leader"))

    def stated(leader: Column, isr: Column, leader_epoch: Column) -> Column:
        return F.struct(leader.alias("leader"), isr.alias("isr"), leader_epoch.alias("leader_epoch"))

    own = F.when(states, stated(F.col("leader"), members, F.col("leader_epoch")))
    previous, by_leader = F.col("previous"), F.col("by_leader")
    as_before = own == stated(previous["leader"], previous["isr"], previous["leader_epoch"])
    as_leader_left_it = ((F.col("source_format") == "kafka_log") & (by_leader["at"] > previous["at"])
                         & (by_leader["leader"] == previous["leader"])
                         & (own == stated(previous["leader"], by_leader["isr"], previous["leader_epoch"])))
    unchanged = (F.col("kind") == "isr_change") & F.coalesce(as_before | as_leader_left_it, as_before, F.lit(False))
    return staged.where(unchanged).select(*ROW_KEY)


def without_rows(events: DataFrame, rows: DataFrame, broadcast: bool = True) -> DataFrame:
    """``events`` without its ``isr_change`` rows whose ``ROW_KEY`` is in ``rows`` (``unchanged_isr_rows``).

    ``broadcast``: ``rows`` is small enough to send to every task, so the rows of ``events`` stay where they
    are (no shuffle); only ``isr_change`` rows are looked up, every other row has a null key and passes.
    """
    probe = [F.when(F.col("kind") == "isr_change", F.col(name)).alias(f"_{name}") for name in ROW_KEY]
    keys = rows.select(*(F.col(name).alias(f"_drop_{name}") for name in ROW_KEY))
    keys = F.broadcast(keys) if broadcast else keys
    on = [F.col(f"_{name}") == F.col(f"_drop_{name}") for name in ROW_KEY]
    return events.select("*", *probe).join(keys, on=on, how="left_anti").select(*events.columns)


def without_unchanged_isr(events: DataFrame) -> DataFrame:
    """``events`` without the ``isr_change`` rows that change nothing (``unchanged_isr_rows``)."""
    return without_rows(events, unchanged_isr_rows(events))


def sources_by_cluster(events: DataFrame) -> DataFrame:
    """(cluster, source_format, source_file, events): which files fed each cluster, for the report."""
    return events.groupBy("cluster", "source_format", "source_file").agg(F.count(F.lit(1)).alias("events"))
