"""Transform, continued: the operations an operator starts or a cluster does to itself — topic deletions,
partition reassignments, ISR shrinks and expansions, controlled shutdowns — one row each, from our JSONL
records and from Kafka's own log lines alike (`kafka_log_parser` maps both to the same kinds and columns).

Same rules as ``transform.py``: pure ``DataFrame -> DataFrame``, explicit first and last ``select``, ``how=`` on
every join, built-ins only. Operations are segmented per key by a running count of the rows that begin (or, for
deletions, end) one, so a topic deleted, re-created and deleted again gives two rows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from zkcontroller.analytics.controller_timeline import (
    NO_LAST_MS,
    NO_NEXT_MS,
    REGISTRATION_SKEW_MS,
    SHUTDOWN_END,
    SHUTDOWN_END_SKEW_MS,
    SHUTDOWN_GAP_MS,
    SHUTDOWN_START,
    SHUTDOWN_START_MS,
    ends_shutdown,
)

SHUTDOWN_TAIL_MS = 5_000
"""Leadership moves this long after the last attempt still count for it (the election ends the handling)."""
ALTER_ISR_CONFIRMED_MS = 1_000
"""A leader's ISR line this soon after the controller's ISR write of the same members confirms its AlterIsr."""


def _where_first() -> Column:
    """(source_file, line_number) of the group's earliest line."""
    return F.min_by(F.struct("source_file", "line_number"), F.struct("ts_ms", "source_file", "line_number"))


def _when_ms(phase: str) -> Column:
    return F.min(F.when(F.col("phase") == phase, F.col("ts_ms")))


def topic_deletions(events: DataFrame) -> DataFrame:
    """One row per deletion of a topic: queued, started, halted (how often, why), completed or refused."""
    rows = events.where(F.col("kind") == "topic_deletion").select(
        "cluster", "ts_ms", "phase", "deletion_reason", "controller_epoch", "source_file", "line_number",
        F.explode(F.split(F.coalesce("topics", "topic"), ",")).alias("topic"))
    key = Window.partitionBy("cluster", "topic").orderBy("ts_ms", "source_file", "line_number")
    ends = F.when(F.col("phase").isin("completed", "refused"), 1).otherwise(0)
    numbered = rows.withColumn("deletion", F.coalesce(F.sum(ends).over(key.rowsBetween(
        Window.unboundedPreceding, -1)), F.lit(0)))
    done = numbered.groupBy("cluster", "topic", "deletion").agg(
        F.min("ts_ms").alias("first_ms"), _when_ms("queued").alias("queued_ms"),
        _when_ms("started").alias("started_ms"), _when_ms("completed").alias("completed_ms"),
        _when_ms("refused").alias("refused_ms"),
        F.sum(F.when(F.col("phase") == "halted", 1).otherwise(0)).cast("bigint").alias("halts"),
        F.array_sort(F.array_distinct(F.collect_list("deletion_reason"))).alias("halt_reasons"),
        F.countDistinct("controller_epoch").cast("bigint").alias("controller_epochs"),
        _where_first().alias("first"))
    begun = F.coalesce("queued_ms", "first_ms")
    return done.select(
        "cluster", "topic", F.timestamp_millis(begun).alias("requested_at"),
        F.timestamp_millis("started_ms").alias("started_at"),
        F.timestamp_millis(F.coalesce("completed_ms", "refused_ms")).alias("finished_at"),
        (F.coalesce("completed_ms", "refused_ms") - begun).alias("duration_ms"),
        F.when(F.col("completed_ms").isNotNull(), "completed").when(F.col("refused_ms").isNotNull(), "refused")
        .otherwise("in_progress").alias("outcome"),
        "halts", "halt_reasons", "controller_epochs",
        F.col("first.source_file").alias("source_file"), F.col("first.line_number").alias("line_number"))


