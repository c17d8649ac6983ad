"""Transform: pure ``DataFrame -> DataFrame`` functions from ``events`` to the analysis tables.

Every function starts and ends with an explicit ``select`` (so its input and output columns are visible
here), passes ``how=`` to every join and uses Spark built-ins only; the one Spark action is
`with_deletion_starts`'s count, which chooses its join. Times are Spark timestamps (UTC) named
``*_at``; durations are integer milliseconds named ``*_ms`` or float seconds named ``*_seconds``.
Columns of each table are documented in ``docs/analytics.md``.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

OFFLINE = "OfflinePartition"
ONLINE = "OnlinePartition"
GONE = "NonExistentPartition"
NEW = "NewPartition"
NO_LEADER = -1
_PARTITION_KEY = ("cluster", "topic", "partition")
_LINE_ORDER = ("ts_ms", "source_file", "line_number")
CONTROLLER_KINDS = ("partition_state_change", "isr_change", "leader_election")


def _ordered(*keys: str) -> WindowSpec:
    return Window.partitionBy(*keys).orderBy(*_LINE_ORDER)


PARTITION_ROW_KINDS = (*CONTROLLER_KINDS, "isr_shrink", "isr_expand", "isr_update")
_PARTITION_ROW_COLUMNS = (
    *_PARTITION_KEY, *_LINE_ORDER, "ts", "kind", "from_state", "to_state", "leader", "old_leader", "isr",
    "leader_epoch", "strategy", "trigger", "clean", "controller_id", "controller_epoch", "broker_id",
    "source_format",  # isr_changes: an event-log write adding a member is its leader's
)


def partition_rows(events: DataFrame, partitions: int) -> DataFrame:
    """The rows and columns the windows over each partition's history read (``partition_state_intervals``,
    ``partition_leadership``, ``leader_elections``, ``admin_tables.isr_changes``), hash-partitioned by
    partition and sorted in line order within each task.

    Persisted and passed to those functions as their ``events``, they are shuffled and sorted once: Spark
    sees the cached rows' partitioning and order, so none of those windows needs an exchange or a sort.
    """
    return events.where(F.col("kind").isin(*PARTITION_ROW_KINDS)).select(*_PARTITION_ROW_COLUMNS).repartition(
        partitions, *_PARTITION_KEY).sortWithinPartitions(*_PARTITION_KEY, *_LINE_ORDER)


OBSERVED_WINDOW_COLUMNS = (("cluster", "string"), ("window_start_ms", "bigint"), ("window_end_ms", "bigint"))


def observed_windows(events: DataFrame) -> DataFrame:
    """Per cluster, the first and last event time: the span every duration is measured over.

    Functions that join it take it as ``windows`` when the caller already has it (the job collects it once);
    one row per cluster, so they broadcast it."""
    return events.select("cluster", "ts_ms").groupBy("cluster").agg(
        F.min("ts_ms").alias("window_start_ms"), F.max("ts_ms").alias("window_end_ms"),
    ).select("cluster", "window_start_ms", "window_end_ms")


LIFE_END_COLUMNS = (("cluster", "string"), ("life_from_ms", "bigint"), ("next_life_ms", "bigint"),
                    ("life_end_ms", "bigint"))
"""Per cluster whose epoch was reset, each life but the last (``controller_timeline.life_starts``): from when
(the earliest long for the first), when the next begins, and its end (``job.life_end_rows``)."""


def _within_life(staged: DataFrame, lives: DataFrame | None) -> DataFrame:
    """``staged`` (a partition's rows, ``end_ms`` the next row's time) with ``end_ms`` cut at the end of the
    row's life of the cluster and ``wiped`` set where it was: a state does not outlive the ZooKeeper data that
    held it (two runs of the embedded-store cluster in one log directory; the same partition names reappear in
    the second). ``lives``: `LIFE_END_COLUMNS` rows; None (no reset anywhere) leaves ``end_ms`` as it was."""
    if lives is None:
        return staged.select("*", F.lit(False).alias("wiped"))
    bounds = F.broadcast(lives.select(F.col("cluster").alias("l_cluster"), "life_from_ms", "next_life_ms",
                                      "life_end_ms"))
    joined = staged.join(bounds, on=(F.col("cluster") == F.col("l_cluster")) & (F.col("ts_ms") >= F.col(
        "life_from_ms")) & (F.col("ts_ms") < F.col("next_life_ms")), how="left")
    wiped = F.col("next_life_ms").isNotNull() & (F.col("end_ms").isNull() | (F.col("end_ms") >= F.col(
        "next_life_ms")))
    # a leader's own line (no controller epoch) may come after the life's last controller line: never before it
    life_end = F.greatest(F.col("life_end_ms"), F.col("ts_ms"))
    return joined.select(*(F.when(wiped, life_end).otherwise(F.col("end_ms")).alias("end_ms")
                           if c == "end_ms" else F.col(c) for c in staged.columns), wiped.alias("wiped"))


def partition_state_intervals(events: DataFrame, windows: DataFrame | None = None,
                              lives: DataFrame | None = None, deletions: DataFrame | None = None) -> DataFrame:
    """One row per stay of a partition in a state, from partition-state-machine transitions.
    ``windows``: `observed_windows` of ``events``, when the caller has it; ``lives``: see `_within_life` (a stay
    cut at its life's end ends there, and is not open); ``deletions``: `deletion_starts` of the events, when
    ``events`` lacks the ``topic_deletion`` rows (the job's `partition_rows`).

    A Kafka-format stay ends at the next deletion start of its topic (``deletion_starts``) if that comes first:
    Kafka logs the partitions' moves to ``OfflinePartition`` and ``NonExistentPartition`` at TRACE only, so at
    INFO a deleted partition read ``OnlinePartition`` to the end of the log. Our event log records those moves,
    and its stays end at them."""
    changes = events.select(
        *_PARTITION_KEY, *_LINE_ORDER, "ts", "kind", "to_state", "controller_id", "controller_epoch", "leader",
        "source_format",
    ).where((F.col("kind") == "partition_state_change") & F.col("partition").isNotNull())
    deleted = deletion_starts(events) if deletions is None else deletions
    ts = F.col("ts_ms")
    w = _ordered(*_PARTITION_KEY)
    next_deletion = F.when(F.col("source_format") == "kafka_log",
                           F.array_min(F.filter("deleted_ms", lambda d: d >= ts)))
    ended = with_deletion_starts(changes, deleted).select(
        *changes.columns, F.least(F.lead("ts_ms").over(w), next_deletion).alias("end_ms"))
    staged = _within_life(ended, lives).join(
        F.broadcast(observed_windows(events) if windows is None else windows), on="cluster", how="left",
    )
    end = F.coalesce("end_ms", "window_end_ms")
    return staged.select(
        *_PARTITION_KEY,
        F.col("to_state").alias("state"),
        F.col("ts").alias("start_at"),
        F.timestamp_millis("end_ms").alias("end_at"),
        (end - F.col("ts_ms")).alias("duration_ms"),
        F.col("end_ms").isNull().alias("open"),
        "controller_id", "controller_epoch", "leader", "source_file", "line_number",
    )


DELETION_STARTS_COLUMNS = (("cluster", "string"), ("topic", "string"), ("deleted_ms", "array<bigint>"))
BROADCAST_DELETED_TOPICS = 100_000
"""Most deleted topics whose ``deletion_starts`` rows (a name and a few times each, some 50-100 bytes) are sent
to every task by `with_deletion_starts`; more, and the driver and every executor would hold tens of MB (as
``merge.BROADCAST_CHANGED_PARTITIONS`` bounds the ISR check's keys)."""


def deletion_starts(events: DataFrame) -> DataFrame:
    """Per (cluster, topic) that a deletion started for, when each did (``deleted_ms``, ascending): the JSONL
    ``topic_deletion`` record of phase ``started``, or Kafka's ``Deletion of topic t (re)started``. Kafka logs the
    partitions' moves to ``NonExistentPartition`` that follow it at TRACE only, so in its logs this line is what
    says they are gone. One row per deleted topic: `partition_leadership` and `partition_state_intervals`
    broadcast it (`with_deletion_starts`, up to ``BROADCAST_DELETED_TOPICS`` rows)."""
    return events.where((F.col("kind") == "topic_deletion") & (F.col("phase") == "started")).select(
        "cluster", F.explode(F.split(F.coalesce("topics", "topic"), ",")).alias("topic"), "ts_ms",
    ).groupBy("cluster", "topic").agg(F.array_sort(F.collect_set("ts_ms")).alias("deleted_ms")).select(
        "cluster", "topic", "deleted_ms")


def with_deletion_starts(rows: DataFrame, deletions: DataFrame) -> DataFrame:
    """``rows`` with ``deleted_ms`` of their (cluster, topic) from ``deletions`` (`deletion_starts`; null: never
    deleted). Up to ``BROADCAST_DELETED_TOPICS`` deleted topics (one Spark action counts them) the deletions are
    broadcast, a join on part of the rows' partitioning key that keeps their partitioning and order (no
    shuffle); more, a shuffled join (the windows after it shuffle the rows again): the same rows either way."""
    small = deletions.count() <= BROADCAST_DELETED_TOPICS
    return rows.join(F.broadcast(deletions) if small else deletions, on=["cluster", "topic"], how="left").select(
        *rows.columns, "deleted_ms")


_NOT_A_LINE = -2
"""``partition_leadership``'s mark for a row that ends the line before it and starts none (deleted, or created
with no leader yet)."""


def partition_leadership(events: DataFrame, windows: DataFrame | None = None,
                         lives: DataFrame | None = None, deletions: DataFrame | None = None) -> DataFrame:
    """Who led each partition when, from controller-side records (-1: no leader; deleted ends the line).
    ``windows``: `observed_windows` of ``events``, when the caller has it; ``lives``: see `_within_life` (a
    stretch cut at its life's end is not open, and ``wiped``); ``deletions``: `deletion_starts` of the events,
    when ``events`` lacks the ``topic_deletion`` rows (the job's `partition_rows`).

    A partition is gone from its topic's deletion start (or its move to ``NonExistentPartition``) until it is
    created again (``NewPartition``, ``OnlinePartition``, an election of a leader): its line ends at the deletion
    start, and the ``isr_change`` rows in between start none. Kafka's deletion moves every replica to
    ``OfflineReplica`` after the partition is gone, and that step writes leader -1 to ZooKeeper and logs it: read
    as a leader, it was a partition leaderless until the end of the log."""
    leader = (
        F.when((F.col("kind") == "partition_state_change") & (F.col("to_state") == OFFLINE), F.lit(NO_LEADER))
        .when((F.col("kind") == "partition_state_change") & (F.col("to_state") == GONE), F.lit(_NOT_A_LINE))
        # created with no leader named: a line of none (it was left out, and a created mark must stay in)
        .when((F.col("kind") == "partition_state_change") & (F.col("to_state") == NEW),
              F.coalesce(F.col("leader"), F.lit(_NOT_A_LINE)))
        .otherwise(F.col("leader"))
    )
    created = ((F.col("kind") == "partition_state_change") & F.col("to_state").isin(NEW, ONLINE)) | (
        (F.col("kind") == "leader_election") & (F.col("leader") >= 0))
    gone = (F.col("kind") == "partition_state_change") & (F.col("to_state") == GONE)
    rows = events.select(*_PARTITION_KEY, *_LINE_ORDER, "kind", "controller_id", "controller_epoch",
                         leader.alias("leader"), created.alias("created"), gone.alias("gone")).where(
        F.col("kind").isin(*CONTROLLER_KINDS) & F.col("leader").isNotNull() & F.col("partition").isNotNull()
        & ~((F.col("kind") == "leader_election") & (F.col("leader") < 0))
    )
    deleted = deletion_starts(events) if deletions is None else deletions
    ts = F.col("ts_ms")
    w = _ordered(*_PARTITION_KEY)
    so_far = w.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    marked = with_deletion_starts(rows, deleted).select(
        *rows.columns, "deleted_ms",
        F.greatest(F.max(F.when(F.col("gone"), ts)).over(so_far),
                   F.array_max(F.filter("deleted_ms", lambda d: d <= ts))).alias("gone_ms"),
        F.max(F.when(F.col("created"), ts)).over(so_far).alias("created_ms"))
    # a deletion start and the creation before it may share a millisecond (different files): gone wins
    still_gone = ~F.col("created") & ~F.col("gone") & F.col("gone_ms").isNotNull() & (
        F.col("created_ms").isNull() | (F.col("gone_ms") >= F.col("created_ms")))
    next_deletion = F.array_min(F.filter("deleted_ms", lambda d: d >= ts))
    lines = marked.where(~still_gone).select(
        *_PARTITION_KEY, *_LINE_ORDER, "kind", "controller_id", "controller_epoch", "leader",
        F.least(F.lead("ts_ms").over(w), next_deletion).alias("end_ms"))
    staged = _within_life(lines, lives).join(
        F.broadcast(observed_windows(events) if windows is None else windows), on="cluster", how="left",
    )
    return staged.where(F.col("leader") != _NOT_A_LINE).select(
        *_PARTITION_KEY, "leader",
        F.col("ts_ms").alias("start_ms"),
        F.coalesce("end_ms", "window_end_ms").alias("end_ms"),
        F.col("end_ms").isNull().alias("open"), "wiped", "controller_id", "controller_epoch", "source_file",
        "line_number",
    )


def partition_unavailability(events: DataFrame, intervals: DataFrame | None = None,
                             leadership: DataFrame | None = None, windows: DataFrame | None = None) -> DataFrame:
    """Offline and leaderless partition-seconds per partition, plus one total row per topic (partition null).

    ``intervals`` and ``leadership`` are `partition_state_intervals` and `partition_leadership` of ``events``
    when the caller already has them (the job persists both: each is a window over every partition); so is
    ``windows`` (`observed_windows`)."""
    windows = observed_windows(events) if windows is None else windows
    intervals = partition_state_intervals(events, windows) if intervals is None else intervals
    leadership = partition_leadership(events, windows) if leadership is None else leadership
    offline = intervals.select(
        *_PARTITION_KEY, F.when(F.col("state") == OFFLINE, F.col("duration_ms")).alias("offline_ms"),
        F.lit(None).cast("bigint").alias("leaderless_ms"),
    )
    leaderless = leadership.select(
        *_PARTITION_KEY, F.lit(None).cast("bigint").alias("offline_ms"),
        F.when(F.col("leader") == NO_LEADER, F.col("end_ms") - F.col("start_ms")).alias("leaderless_ms"),
    )
    known = events.select(*_PARTITION_KEY, F.lit(None).cast("bigint").alias("offline_ms"),
                          F.lit(None).cast("bigint").alias("leaderless_ms")).where(
        F.col("partition").isNotNull() & F.col("topic").isNotNull())
    per_partition = offline.unionByName(leaderless).unionByName(known).groupBy(*_PARTITION_KEY).agg(
        F.coalesce(F.sum("offline_ms"), F.lit(0)).alias("offline_ms"),
        F.coalesce(F.sum("leaderless_ms"), F.lit(0)).alias("leaderless_ms"),
    )
    per_topic = per_partition.groupBy("cluster", "topic").agg(
        F.sum("offline_ms").alias("offline_ms"), F.sum("leaderless_ms").alias("leaderless_ms"),
    ).select("cluster", "topic", F.lit(None).cast("int").alias("partition"), "offline_ms", "leaderless_ms")
    return per_partition.unionByName(per_topic).join(F.broadcast(windows), on="cluster", how="left").select(
        *_PARTITION_KEY,
        (F.col("offline_ms") / 1000.0).alias("offline_seconds"),
        (F.col("leaderless_ms") / 1000.0).alias("leaderless_seconds"),
        F.timestamp_millis("window_start_ms").alias("window_start_at"),
        F.timestamp_millis("window_end_ms").alias("window_end_at"),
        ((F.col("window_end_ms") - F.col("window_start_ms")) / 1000.0).alias("window_seconds"),
    )


SHUTDOWN_REQUEST_COLUMNS = (("cluster", "string"), ("request_ms", "bigint"), ("next_request_ms", "bigint"),
                            ("shutting_down", "int"), ("request_epoch", "int"))
"""The controller's ControlledShutdown requests ("Shutting down broker n") that ``leader_elections`` reads: when, the
cluster's next request (a bound: the controller handles one event at a time), the broker and the controller epoch
(``job.shutdown_request_rows``)."""
SHUTDOWN_MOVE_MS = 30_000
"""An OnlinePartition -> OnlinePartition change at most this long after a ControlledShutdown request (and before
the cluster's next one) can be that request's leader move: Kafka elects them while handling the request (a ZooKeeper
write per batch of partitions), one request at a time."""


ISR_STRATEGIES = ("preferred", "reassignment", "controlled_shutdown")
"""Election strategies that pick the new leader from the ISR alone (Kafka's ``PartitionLeaderElectionAlgorithms``):
their elections are clean whatever ISR the logs showed last."""
ISR_EVIDENCE_KINDS = ("isr_expand", "isr_update")
"""A leader's own ISR lines that `_election_evidence` reads besides the controller's: 2.7+'s ``ISR updated to …``
(the ISR the controller confirmed) and ``Expanding ISR from … to …``. Not ``Shrinking ISR``: it is logged before
its write, which a stale leader's fails (≤2.6's "Cached zkVersion … skip updating ISR", 2.7+'s refused AlterIsr),
and read as the ISR it would call a clean election of a replica still in the ISR unclean."""


EVENT_START_KINDS = ("election_started", "broker_change", "broker_failed", "broker_registered", "controlled_shutdown",
                     "controller_elected", "controller_ready", "controller_resigned", "controller_event",
                     "topic_deletion", "partition_reassignment")
"""Lines of a controller event other than a replica leader election (Kafka: the first INFO lines of a membership
change, a ControlledShutdown request, a topic deletion or reassignment step; our event log: the record each event
ends with) or of a new tenure: Kafka logs no line per event, so these are what end the lines of the election started
before them."""
ELECTION_LINES_MS = 30_000
"""An election's state changes at most this long after its "Starting replica leader election" line (and before the
next ``EVENT_START_KINDS`` line) can be that election's: the controller elects them while handling that one event
(a ZooKeeper write per batch of partitions)."""


def election_starts(events: DataFrame) -> DataFrame:
    """Kafka 2.4+'s "Starting replica leader election (TYPE) for partitions … triggered by T" lines, each with the
    span its elections' lines can fall in: until the cluster's next ``EVENT_START_KINDS`` line, at most
    ``ELECTION_LINES_MS``. Few rows (one per admin, ZooKeeper or auto-rebalance election): `_election_evidence`
    broadcasts them."""
    marks = events.select("cluster", *_LINE_ORDER, "kind", "controller_id", "strategy", "trigger").where(
        F.col("kind").isin(*EVENT_START_KINDS))
    nxt = F.lead("ts_ms").over(Window.partitionBy("cluster").orderBy(*_LINE_ORDER))
    return marks.select("*", nxt.alias("next_ms")).where(
        (F.col("kind") == "election_started") & F.col("trigger").isNotNull() & F.col("ts_ms").isNotNull()).select(
        "cluster", F.col("ts_ms").alias("start_ms"),
        F.least(F.coalesce("next_ms", F.col("ts_ms") + ELECTION_LINES_MS), F.col("ts_ms") + ELECTION_LINES_MS)
        .alias("until_ms"), F.col("controller_id").alias("start_controller"),
        F.col("strategy").alias("start_strategy"), F.col("trigger").alias("start_trigger"))


def _election_evidence(events: DataFrame, shutdowns: DataFrame | None = None,
                       started: DataFrame | None = None) -> DataFrame:
    """Rows that show a leader being chosen, with the ISR and leader known just before each.

    Kafka 1.1+ logs a controlled shutdown's election only as "Changed partition p from OnlinePartition to
    OnlinePartition with state LeaderAndIsr(…)", as it does a preferred or reassignment election. With the
    controller's requests (``shutdowns``, ``SHUTDOWN_REQUEST_COLUMNS``), such a change without a strategy, within
    ``SHUTDOWN_MOVE_MS`` after the cluster's latest request of broker b (its epoch, where both name one) and before
    the next, is b's ControlledShutdownPartitionLeaderElectionStrategy (``doControlledShutdown`` elects only the
    partitions b leads, and drops every shutting-down broker from the ISR): when the new leader is not b, b is not
    in the new ISR, and the partition's last known leader, if any, is b. Its old leader is then b. A broadcast
    join: the rows keep their partitioning.

    ``trigger``, where no line states it: Kafka names who asked for an election only on the line that starts it
    ("Starting replica leader election (UNCLEAN) for partitions t-2 triggered by AdminClientTriggered"), a line
    of no one partition. ``started`` (`election_starts`; None: of ``events``) carries it to the elections after it
    within its span, by the same controller, of its kind (a preferred or controlled-shutdown one elects Online
    partitions only).

    ``clean``, where no line states it: only the offline strategy can elect outside the ISR (spec: the preferred,
    reassignment and controlled-shutdown strategies pick from the ISR), so an election of another known strategy
    is clean, and so is an OnlinePartition -> OnlinePartition change, except one whose new ISR is the new leader
    alone and whose new leader is not in the last ISR seen: Kafka 2.8's admin unclean election of an Online
    partition whose leader is not live (``processReplicaLeaderElection``; the offline strategy with unclean
    allowed, which sets the ISR to the new leader alone). Otherwise the new leader must be in the last ISR seen:
    the controller's lines, or the leader's ``ISR_EVIDENCE_KINDS`` lines (Kafka 2.7+ logs a leader's ISR
    expansion only there, the controller not at INFO: without them a replica back in the ISR read as out of it)."""
    rows = events.select(
        *_PARTITION_KEY, *_LINE_ORDER, "ts", "kind", "from_state", "to_state", "leader", "old_leader", "isr",
        "leader_epoch", "strategy", "trigger", "clean", "controller_id", "controller_epoch",
    ).where(F.col("kind").isin(*CONTROLLER_KINDS, *ISR_EVIDENCE_KINDS) & F.col("partition").isNotNull())
    before = _ordered(*_PARTITION_KEY).rowsBetween(Window.unboundedPreceding, -1)
    isr_source = F.col("kind").isin("partition_state_change", "isr_change", *ISR_EVIDENCE_KINDS)
    staged = rows.select(
        "*",
        F.last(F.when(isr_source, F.col("isr")), ignorenulls=True).over(before).alias("prev_isr"),
        F.last(F.when(F.col("leader") >= 0, F.col("leader")), ignorenulls=True).over(before).alias("prev_leader"),
    )
    elected_by_change = (
        (F.col("kind") == "partition_state_change") & (F.col("to_state") == ONLINE)
        & F.col("from_state").isin(OFFLINE, ONLINE)
    )
    derived_clean = F.when(F.size(F.coalesce("prev_isr", F.array())) > 0,
                           F.array_contains(F.col("prev_isr"), F.col("leader")))
    elected = staged.where(((F.col("kind") == "leader_election") | elected_by_change) & (F.col("leader") >= 0))
    old_leader = F.coalesce(F.when(F.col("old_leader") >= 0, F.col("old_leader")), "prev_leader")
    strategy = F.coalesce("strategy", F.when(F.col("from_state") == OFFLINE, F.lit("offline")))
    if shutdowns is not None:
        requests = F.broadcast(shutdowns.select(F.col("cluster").alias("request_cluster"), "request_ms",
                                                "next_request_ms", "shutting_down", "request_epoch"))
        moved = (F.col("kind") == "partition_state_change") & (F.col("from_state") == ONLINE) \
            & (F.col("to_state") == ONLINE) & F.col("strategy").isNull()
        elected = elected.join(requests, on=moved & (F.col("cluster") == F.col("request_cluster"))
                               & F.col("ts_ms").between(F.col("request_ms"), F.col("request_ms") + SHUTDOWN_MOVE_MS)
                               & (F.col("next_request_ms").isNull() | (F.col("ts_ms") < F.col("next_request_ms")))
                               & F.coalesce(F.col("controller_epoch") == F.col("request_epoch"), F.lit(True)),
                               how="left")
        off = F.col("shutting_down")
        by_shutdown = off.isNotNull() & (F.col("leader") != off) \
            & ~F.coalesce(F.array_contains("isr", off), F.lit(False)) & F.coalesce(old_leader == off, F.lit(True))
        old_leader = F.when(by_shutdown, F.coalesce(old_leader, off)).otherwise(old_leader)
        strategy = F.when(by_shutdown, F.lit("controlled_shutdown")).otherwise(strategy)
    # Kafka 2.8's admin UNCLEAN election of an Online partition whose leader is not live (a broker in controlled
    # shutdown that could hand its leadership to no ISR member) runs the offline strategy from OnlinePartition:
    # where no live replica is in the ISR it takes any live replica, with an ISR of that one alone. So an
    # Online -> Online change is clean unless both say otherwise: the new ISR is the new leader alone, and the
    # last ISR seen lacks it (a controlled shutdown's or preferred election's new ISR holds a replica of the ISR
    # before it, which the evidence shows unless its rejoin was not logged)
    unclean_from_online = (F.size(F.coalesce("isr", F.array())) == 1) & F.array_contains("isr", F.col("leader")) \
        & ~F.coalesce(derived_clean, F.lit(True))
    started = F.broadcast((election_starts(events) if started is None else started).withColumnRenamed(
        "cluster", "start_cluster"))
    from_offline = F.coalesce(F.col("from_state") == OFFLINE, F.col("strategy") == "offline", F.lit(False))
    # an unclean one elects Offline partitions, and 2.8 Online ones whose leader is not live (see below)
    of_its_kind = F.when(F.col("start_strategy").isin("preferred", "controlled_shutdown"), ~from_offline).otherwise(
        F.lit(True))
    elected = elected.join(started, on=(F.col("cluster") == F.col("start_cluster"))
                           & (F.col("ts_ms") >= F.col("start_ms")) & (F.col("ts_ms") < F.col("until_ms"))
                           & F.coalesce(F.col("controller_id") == F.col("start_controller"), F.lit(True))
                           & of_its_kind, how="left")
    from_isr = strategy.isin(*ISR_STRATEGIES) | ((F.col("kind") == "partition_state_change")
                                                 & (F.col("from_state") == ONLINE) & ~unclean_from_online)
    return elected.select(
        *_PARTITION_KEY, *_LINE_ORDER, "ts", "leader", "leader_epoch", "controller_id", "controller_epoch",
        old_leader.alias("old_leader"), strategy.alias("strategy"),
        F.coalesce("trigger", "start_trigger").alias("trigger"),
        F.coalesce("clean", F.when(from_isr, F.lit(True)), derived_clean).alias("clean"),
        F.when(F.col("old_leader") >= 0, F.col("old_leader")).alias("stated_old_leader"),
    )


def leader_elections(events: DataFrame, merge_gap_seconds: int = 2, shutdowns: DataFrame | None = None,
                     started: DataFrame | None = None) -> DataFrame:
    """One row per leader election: all evidence lines for one partition and new leader within the gap merge.
    ``shutdowns``: the controller's ControlledShutdown requests, to tell 1.1+'s controlled-shutdown elections;
    ``started``: `election_starts`, when ``events`` lacks its lines (the job's `partition_rows`) (both:
    ``_election_evidence``).

    Kafka logs one election in up to three lines (selector, "Elected leader", state change) depending on
    version; they are folded into one election per session: lines of one (partition, new leader) at most
    ``merge_gap_seconds`` apart and of one controller epoch (a line naming none joins), much as
    ``session_window`` groups (a line exactly one gap after the
    previous still belongs; a null time belongs to none). Numbered with window functions rather than by
    ``session_window``: the rows are already hash-partitioned by partition for the evidence, so this costs a
    sort, not a second shuffle and merge pass (half the time at 1M lines).
    """
    key = [*_PARTITION_KEY, "leader"]
    by_time = Window.partitionBy(*key).orderBy("ts")
    micros = F.unix_micros("ts")
    # Another controller epoch than the last line that named one starts another election too: two controllers
    # electing the same leader within the gap (a failover, then a stop moments later) were merged into one
    # election of the later epoch at the earlier one's time. A line naming no epoch joins its neighbours.
    last_epoch = F.last("controller_epoch", ignorenulls=True).over(by_time.rowsBetween(Window.unboundedPreceding, -1))
    other_epoch = F.coalesce(F.col("controller_epoch") != last_epoch, F.lit(False))
    gap = micros - F.lag(micros).over(by_time) > merge_gap_seconds * 1_000_000
    starts = F.coalesce((gap | other_epoch).cast("int"), F.lit(1))
    evidence = _election_evidence(events, shutdowns, started)
    numbered = evidence.where(F.col("ts").isNotNull()).select("*", starts.alias("starts")).select(
        "*", F.sum("starts").over(by_time.rowsBetween(Window.unboundedPreceding, 0)).alias("session"))
    merged = numbered.groupBy(*key, "session").agg(
        F.min("ts").alias("elected_at"),
        F.max("controller_id").alias("controller_id"),
        F.max("controller_epoch").alias("controller_epoch"),
        F.max("strategy").alias("strategy"),
        F.max("trigger").alias("trigger"),
        # a line stating the old leader (our event log's leader_election) over one whose old leader is derived
        # (the last leader logged before it): inside a split brain that may be the stale controller's view
        F.coalesce(F.min_by("stated_old_leader", F.when(F.col("stated_old_leader").isNotNull(),
                                                         F.struct(*_LINE_ORDER))),
                   F.min_by("old_leader", F.struct(*_LINE_ORDER))).alias("old_leader"),
        F.max("leader_epoch").alias("leader_epoch"),
        F.bool_and("clean").alias("clean"),
        F.min_by(F.struct("source_file", "line_number"), F.struct(*_LINE_ORDER)).alias("first_line"),
    )
    return merged.select(
        *_PARTITION_KEY, "elected_at", "controller_id", "controller_epoch", "strategy", "trigger",
        "old_leader", F.col("leader").alias("new_leader"), "leader_epoch", "clean",
        F.col("first_line.source_file").alias("source_file"), F.col("first_line.line_number").alias("line_number"),
    )


MAX_TENURE_BUCKETS = 100_000
"""About the most (interval, bucket) rows ``with_active_tenure`` broadcasts (see ``tenure_bucket_ms``)."""


def tenure_bucket_ms(starts_ms: dict[str, list[int]]) -> int:
    """The bucket for ``with_active_tenure`` given each cluster's tenure starts: one second, unless the spans
    from first to last start would then explode into more than ``MAX_TENURE_BUCKETS`` rows."""
    span = sum(max(at) - min(at) for at in starts_ms.values() if at)
    return max(1_000, -(-span // MAX_TENURE_BUCKETS))


def with_active_tenure(elections: DataFrame, tenures: DataFrame, bucket_ms: int | None = None) -> DataFrame:
    """Elections whose lines do not say who ran them get the controller and epoch of the tenure active at that
    instant: the latest tenure of the cluster that had started by then, latest by (start, epoch).

    Tenures are few: each distinct start becomes an interval [start, next start) holding the tenure that wins
    from then on, and every election is matched to the one interval it falls in (a broadcast range join, rather
    than joining each election with every earlier tenure and aggregating). An election with a null in its key
    (cluster, topic, partition, elected_at, leader, source_file, line_number) gets no tenure, as before.

    With ``bucket_ms`` (``tenure_bucket_ms``), the join is on (cluster, time bucket) too: each interval is listed
    under every bucket it overlaps, and an election after its cluster's last start looks in that start's bucket,
    so an election is range-tested against the few intervals of its bucket, not every interval of its cluster
    (87 for each of 188k elections at 1M lines: about a CPU-second). Without it, on cluster alone.
    """
    t = tenures.select(
        F.col("cluster").alias("t_cluster"), F.col("controller_id").alias("t_id"),
        F.col("controller_epoch").alias("t_epoch"), F.col("start_at").alias("t_start"),
    ).where(F.col("t_cluster").isNotNull() & F.col("t_start").isNotNull())
    starts = t.groupBy("t_cluster", "t_start").agg(
        F.max_by(F.struct("t_id", "t_epoch"), F.struct("t_epoch")).alias("active"))
    intervals = F.broadcast(starts.select(
        "t_cluster", "t_start", "active",
        F.lead("t_start").over(Window.partitionBy("t_cluster").orderBy("t_start")).alias("t_until")))
    key = [*_PARTITION_KEY, "elected_at", "new_leader", "source_file", "line_number"]
    has_key = reduce(lambda a, b: a & b, [F.col(c).isNotNull() for c in key])
    in_interval = ((F.col("cluster") == F.col("t_cluster")) & (F.col("t_start") <= F.col("elected_at"))
                   & (F.col("t_until").isNull() | (F.col("elected_at") < F.col("t_until"))))
    if bucket_ms is not None:
        def bucket(at: Column) -> Column:
            return F.floor(F.unix_millis(at) / bucket_ms)

        listed = starts.select(
            "t_cluster", "t_start", "active",
            F.lead("t_start").over(Window.partitionBy("t_cluster").orderBy("t_start")).alias("t_until"))
        # an open interval (the last) under its start's bucket only: later elections look there (``last`` below)
        intervals = F.broadcast(listed.select("*", F.explode(F.sequence(bucket(F.col("t_start")), bucket(
            F.coalesce("t_until", "t_start")))).alias("t_bucket")))
        lasts = F.broadcast(starts.groupBy(F.col("t_cluster").alias("l_cluster")).agg(
            F.max("t_start").alias("l_start")))
        elections = elections.join(lasts, on=F.col("cluster") == F.col("l_cluster"), how="left").select(
            *elections.columns, F.least(bucket(F.col("elected_at")), bucket(F.col("l_start"))).alias("e_bucket"))
        in_interval = in_interval & (F.col("e_bucket") == F.col("t_bucket"))
    return elections.join(intervals, on=in_interval, how="left").select(
        *_PARTITION_KEY, "elected_at",
        F.coalesce("controller_id", F.when(has_key, F.col("active.t_id"))).alias("controller_id"),
        F.coalesce("controller_epoch", F.when(has_key, F.col("active.t_epoch"))).alias("controller_epoch"),
        "strategy", "trigger", "old_leader", "new_leader", "leader_epoch", "clean",
        "source_file", "line_number",
    )