def partition_reassignments(events: DataFrame) -> DataFrame:
    """One row per reassignment of a partition: when it started and ended, its target, how it ended, and the
    phases it went through. A Kafka line that writes RS with adding/removing replicas starts one; one that
    writes RS alone ends it."""
    moving = F.size(F.coalesce("adding_replicas", F.array())) + F.size(F.coalesce("removing_replicas", F.array()))
    phase = F.coalesce(F.col("phase"), F.when(moving > 0, "started").otherwise("completed"))
    rows = events.where(F.col("kind") == "partition_reassignment").select(
        "cluster", "topic", "partition", "ts_ms", phase.alias("phase"), "replicas", "removing_replicas",
        "controller_epoch", "source_file", "line_number")
    key = Window.partitionBy("cluster", "topic", "partition").orderBy("ts_ms", "source_file", "line_number")
    starts = F.when(F.col("phase") == "started", 1).otherwise(0)
    numbered = rows.withColumn("reassignment", F.sum(starts).over(key.rowsBetween(Window.unboundedPreceding, 0)))
    target = F.when(F.col("phase") == "started", F.array_except("replicas", F.coalesce("removing_replicas",
                                                                                       F.array())))
    grouped = numbered.groupBy("cluster", "topic", "partition", "reassignment").agg(
        F.min("ts_ms").alias("first_ms"), _when_ms("started").alias("started_ms"),
        _when_ms("completed").alias("completed_ms"), _when_ms("cancelled").alias("cancelled_ms"),
        _when_ms("failed").alias("failed_ms"),
        F.min_by(target, F.when(target.isNotNull(), F.col("ts_ms"))).alias("target"),
        F.max_by("replicas", F.when(F.col("phase") == "completed", F.col("ts_ms"))).alias("final_replicas"),
        F.array_distinct(F.transform(F.array_sort(F.collect_list(F.struct("ts_ms", "phase"))),
                                     lambda s: s["phase"])).alias("phases"),
        F.countDistinct("controller_epoch").cast("bigint").alias("controller_epochs"),
        _where_first().alias("first"))
    begun = F.coalesce("started_ms", "first_ms")
    ended = F.coalesce("completed_ms", "cancelled_ms", "failed_ms")
    return grouped.select(
        "cluster", "topic", "partition", F.timestamp_millis(begun).alias("started_at"),
        F.timestamp_millis(ended).alias("finished_at"), (ended - begun).alias("duration_ms"),
        F.coalesce("target", "final_replicas").alias("target_replicas"), "final_replicas",
        F.when(F.col("completed_ms").isNotNull(), "completed").when(F.col("cancelled_ms").isNotNull(), "cancelled")
        .when(F.col("failed_ms").isNotNull(), "failed").otherwise("in_progress").alias("outcome"),
        "phases", "controller_epochs",
        F.col("first.source_file").alias("source_file"), F.col("first.line_number").alias("line_number"))


def isr_changes(events: DataFrame) -> DataFrame:
    """Every ISR change with the ISR before it: a leader's shrink or expansion (its own log line) or the
    controller's rewrite (a replica leaving with its broker, an AlterIsr it applied); a controller rewrite
    that keeps the same members (a leader-epoch bump) is not a change. ``replaced``: as many members, others.

    A leader's ``ISR updated to …`` (2.7+, once the controller confirmed its AlterIsr) is a change only when its
    members differ from the ISR stated before it: after a ``Shrinking ISR`` line it confirms that shrink, while
    Kafka 2.8's expansion logs nothing else at INFO. A controller write (our event log's ``isr_change``) that adds
    a member is the leader's too: it applied the leader's AlterIsr, as Kafka's controller adds no replica to an
    ISR (event logs alone have no leader line to confirm it); so is one that keeps the leader epoch of the record
    before it (a controller's removal of a replica bumps it)."""
    with_isr = events.where(F.col("isr").isNotNull() & F.col("kind").isin(
        "isr_change", "isr_shrink", "isr_expand", "isr_update", "partition_state_change", "leader_election")).select(
        "cluster", "topic", "partition", "ts_ms", "kind", "isr", "leader", "leader_epoch", "broker_id",
        "controller_epoch", "source_format", "source_file", "line_number")
    key = Window.partitionBy("cluster", "topic", "partition").orderBy("ts_ms", "source_file", "line_number")
    lagged = with_isr.withColumn("previous_isr", F.lag("isr").over(key)).withColumn(
        "previous", F.lag(F.struct("leader", "leader_epoch", "source_format")).over(key))
    grew = F.size("isr") > F.size(F.coalesce("previous_isr", F.array()))
    shrank = F.size("isr") < F.size(F.coalesce("previous_isr", F.array()))
    change = (F.when(F.col("kind") == "isr_shrink", "shrink").when(F.col("kind") == "isr_expand", "expand")
              .when(shrank, "shrink").when(grew, "expand").otherwise("replaced"))
    same = F.array_sort("isr") == F.array_sort(F.coalesce("previous_isr", F.array()))
    changed = F.col("kind").isin("isr_shrink", "isr_expand") | (F.col("kind").isin("isr_change", "isr_update") & ~same)
    # The controller's write of a leader's AlterIsr: the leader's own line for the same members follows it (2.8
    # logs an expansion only once the controller confirmed it), so the change is the leader's.
    after = F.lead(F.struct("kind", "isr", "broker_id", "ts_ms")).over(key)
    for_leader = ((F.col("kind") == "isr_change") & after["kind"].isin("isr_update", "isr_expand", "isr_shrink")
                  & (after["broker_id"] == F.col("leader")) & (F.array_sort(after["isr"]) == F.array_sort("isr"))
                  & (after["ts_ms"] - F.col("ts_ms") <= ALTER_ISR_CONFIRMED_MS))
    # Our event log's ``isr_change`` is the controller's ZooKeeper write: of a replica it removed, or of the ISR a
    # leader asked for (AlterIsr). Only a leader adds members, so a write that adds one is its leader's; and a
    # removal bumps the leader epoch, an AlterIsr keeps it, so a write under the same leader and leader epoch as
    # the event log's record before it is the leader's too.
    jsonl = (F.col("kind") == "isr_change") & (F.col("source_format") == "jsonl")
    added = jsonl & F.col("previous_isr").isNotNull() & (F.size(F.array_except("isr", "previous_isr")) > 0)
    previous = F.col("previous")
    kept_epoch = (jsonl & (previous["source_format"] == "jsonl") & (previous["leader"] == F.col("leader"))
                  & (previous["leader_epoch"] == F.col("leader_epoch")))
    for_leader = F.coalesce(for_leader, F.lit(False)) | F.coalesce(added, F.lit(False)) | F.coalesce(
        kept_epoch, F.lit(False))
    return lagged.withColumn("for_leader", for_leader).where(changed).select(
        "cluster", F.timestamp_millis("ts_ms").alias("changed_at"), "topic", "partition", change.alias("change"),
        "previous_isr", "isr", F.when(F.col("kind") == "isr_change", F.col("leader")).otherwise(F.col("broker_id"))
        .alias("leader"), F.when((F.col("kind") == "isr_change") & ~F.col("for_leader"), "controller")
        .otherwise("leader").alias("by"),
        "controller_epoch", "source_file", "line_number")


SHUTDOWN_COLUMNS = ("cluster", "ts_ms", "kind", "phase", "broker_id", "brokers", "added_brokers", "controller_epoch",
                    "strategy", "old_leader", "topic", "partition", "source_file", "line_number")
"""The columns of ``events`` that ``controlled_shutdowns`` reads."""


def shutdown_lines(events: DataFrame) -> DataFrame:
    """The rows and columns of ``events`` that ``controlled_shutdowns`` reads: its attempts, registrations, end
    and start lines, and the controlled-shutdown elections (a few hundredths of a busy log).

    Why: ``controlled_shutdowns`` filters ``events`` in four branches, and each branch that reads other columns
    is its own scan; over these rows, persisted, ``events`` is read once (docs/benchmarks.md, issue 16,
    twenty-sixth session)."""
    moves = (F.col("kind") == "leader_election") & (F.col("strategy") == "controlled_shutdown") \
        & F.col("old_leader").isNotNull()
    wanted = F.col("kind").isin("controlled_shutdown", "broker_registered", "broker_change", SHUTDOWN_END,
                                SHUTDOWN_START) | moves
    return events.where(wanted).select(*SHUTDOWN_COLUMNS)


def controlled_shutdowns(events: DataFrame, elections: DataFrame | None = None) -> DataFrame:
    """One row per controlled shutdown of a broker: its attempts (each ControlledShutdown the controller took),
    the partitions whose leadership moved off it with the controlled-shutdown election, and how it ended (the
    broker's own "Controlled shutdown succeeded" / "… unclean shutdown" line, or the controller dropping it from
    its shutting-down list once it left). A broker that registers again, or that the controller dropped, ends a
    shutdown; so does a silence longer than the retries take (``controller_timeline.shutdown_spans`` is the same
    segmentation on the driver, for broker failures and incidents). A broker's succeeded/failed line that no
    shutdown claims (its controller's log was not read) is a row of its own: 0 attempts, requested at the broker's
    "Starting controlled shutdown" that began it (``controller_timeline.started_before``), else at the line.

    A leader move counts for one shutdown only: its window ends at the next shutdown of the broker, at the
    shutdown's end line (``SHUTDOWN_END_SKEW_MS`` later), or ``SHUTDOWN_TAIL_MS`` after its last attempt,
    whichever comes first (a fast stop-start-stop run put the next shutdown's moves in this one's tail).

    The moves are the controlled-shutdown elections of ``events`` (event-log records, 0.10.2-1.0's
    ControlledShutdownLeaderSelector line) and, given ``elections`` (``transform.leader_elections`` with the
    requests), those it derived from 1.1+'s OnlinePartition -> OnlinePartition changes; a partition counts once.

    One filter of ``events`` for attempts, registrations and end lines, one for leader moves; Spark still reads the
    first for each branch that uses it, so the job passes ``shutdown_lines``, persisted, as ``events``."""
    said = (F.col("kind") == SHUTDOWN_END) & (F.col("phase") != "removed")
    ids = (F.when(F.col("kind") == "broker_registered",  # an empty list as none, as `shutdown_spans` reads it
                  F.when(F.size("brokers") > 0, F.col("brokers")).otherwise(F.array(F.col("broker_id"))))
           .when(F.col("kind") == "broker_change", F.col("added_brokers"))
           .when(F.col("kind") == SHUTDOWN_END, F.when(F.col("phase") == "removed", F.col("brokers"))
                 .otherwise(F.array(F.col("broker_id"))))
           .otherwise(F.array(F.col("broker_id"))))
    rows = events.where(F.col("kind").isin("controlled_shutdown", "broker_registered", "broker_change", SHUTDOWN_END)
                        ).select("cluster", F.explode(ids).alias("broker_id"), "ts_ms", "kind", "phase",
                                 "controller_epoch", "source_file", "line_number",
                                 (F.col("kind") == "controlled_shutdown").alias("attempt"), said.alias("said")
                                 ).where(F.col("broker_id").isNotNull())  # "Removed ArrayBuffer()" names none
    key = Window.partitionBy("cluster", "broker_id").orderBy("ts_ms", "source_file", "line_number")
    # The broker's own succeeded/failed lines neither begin nor break a shutdown: its attempts and the lines that
    # end one for sure (registered again, the controller's "Removed …") do.
    previous = F.last(F.when(~F.col("said"), F.struct("ts_ms", "attempt")), ignorenulls=True).over(
        key.rowsBetween(Window.unboundedPreceding, -1))
    new = F.when(F.col("said"), 0).when(previous.isNull() | ~previous["attempt"]
                                        | (F.col("ts_ms") - previous["ts_ms"] > SHUTDOWN_GAP_MS), 1).otherwise(0)
    numbered = rows.withColumn("shutdown", F.sum(new).over(key.rowsBetween(Window.unboundedPreceding, 0)))
    by_start = Window.partitionBy("cluster", "broker_id").orderBy("first_ms", "shutdown")  # ties: as numbered
    shutdowns = numbered.where(F.col("attempt")).groupBy("cluster", "broker_id", "shutdown").agg(
        F.min("ts_ms").alias("first_ms"), F.max("ts_ms").alias("last_ms"),
        F.count(F.lit(1)).alias("attempts"), F.max("controller_epoch").alias("controller_epoch"),
        _where_first().alias("first")).withColumn("next_ms", F.lead("first_ms").over(by_start))
    ended, unclaimed = _shutdown_ends(numbered.where(F.col("kind") == SHUTDOWN_END), shutdowns,
                                      numbered.where(F.col("kind").isin("broker_registered", "broker_change")))
    begun = (F.col("kind") == SHUTDOWN_START) & F.col("broker_id").isNotNull() & F.col("phase").isNull()  # no step
    unclaimed = _started(unclaimed, events.where(begun),
                         numbered.where(F.col("said") | F.col("kind").isin("broker_registered", "broker_change")))
    shutdowns = shutdowns.join(ended, on=["cluster", "broker_id", "shutdown"], how="left")
    moves = events.where((F.col("kind") == "leader_election") & (F.col("strategy") == "controlled_shutdown")
                         & F.col("old_leader").isNotNull()).select(
        "cluster", F.col("old_leader").alias("broker_id"), F.col("ts_ms").alias("at_ms"),
        F.col("ts_ms").alias("moved_ms"), "topic", "partition", F.lit(True).alias("is_move"))
    if elections is not None:
        moved_ms = F.unix_millis("elected_at")
        moves = moves.unionByName(elections.where(
            (F.col("strategy") == "controlled_shutdown") & F.col("old_leader").isNotNull()).select(
            "cluster", F.col("old_leader").alias("broker_id"), moved_ms.alias("at_ms"), moved_ms.alias("moved_ms"),
            "topic", "partition", F.lit(True).alias("is_move")))
    # A move is the latest shutdown's begun by then (``_latest_span``, no join of every move with every shutdown
    # of its broker), if it came before that one's tail ended; an earlier shutdown's window closed at this one.
    until = F.least(F.col("last_ms") + SHUTDOWN_TAIL_MS, F.col("ended_ms") + SHUTDOWN_END_SKEW_MS)
    spans = shutdowns.select("cluster", "broker_id", F.col("first_ms").alias("at_ms"), F.struct(
        "shutdown", "first_ms", until.alias("until_ms"), "next_ms").alias("span"))
    found = spans.unionByName(moves, allowMissingColumns=True).withColumn("c", _latest_span("at_ms", F.col("span")))
    during = (F.col("moved_ms").between(F.col("c.first_ms"), F.col("c.until_ms"))
              & (F.col("c.next_ms").isNull() | (F.col("moved_ms") < F.col("c.next_ms"))))
    counts = found.where(F.col("is_move") & during).groupBy(
        "cluster", "broker_id", F.col("c.shutdown").alias("shutdown")).agg(
        F.countDistinct("topic", "partition").cast("bigint").alias("leaders_moved"),
        F.max("moved_ms").alias("last_move_ms"))
    counted = shutdowns.join(counts, on=["cluster", "broker_id", "shutdown"], how="left").withColumn(
        "leaders_moved", F.coalesce("leaders_moved", F.lit(0).cast("bigint"))).unionByName(
        unclaimed.withColumn("leaders_moved", F.lit(0).cast("bigint")).withColumn(
            "last_move_ms", F.lit(None).cast("bigint")), allowMissingColumns=True)
    asked = F.col("attempts") > 0
    return counted.select(
        "cluster", "broker_id", F.timestamp_millis("first_ms").alias("requested_at"),
        F.when(asked, F.timestamp_millis("last_ms")).alias("last_attempt_at"), "attempts", "leaders_moved",
        F.when(asked, F.greatest("last_ms", F.coalesce("last_move_ms", "last_ms")) - F.col("first_ms"))
        .alias("duration_ms"),
        "outcome", F.timestamp_millis("ended_ms").alias("ended_at"),
        "controller_epoch", F.col("first.source_file").alias("source_file"),
        F.col("first.line_number").alias("line_number"))


def _latest_span(at: str, span: Column) -> Column:
    """Over one frame of a broker's shutdowns and the lines to match to them, the greatest ``span`` (a struct led
    by the shutdown's number, null on the lines) at or before each row's ``at``: per broker the
    shutdowns' numbers grow with their first attempt, so that is the latest shutdown begun by then. A window per
    (cluster, broker) sorted by time, no join: each line gets its one candidate shutdown in O(n log n)."""
    by_time = Window.partitionBy("cluster", "broker_id").orderBy(at)
    return F.max(span).over(by_time.rangeBetween(Window.unboundedPreceding, 0))


def _shutdown_ends(ends: DataFrame, shutdowns: DataFrame, registrations: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Per shutdown (cluster, broker_id, shutdown): ``ended_ms``, its first end line, and ``outcome``, the
    broker's last word on it (``succeeded``, ``failed`` or ``unclean``; null when its server.log was not read); and,
    in ``shutdowns``' columns, a 0-attempt shutdown for each succeeded/failed/unclean line that no shutdown claims.

    Which shutdown an end line belongs to is ``controller_timeline.ends_shutdown``, the driver's rule too: the
    latest shutdown of its broker requested by then, or the next one, as in ``controller_timeline.shutdown_spans``;
    one window per (cluster, broker) over the shutdowns (at their first attempt), the end lines and the broker's
    registrations (``registrations``, exploded per broker) in time order finds both and the registrations around
    the line, and the rule is tested once per line. A join of every end line with every shutdown of its broker was
    quadratic in a broker's restarts."""
    spans = shutdowns.select("cluster", "broker_id", F.col("first_ms").alias("at_ms"),
                             F.struct("shutdown", "first_ms", "last_ms").alias("span"))
    lines = ends.select("cluster", "broker_id", F.col("ts_ms").alias("at_ms"), F.col("ts_ms").alias("end_ms"),
                        F.col("phase").alias("e_phase"), F.struct("source_file", "line_number").alias("e_first"),
                        F.lit(True).alias("is_end"))
    registered = registrations.select("cluster", "broker_id", F.col("ts_ms").alias("at_ms"),
                                      F.col("ts_ms").alias("registered_ms"))
    by_time = Window.partitionBy("cluster", "broker_id").orderBy("at_ms")
    before = by_time.rangeBetween(Window.unboundedPreceding, 0)
    after = by_time.rangeBetween(0, Window.unboundedFollowing)
    candidate = spans.unionByName(lines, allowMissingColumns=True).unionByName(
        registered, allowMissingColumns=True).select(
        "*", _latest_span("at_ms", F.col("span")).alias("c"),  # the latest shutdown requested by then
        F.min("span").over(by_time.rangeBetween(1, Window.unboundedFollowing)).alias("n"),  # the next one
        F.max("registered_ms").over(before).alias("r_before"), F.min("registered_ms").over(after).alias("r_after"))
    earlier, later = ends_shutdown(
        F.col("end_ms"), F.coalesce(F.col("c.last_ms"), F.lit(NO_LAST_MS)), F.coalesce("r_before", F.lit(NO_LAST_MS)),
        F.coalesce(F.col("n.first_ms"), F.lit(NO_NEXT_MS)), F.coalesce("r_after", F.lit(NO_NEXT_MS)))
    matched = candidate.where(F.col("is_end")).withColumn(
        "shutdown", F.when(earlier, F.col("c.shutdown")).when(later, F.col("n.shutdown")))
    said = F.when(F.col("e_phase") != "removed", F.struct("end_ms", "e_phase"))
    ended = matched.where(F.col("shutdown").isNotNull()).groupBy("cluster", "broker_id", "shutdown").agg(
        F.min("end_ms").alias("ended_ms"), F.max(said).getField("e_phase").alias("outcome"))
    unclaimed = matched.where(F.col("shutdown").isNull() & (F.col("e_phase") != "removed")).select(
        "cluster", "broker_id", F.lit(None).cast("bigint").alias("shutdown"), F.col("end_ms").alias("first_ms"),
        F.col("end_ms").alias("last_ms"), F.lit(0).cast("bigint").alias("attempts"),
        F.lit(None).cast("int").alias("controller_epoch"), F.col("e_first").alias("first"),
        F.lit(None).cast("bigint").alias("next_ms"), F.col("e_phase").alias("outcome"),
        F.col("end_ms").alias("ended_ms"))
    return ended, unclaimed


def _started(unclaimed: DataFrame, starts: DataFrame, bounds: DataFrame) -> DataFrame:
    """``unclaimed`` (0-attempt shutdowns) requested at the broker's "Starting controlled shutdown" that began each,
    where there is one (``first_ms`` and ``first`` from it): its latest at or before the end line, at most
    ``SHUTDOWN_START_MS`` before it, and after the latest of ``bounds`` (the broker's succeeded/failed lines and
    registrations, exploded per broker) before the line, as ``controller_timeline.started_before`` on the driver.

    One window per (cluster, broker) over the three kinds of row together, ordered by time: the latest start up to
    the end line and the latest bound before it (a join of every end line with every start of its broker was
    quadratic in a broker's restarts). The latest start is the only candidate: an earlier one is as far outside the
    range or at or before the same bound."""
    cols = unclaimed.columns
    # a registration (the controller's clock) bounds the end lines after it, as if logged REGISTRATION_SKEW_MS
    # later, as ``started_before`` reads it
    bound_at = F.when(F.col("said"), F.col("ts_ms")).otherwise(F.col("ts_ms") + REGISTRATION_SKEW_MS)
    rows = unclaimed.withColumn("ts_ms", F.col("ended_ms")).unionByName(
        starts.select("cluster", "broker_id", "ts_ms", F.struct(F.col("ts_ms").alias("ms"), "source_file",
                                                               "line_number").alias("start")),
        allowMissingColumns=True).unionByName(
        bounds.select("cluster", "broker_id", "ts_ms", bound_at.alias("bound_ms")),
        allowMissingColumns=True)
    by_time = Window.partitionBy("cluster", "broker_id").orderBy("ts_ms")
    latest = F.max("start").over(by_time.rangeBetween(Window.unboundedPreceding, 0))
    bound = F.max("bound_ms").over(by_time.rangeBetween(Window.unboundedPreceding, -1))
    start = F.when((F.col("latest.ms") >= F.col("ended_ms") - SHUTDOWN_START_MS)
                   & (F.col("bound").isNull() | (F.col("latest.ms") > F.col("bound"))), F.col("latest"))
    ends = rows.withColumn("latest", latest).withColumn("bound", bound).where(F.col("outcome").isNotNull())
    taken = ends.withColumn("start", start)
    return taken.select(*(
        F.coalesce(F.col("start.ms"), F.col("first_ms")).alias("first_ms") if c == "first_ms"
        else F.when(F.col("start").isNotNull(), F.struct(F.col("start.source_file").alias("source_file"),
                                                          F.col("start.line_number").alias("line_number")))
        .otherwise(F.col("first")).alias("first") if c == "first" else F.col(c) for c in cols))
