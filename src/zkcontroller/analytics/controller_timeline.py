"""Controller tenures and what happened between them: failovers, restarts, epoch resets, split-brain candidates,
election storms, controller deaths as broker failures, and warnings that one "cluster" mixes several.

Kafka's controller is elected through the ephemeral ``/controller`` znode and fenced by ``/controller_epoch``;
every tenure is one (controller id, epoch). The rows fed in here are small (lifecycle lines, and one activity
summary per tenure that Spark aggregates), so this runs on the driver as plain Python and is unit-tested
without Spark.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import accumulate, pairwise
from typing import Any

Row = dict[str, Any]
"""A line collected from Spark (``Row.asDict()``) or a row built on the driver: columns of several types (ints,
strings, lists of ints, nulls) read by name, as docs/analytics.md's schemas give them; the code narrows each by
``int``/``str`` where it reads it."""

DEFAULT_RESTART_GAP_MS = 60_000
"""No controller for longer than this is a restart, not a failover: Kafka's default session timeout (18 s since
2.5, 6 s before) plus a generous margin for the new controller to load its state."""
DEFAULT_STORM_ELECTIONS = 20
"""Controller elections within one minute that make an election storm (a failover takes one)."""
STORM_WINDOW_MS = 60_000
DEFAULT_FAILURE_MERGE_MS = 1_000
"""Failure lines of one broker this close together, with no sign of it coming back in between, are one failure
(Kafka logs the membership diff, then the failure callback; the event log records it again)."""
CLEAN_SHUTDOWN_MS = 30_000
"""A broker that left (deleted from ``/brokers/ids``, failure callback, or the controller's broker losing the
controller) this soon after the controller took a ControlledShutdown of it stopped cleanly: Kafka's broker
deregisters right after its controlled shutdown (which leaves it nothing to lead), so that is no failure."""
SHUTDOWN_END = "controlled_shutdown_end"
"""How a controlled shutdown ended (``phase``): the broker's ``succeeded``/``failed``, the controller's ``removed``."""
SHUTDOWN_START = "controlled_shutdown_started"
"""The broker's own "Starting controlled shutdown" (its server.log): when a shutdown whose controller log was not
read began (``shutdown_spans``). Where the controller's requests were read they say when, on the controller's
clock, and how many; the broker's failed-attempt lines (``controlled_shutdown_attempt_failed``) are not counted as
attempts: up to 3.0 it logs "Retrying …" after every failed attempt, 3.1+ not after the last, and the reason lines
only when a controller answered or the request failed on the wire."""
SHUTDOWN_END_SKEW_MS = 1_000
"""Slack for the broker's own outcome line against the controller's lines (two hosts' clocks)."""
SHUTDOWN_GAP_MS = 15_000
"""ControlledShutdown attempts of one broker closer than this are one shutdown: Kafka retries 3 times,
``controlled.shutdown.retry.backoff.ms`` (5 s) apart; a broker restarted and stopped again is seconds apart
at the very least."""
SHUTDOWN_END_MS = 120_000
"""An end line later than this after a shutdown's last attempt is no longer that shutdown's: the broker's last
word can come that late (``controlled.shutdown.max.retries`` 3, each up to the 30 s request timeout plus 5 s
backoff); later still, it is of a shutdown whose request the logs do not show."""
SHUTDOWN_START_MS = 300_000
"""A broker's "Starting controlled shutdown" at most this long before its succeeded/failed line can be that
shutdown's start (``started_before``). Not ``SHUTDOWN_END_MS``, which counts from the last attempt: from the start,
Kafka 1.0+ makes ``controlled.shutdown.max.retries`` (3) attempts, each up to ``controller.socket.timeout.ms``
(30 s) to connect plus ``request.timeout.ms`` (30 s) for the answer, then ``controlled.shutdown.retry.backoff.ms``
(5 s): 195 s with the defaults, and a margin for larger settings. A start line before the broker's previous
succeeded/failed line or its latest registration is never taken, however close."""
REGISTRATION_SKEW_MS = SHUTDOWN_END_SKEW_MS
"""A registration (the controller's line, its clock) bounds the broker's start lines (its own clock) as if logged
this much later: a start line up to this far after it on the broker's clock may still be of the life before (a
broker clock ahead), and is not taken (``started_before``). Which end lines it bounds is decided at its own time: an
end line after the registration never takes a start line from before it. A broker that registered, then began a
controlled shutdown within a second, loses its start line (requested at the end line instead): the safe side, since
taking a crashed life's start excuses the crash."""
NO_NEXT_MS = 1 << 62
"""``next_ms`` of a broker's last shutdown (none follows)."""
NO_LAST_MS = -NO_NEXT_MS
"""``ends_shutdown``'s time of a shutdown or registration before an end line, where there is none."""
SAID = ("succeeded", "failed", "unclean")
"""The broker's own words on how its controlled shutdown ended (``phase`` of a ``controlled_shutdown_end``)."""
YEAR_MS = 365 * 24 * 3600 * 1000
SAME_ELECTION_MS = 1_000
"""An election (or ready) line of the same controller and epoch this close to an earlier one, in another file, is
the same election logged twice (our event log and the Kafka-format log of one run), not a new life."""
NO_CONTROLLER_EPOCH = 0
"""Kafka's initial /controller_epoch: the first elected controller has epoch 1, so 0 marks a broker that is not
controller (our event log writes it on events a non-controller broker processes); it is never a tenure. Epochs are
compared as numbers, a negative one (Kafka's Int wrapped past Int.MaxValue) too: the election after a wrap looks
like an epoch reset, a new life of the cluster."""
BELOW_EPOCHS = -(2**31) - 1
"""Below every controller epoch (an int32, negative once wrapped): the highest epoch of a life before its first line."""
CANDIDATE_COLUMNS = (("cluster", "string"), ("start_ms", "bigint"), ("end_ms", "bigint"),
                     ("stale_controller_id", "int"), ("stale_epoch", "int"), ("new_controller_id", "int"),
                     ("new_epoch", "int"))


@dataclass
class Tenure:
    """One controller tenure; times are ms since the epoch (None when no line shows them)."""

    cluster: str
    controller_id: int
    controller_epoch: int
    life: int = 0
    """Which life of the cluster (``life_starts``) it belongs to: 0 before the first epoch reset."""
    elected_ms: int | None = None
    ready_ms: int | None = None
    resigned_ms: int | None = None
    first_seen_ms: int | None = None
    last_seen_ms: int | None = None
    events: int = 0
    source_file: str | None = None
    line_number: int | None = None
    started_by: str = "first"
    gap_ms: int | None = None
    failover_gap_ms: int | None = None
    previous_controller_id: int | None = None
    previous_epoch: int | None = None
    resigned_source_file: str | None = None
    """The resignation's own line (``source_file``/``line_number`` cite the election, else the first line)."""
    resigned_line_number: int | None = None

    @property
    def start_ms(self) -> int:
        return min(x for x in (self.elected_ms, self.ready_ms, self.first_seen_ms) if x is not None)

    @property
    def end_ms(self) -> int:
        if self.resigned_ms is not None:
            return self.resigned_ms
        return max(x for x in (self.last_seen_ms, self.ready_ms, self.elected_ms) if x is not None)

    def row(self) -> Row:
        return {**asdict(self), "start_ms": self.start_ms, "end_ms": self.end_ms,
                "tenure_ms": self.end_ms - self.start_ms}


@dataclass
class Timeline:
    """Everything derived from the tenures of all clusters."""

    tenures: list[Tenure] = field(default_factory=list)
    epoch_resets: list[Row] = field(default_factory=list)
    restarts: list[Row] = field(default_factory=list)
    storms: list[Row] = field(default_factory=list)
    split_brain_candidates: list[Row] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _where(row: Row) -> str:
    return f"{row.get('source_file')}:{row.get('line_number')}"


LIFECYCLE_STARTS = ("controller_elected", "controller_ready")
"""Lifecycle lines that begin a tenure: one with an epoch no higher than the cluster's is a new life by itself."""
NEVER_STATED = ("leader_and_isr_ignored",)
"""Kinds of line naming a controller and epoch that ``life_starts`` never reads: a broker refusing a stale
controller's request says nothing of a new life."""
STATED = "epoch_stated"
"""The kind ``life_starts`` gives every other line stating a controller epoch (``stated_epoch_runs``)."""


def life_starts(lifecycle: list[Row], stated: Sequence[Row] = (),
                same_election_ms: int = SAME_ELECTION_MS) -> dict[str, list[int]]:
    """Per cluster, the instants (ascending) at which a new life of the cluster begins: a controller elected, or
    ready, with an epoch no higher than one already seen in the cluster; or, from any other line stating a
    controller epoch (``stated``: runs of lines of one controller and epoch, ``stated_epoch_runs``), an epoch
    below the highest seen (or that epoch under another controller) after which the controller that held the
    highest is not heard of again, and which shows the new life goes on (``_new_life_goes_on``, or the controller
    that held the highest itself gone back to a lower epoch): a lower epoch alone is a stale controller's.

    ZooKeeper's ``/controller_epoch`` only grows, so such a line means its data was wiped: two runs of the
    embedded-store cluster into one log directory, say, both begin at epoch 1. The same (controller, epoch) can
    then hold a tenure in each life; keyed by (controller, epoch) alone, the two were one tenure, whose second
    life's activity looked like a stale controller acting after its successor (a split brain). Not a new life:
    the ready line of a tenure whose election line came first (or the other way round), the same line again
    from another file within ``same_election_ms``, a lower epoch's line within ``same_election_ms`` of the
    highest epoch's (two hosts' clocks a little apart: a restart takes longer than that), a lower epoch's
    other line while the controller of the highest still acts after it, and one with nothing newer after it (a
    stale controller's requests, acting seconds after its quiet successor: a split brain, not a reset); brokers'
    refusals (``NEVER_STATED``) are not read at all. A broker-side ``state-change.log`` alone
    ("received LeaderAndIsr request ... from controller C epoch E", "Cached leader info ... epoch E") so shows
    its resets too.
    """
    by_cluster: dict[str, list[Row]] = defaultdict(list)
    for r in lifecycle:
        epoch = r.get("controller_epoch")
        if epoch is None or int(epoch) == NO_CONTROLLER_EPOCH:
            continue
        if r["kind"] in LIFECYCLE_STARTS:
            by_cluster[str(r["cluster"])].append(r)
        elif r["kind"] == "controller_resigned":  # states its epoch like any other line (our event log's)
            by_cluster[str(r["cluster"])].append({**r, "kind": STATED})
    for r in stated:
        if r.get("controller_epoch") is not None and int(r["controller_epoch"]) != NO_CONTROLLER_EPOCH:
            by_cluster[str(r["cluster"])].append({**r, "kind": STATED})
    starts: dict[str, list[int]] = {}
    for cluster, rows in by_cluster.items():
        rows.sort(key=lambda r: (int(r["ts_ms"]), str(r["source_file"]), int(r["line_number"] or 0)))
        found = _life_starts(rows, same_election_ms)
        if found:
            starts[cluster] = found
    return starts


def _life_starts(rows: list[Row], same_election_ms: int) -> list[int]:
    """``life_starts`` of one cluster's rows, in time order."""
    found: list[int] = []
    highest, highest_first, highest_last, highest_key = BELOW_EPOCHS, 0, 0, (0, BELOW_EPOCHS)
    seen: dict[tuple[int, int], dict[object, tuple[int, str]]] = {}  # this life's (id, epoch) -> kind -> line
    for i, r in enumerate(rows):
        key, kind = (int(r["controller_id"]), int(r["controller_epoch"])), r["kind"]
        ts, where = int(r["ts_ms"]), str(r["source_file"])
        last = int(r.get("last_ms") or ts)
        lines = seen.get(key, {})
        if kind == STATED:
            reset = (key[1] <= highest and key != highest_key and ts - highest_last > same_election_ms
                     and not _old_life_goes_on(rows, i, highest_key, ts + same_election_ms)
                     and (key[1] == highest or key[0] == highest_key[0]
                          or _new_life_goes_on(rows, i, highest_key, seen, same_election_ms)))
        else:
            companion = bool(lines) and kind not in lines
            again = kind in lines and lines[kind][1] != where and ts - lines[kind][0] <= same_election_ms
            skewed = ts - highest_first <= same_election_ms  # another host's clock a little ahead: one life
            reset = key[1] <= highest and not (companion or again or skewed)
        if reset:
            found.append(ts)
            highest, seen, lines = BELOW_EPOCHS, {}, {}
        if key[1] > highest:
            highest, highest_first, highest_last, highest_key = key[1], ts, last, key
        elif key == highest_key:
            highest_last = max(highest_last, last)
        if kind != STATED:
            seen.setdefault(key, lines).setdefault(kind, (ts, where))
    return found


def _old_life_goes_on(rows: list[Row], i: int, highest: tuple[int, int], after_ms: int) -> bool:
    """Whether the rows after ``rows[i]`` (a lower epoch than ``highest``, the life's highest controller and
    epoch) continue that life rather than a new one: ``highest`` states itself later than ``after_ms``, or an
    epoch above it comes before any between the two (a new life, begun at ``rows[i]``'s epoch, climbs through
    those first)."""
    low = int(rows[i]["controller_epoch"])
    for r in rows[i + 1:]:
        key = (int(r["controller_id"]), int(r["controller_epoch"]))
        if key == highest:
            if int(r.get("last_ms") or r["ts_ms"]) > after_ms:
                return True
        elif key[1] > highest[1]:
            return True
        elif key[1] > low:
            return False
    return False


def _new_life_goes_on(rows: list[Row], i: int, highest: tuple[int, int],
                      seen: dict[tuple[int, int], dict[object, tuple[int, str]]], same_election_ms: int) -> bool:
    """Whether a new life begun at ``rows[i]`` (a stated epoch below ``highest``, the life's highest controller
    and epoch) shows it goes on, so that the line is not a stale controller's: before any lower epoch, the old
    highest again or anything above it, a later stated epoch above the low one (the new life climbing: its next
    failover), or an election or ready line at or below the old highest that is no companion of a line this life
    already has (``seen``) and no repeat of one from another file within ``same_election_ms``. A zombie
    controller acting a few seconds after its successor's last line, with nothing newer after it, shows neither:
    it is left to split-brain detection."""
    low = int(rows[i]["controller_epoch"])
    for r in rows[i + 1:]:
        key, kind = (int(r["controller_id"]), int(r["controller_epoch"])), r["kind"]
        if key == highest or key[1] > highest[1] or key[1] < low:
            return False
        if kind == STATED:
            if key[1] > low:
                return True
            continue
        lines = seen.get(key, {})
        companion = bool(lines) and kind not in lines
        again = (kind in lines and lines[kind][1] != str(r["source_file"])
                 and int(r["ts_ms"]) - lines[kind][0] <= same_election_ms)
        if not (companion or again):
            return True
    return False


def stated_epoch_runs(rows: list[Row]) -> list[Row]:
    """Consecutive rows (in time order, per cluster) of one controller and epoch as one: cluster, controller_id,
    controller_epoch, ts_ms (the first), last_ms, source_file and line_number (the first's). The reference of
    what the job aggregates in Spark (``job._stated_runs``). Rows of a ``NEVER_STATED`` kind are left out."""
    runs: list[Row] = []
    rows = [r for r in rows if r.get("kind") not in NEVER_STATED]
    for r in sorted(rows, key=lambda r: (str(r["cluster"]), int(r["ts_ms"]), int(r["controller_epoch"]),
                                         int(r["controller_id"]))):
        prev = runs[-1] if runs else None
        if prev is not None and (prev["cluster"], prev["controller_id"], prev["controller_epoch"]) == (
                r["cluster"], r["controller_id"], r["controller_epoch"]):
            prev["last_ms"] = max(int(prev["last_ms"]), int(r["ts_ms"]))
            continue
        runs.append({"cluster": r["cluster"], "controller_id": r["controller_id"],
                     "controller_epoch": r["controller_epoch"], "ts_ms": r["ts_ms"], "last_ms": r["ts_ms"],
                     "source_file": r.get("source_file"), "line_number": r.get("line_number")})
    return runs


def life_of(starts: dict[str, list[int]], cluster: object, ts_ms: int) -> int:
    """The life (``life_starts``) of ``cluster`` an instant belongs to."""
    return bisect_right(starts.get(str(cluster), []), ts_ms)


def build_tenures(lifecycle: list[Row], activity: list[Row],
                  starts: dict[str, list[int]] | None = None, membership: Sequence[Row] = ()) -> list[Tenure]:
    """Tenures from lifecycle lines (elected/ready/resigned) and per-(life, controller, epoch) activity summaries.

    A tenure is one (controller, epoch) within one life of its cluster (``starts``, from ``life_starts``; an
    activity summary without ``life`` is of life 0). A line without an epoch (old versions' election line,
    every version's "Resigned") belongs to the epoch
    that controller held at that time: the latest one it was elected with, else (an election line) the first it
    acted with after, or (a resignation) the last it acted with before; a resignation of a broker that held none
    is not a tenure's end.

    Nor is one logged by a broker that no longer held that tenure (``_came_back``): Kafka logs "Resigned" at every
    broker's shutdown, so a controller SIGKILLed, restarted and stopped again logs one long after a later epoch
    took over. ``membership`` (the job's membership rows) shows the broker came back in between: its process
    starting again (``broker_starting``, its own clock) after it took the tenure, or, once a later epoch of the
    cluster began, the controller seeing it register (``broker_registered``, a ``broker_change`` adding it) more
    than ``REGISTRATION_SKEW_MS`` before the line. A controller that lost its ZooKeeper session and resigns when
    it notices (after its successor's election, before it registers again) still ends its tenure there.
    """
    starts = starts or {}
    tenures: dict[tuple[str, int, int, int], Tenure] = {}

    def tenure(cluster: str, life: int, cid: int, epoch: int) -> Tenure:
        return tenures.setdefault((cluster, life, cid, epoch), Tenure(cluster, cid, epoch, life))

    acted: dict[tuple[str, int, int], list[tuple[int, int]]] = defaultdict(list)
    for a in activity:
        t = tenure(str(a["cluster"]), int(a.get("life") or 0), int(a["controller_id"]), int(a["controller_epoch"]))
        t.first_seen_ms, t.last_seen_ms, t.events = int(a["first_ms"]), int(a["last_ms"]), int(a["events"])
        t.source_file, t.line_number = a["source_file"], a["line_number"]
        acted[(t.cluster, t.life, t.controller_id)].append((t.first_seen_ms, t.controller_epoch))
    for v in acted.values():
        v.sort()
    current: dict[tuple[str, int, int], tuple[int, int]] = {}  # the epoch each controller holds, and since when
    elections: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)  # (ts, epoch) of each start line
    back = _back_signs(membership)
    order = sorted(lifecycle, key=lambda r: (r["ts_ms"], str(r["source_file"]), r["line_number"]))
    for r in order:
        life = life_of(starts, r["cluster"], int(r["ts_ms"]))
        key = (str(r["cluster"]), life, int(r["controller_id"]))
        epoch = r.get("controller_epoch")
        if epoch is None and r["kind"] == "controller_resigned":
            # the epoch it held then, or (its election line not in the logs) the latest it had acted with: never a
            # later one. Kafka logs "Resigned" from every broker at shutdown, controller or not; a broker that held
            # no tenure yet resigns nothing (a later tenure of its own would end before it began), and neither
            # does one that came back since it took its tenure (a new process, or registered again after a later
            # epoch began: ``_came_back``).
            held = current.get(key)
            if held is None:
                earlier = [(e, first) for first, e in acted.get(key, []) if first <= int(r["ts_ms"])]
                held = earlier[-1] if earlier else None
            if held is None or _came_back(back, elections[key[:2]], key, held, int(r["ts_ms"])):
                continue
            epoch = held[0]
        if epoch is None:
            later = [e for first, e in acted.get(key, []) if first >= int(r["ts_ms"]) - 1000]
            epoch = later[0] if later else current.get(key, (None,))[0]
        if epoch is None or int(epoch) == NO_CONTROLLER_EPOCH:
            continue
        t = tenure(key[0], life, key[2], int(epoch))
        ts = int(r["ts_ms"])
        if r["kind"] in LIFECYCLE_STARTS:
            if r["kind"] == "controller_elected":
                t.elected_ms = ts if t.elected_ms is None else min(t.elected_ms, ts)
            else:
                t.ready_ms = ts if t.ready_ms is None else min(t.ready_ms, ts)
            if current.get(key, (None,))[0] != t.controller_epoch:
                current[key] = (t.controller_epoch, ts)
            elections[key[:2]].append((ts, t.controller_epoch))
        elif t.resigned_ms is None:
            t.resigned_ms = ts
            t.resigned_source_file, t.resigned_line_number = r["source_file"], r["line_number"]
        if t.source_file is None or r["kind"] == "controller_elected":
            t.source_file, t.line_number = r["source_file"], r["line_number"]
    return sorted(tenures.values(),
                  key=lambda t: (t.cluster, t.life, t.start_ms, t.controller_epoch, t.controller_id))


BackSigns = tuple[dict[tuple[str, int], list[int]], dict[tuple[str, int], list[int]]]
"""Per (cluster, broker), ascending: when its process started (``broker_starting``), and when the controller saw
it register (``broker_registered``, added by a ``broker_change``)."""


def _back_signs(membership: Sequence[Row]) -> BackSigns:
    """``build_tenures``' signs that a broker came back (``BackSigns``) from the membership rows."""
    started: dict[tuple[str, int], list[int]] = defaultdict(list)
    registered: dict[tuple[str, int], list[int]] = defaultdict(list)
    for r in membership:
        if r["kind"] == "broker_starting" and r.get("broker_id") is not None:
            started[(str(r["cluster"]), int(r["broker_id"]))].append(int(r["ts_ms"]))
            continue
        ids = r.get("brokers") if r["kind"] == "broker_registered" else \
            r.get("added_brokers") if r["kind"] == "broker_change" else None
        for broker in ids or []:
            registered[(str(r["cluster"]), int(broker))].append(int(r["ts_ms"]))
    for times in (*started.values(), *registered.values()):
        times.sort()
    return started, registered


def _came_back(back: BackSigns, elections: list[tuple[int, int]], key: tuple[str, int, int],
               held: tuple[int, int], resigned_ms: int) -> bool:
    """Whether the broker of ``key`` (cluster, life, id), holding epoch ``held[0]`` since ``held[1]``, came back
    before its "Resigned" at ``resigned_ms``, so that line is not that tenure's end: its process started again
    after it took the tenure, or it registered again more than ``REGISTRATION_SKEW_MS`` before the line (the
    controller's clock) after a later epoch of the cluster began (``elections``: (ts, epoch) of the cluster's
    start lines so far). Without a later epoch a registration proves nothing: Kafka before 1.1 started the
    controller before registering the broker, so its controller saw its own registration mid-tenure."""
    epoch, since = held
    broker = (key[0], key[2])
    started = back[0].get(broker, [])
    if bisect_right(started, resigned_ms) > bisect_right(started, since):
        return True
    later = [ts for ts, e in elections if e > epoch and ts >= since]
    if not later:
        return False
    registered = back[1].get(broker, [])
    return bisect_left(registered, resigned_ms - REGISTRATION_SKEW_MS) > bisect_right(registered, min(later))


def classify(tenures: list[Tenure], restart_gap_ms: int = DEFAULT_RESTART_GAP_MS,
             storm_elections: int = DEFAULT_STORM_ELECTIONS) -> Timeline:
    """How each tenure began (first, failover, restart, epoch_reset), plus resets, storms, split-brain
    candidates and mixed-cluster warnings."""
    out = Timeline(tenures=tenures)
    by_cluster: dict[str, list[Tenure]] = defaultdict(list)
    for t in tenures:
        by_cluster[t.cluster].append(t)
    for cluster, ts in by_cluster.items():
        for prev, t in pairwise(ts):
            t.previous_controller_id, t.previous_epoch = prev.controller_id, prev.controller_epoch
            t.gap_ms = t.start_ms - prev.end_ms
            where = {"cluster": cluster, "at_ms": t.start_ms, "controller_id": t.controller_id,
                     "controller_epoch": t.controller_epoch, "source_file": t.source_file,
                     "line_number": t.line_number}
            if t.life != prev.life or t.controller_epoch < prev.controller_epoch:
                t.started_by = "epoch_reset"
                out.epoch_resets.append({**where, "gap_ms": t.gap_ms,
                                         "detail": f"epoch {t.controller_epoch} after epoch {prev.controller_epoch}"})
                out.warnings.append(
                    f"cluster {cluster}: {_epoch_reset_words(prev.controller_epoch, t.controller_epoch)} at "
                    f"{_where(where)} (a ZooKeeper reset, or logs of different clusters: separate them with "
                    "--cluster-pattern)")
            elif t.gap_ms > restart_gap_ms:
                t.started_by = "restart"
            else:
                t.started_by = "failover"
                t.failover_gap_ms = (t.ready_ms if t.ready_ms is not None else t.start_ms) - prev.end_ms
            if t.started_by != "failover":
                out.restarts.append({**where, "gap_ms": t.gap_ms, "cause": t.started_by,
                                     "previous_controller_id": prev.controller_id,
                                     "previous_epoch": prev.controller_epoch})
            stale_until = max((x for x in (prev.last_seen_ms, prev.resigned_ms) if x is not None), default=None)
            if t.life == prev.life and t.controller_epoch > prev.controller_epoch \
                    and stale_until is not None and stale_until > t.start_ms:
                out.split_brain_candidates.append({
                    # until the stale tenure's last action, even past the newer tenure's end: a zombie
                    # acting after its successor resigned is still a zombie. Its last action may state no
                    # epoch (ZooKeeper refusing its write: "Controller moved …", logged just before it resigns),
                    # so the range runs to its resignation when that is later than its last epoch-stated line.
                    "cluster": cluster, "start_ms": t.start_ms, "end_ms": stale_until,
                    "stale_controller_id": prev.controller_id, "stale_epoch": prev.controller_epoch,
                    "new_controller_id": t.controller_id, "new_epoch": t.controller_epoch})
        for t in ts:
            if t.end_ms - t.start_ms > YEAR_MS:
                out.warnings.append(
                    f"cluster {cluster}: controller {t.controller_id} epoch {t.controller_epoch} spans "
                    f"{(t.end_ms - t.start_ms) / 86_400_000:.0f} days (from {t.source_file}:{t.line_number}): "
                    "are these logs of different clusters? Separate them with --cluster-pattern")
        out.storms += _storms(cluster, ts, storm_elections)
    return out


def _epoch_reset_words(previous: int, epoch: int) -> str:
    """How a new life's controller epoch follows the last one: "goes back from 1 to 1" read as nonsense (two runs of
    `zkcontroller cluster` on the embedded store, each starting at epoch 1)."""
    if epoch < previous:
        return f"controller epoch goes back from {previous} to {epoch}"
    return f"controller epoch starts over at {epoch} (after epoch {previous})"


def _storms(cluster: str, tenures: list[Tenure], threshold: int) -> list[Row]:
    """Windows in which at least ``threshold`` tenures began within a minute, merged where they overlap."""
    starts = sorted(tenures, key=lambda t: t.start_ms)
    storms: list[Row] = []
    lo = 0
    for hi, t in enumerate(starts):
        while t.start_ms - starts[lo].start_ms > STORM_WINDOW_MS:
            lo += 1
        if hi - lo + 1 < threshold:
            continue
        first = starts[lo]
        if storms and int(storms[-1]["end_ms"]) >= first.start_ms:
            storm = storms[-1]
            storm["end_ms"], storm["last_epoch"] = t.start_ms, t.controller_epoch
            storm["elections"] = sum(1 for s in starts if int(storm["start_ms"]) <= s.start_ms <= t.start_ms)
        else:
            storms.append({"cluster": cluster, "start_ms": first.start_ms, "end_ms": t.start_ms,
                           "elections": hi - lo + 1, "first_epoch": first.controller_epoch,
                           "last_epoch": t.controller_epoch, "source_file": first.source_file,
                           "line_number": first.line_number})
    return storms


def ends_shutdown(end_ms: Any, last_ms: Any, registered_ms: Any, next_first_ms: Any,
                  next_registered_ms: Any) -> tuple[Any, Any]:
    """Which of its shutdowns a broker's end line at ``end_ms`` ends: (whether it is the latest one requested by then,
    whether it is the first one requested after it). The latest one's, if it is still open: its last attempt at
    ``last_ms`` at most ``SHUTDOWN_END_MS`` before, and the broker's latest registration up to the line
    (``registered_ms``) not after that attempt (registered again, the broker began a new life). Else the next one's,
    requested at ``next_first_ms`` at most ``SHUTDOWN_END_SKEW_MS`` after the line, with no registration of the
    broker from the line until then (``next_registered_ms``: its first from the line on): the slack is for a broker
    whose clock is behind the controller's (its own outcome line stamped before the request it answers); it never
    takes a line from an earlier shutdown still open, as it once did (a fast stop-start-stop run gave the first
    stop's "succeeded" to the second). None of either: ``NO_LAST_MS``, ``NO_NEXT_MS`` (and for the
    registrations ``NO_LAST_MS``, ``NO_NEXT_MS``). The one rule for which shutdown an end line ends, for ints on the
    driver and Spark columns alike (``admin_tables.controlled_shutdowns``)."""
    earlier = (end_ms <= last_ms + SHUTDOWN_END_MS) & (registered_ms <= last_ms)
    later = (end_ms >= next_first_ms - SHUTDOWN_END_SKEW_MS) & (next_registered_ms >= next_first_ms)
    return earlier, later


def shutdown_spans(membership: list[Row]) -> list[Row]:
    """The driver's ``controlled_shutdowns``, without leader moves: one dict per controlled shutdown of a broker
    (cluster, broker_id, ``first_ms``, ``last_ms``, ``attempts``, ``ended_ms``, ``outcome``, ``succeeded_ms`` (the
    broker's own "succeeded" line claimed, if any), and the first
    attempt's row as ``row``), segmented as the table is: attempts ``SHUTDOWN_GAP_MS`` apart or closer are one,
    and the broker registering again or the controller's "Removed …" line ends one. A broker's "succeeded",
    "failed" or "unclean" line no shutdown claims (``ends_shutdown``) is a shutdown of its own with 0 attempts: its
    request is in a log not read (last at the line; first at the broker's "Starting controlled shutdown" that began
    it, else at the line; ``row`` the first's line). That start is the broker's latest at most ``SHUTDOWN_START_MS``
    before the line and after both its previous succeeded/failed line and its latest registration
    (``started_before``).

    O(n log n) in the lines: an end line can only be of the latest shutdown of its broker requested by then or of
    the next one (``ends_shutdown``), found with the broker's registrations around it by binary search, and the
    rule is tested once per line. A log of thousands of restarts of one broker would otherwise test every end line
    against every shutdown."""
    marks: dict[tuple[object, int], list[tuple[int, str, int, bool, Row]]] = defaultdict(list)
    said: list[Row] = []
    ends: dict[tuple[object, int], list[tuple[int, str | None]]] = defaultdict(list)
    starts: dict[tuple[object, int], list[tuple[int, str, int, Row]]] = defaultdict(list)
    bounds: dict[tuple[object, int], list[tuple[int, int]]] = defaultdict(list)
    """Said lines and registrations (`started_before`): when each was logged, and the time a start must follow."""
    for r in membership:
        kind, where = r["kind"], (int(r["ts_ms"]), str(r["source_file"]), int(r["line_number"]))
        if kind == "controlled_shutdown" and r.get("broker_id") is not None:
            marks[(r["cluster"], int(r["broker_id"]))].append((*where, True, r))
            continue
        if kind == SHUTDOWN_START:
            if r.get("broker_id") is not None and r.get("phase") is None:  # a phase: a later step (3.4+'s KRaft)
                starts[(r["cluster"], int(r["broker_id"]))].append((*where, r))
            continue
        if kind == SHUTDOWN_END and r.get("phase") in SAID and r.get("broker_id") is not None:
            said.append(r)
            ends[(r["cluster"], int(r["broker_id"]))].append((int(r["ts_ms"]), str(r["phase"])))
            continue
        back = (r.get("brokers") or ([r["broker_id"]] if r.get("broker_id") is not None else [])
                if kind == "broker_registered" else r.get("added_brokers") if kind == "broker_change"
                else r.get("brokers") if kind == SHUTDOWN_END and r.get("phase") == "removed" else None)
        for broker in back or []:  # an empty "Removed ArrayBuffer()" names none: it ends nothing
            marks[(r["cluster"], int(broker))].append((*where, False, r))
            if kind == SHUTDOWN_END:
                ends[(r["cluster"], int(broker))].append((int(r["ts_ms"]), None))
            else:  # registered again: a start line before it is of an earlier life's shutdown
                bounds[(r["cluster"], int(broker))].append((int(r["ts_ms"]), int(r["ts_ms"]) + REGISTRATION_SKEW_MS))
    spans: list[Row] = []
    claimed_by: dict[tuple[object, int], set[int]] = defaultdict(set)
    for (cluster, broker), rows in marks.items():
        rows.sort(key=lambda m: m[:3])
        mine: list[Row] = []
        previous: tuple[int, str, int, bool, Row] | None = None
        for m in rows:
            if m[3]:
                if previous is not None and previous[3] and m[0] - previous[0] <= SHUTDOWN_GAP_MS:
                    mine[-1]["last_ms"], mine[-1]["attempts"] = m[0], int(mine[-1]["attempts"]) + 1
                else:
                    mine.append({"cluster": cluster, "broker_id": broker, "first_ms": m[0], "last_ms": m[0],
                                 "attempts": 1, "row": m[4]})
            previous = m
        firsts = [int(span["first_ms"]) for span in mine]  # ascending: rows were sorted by time
        registered = [m[0] for m in rows if not m[3] and m[4]["kind"] != SHUTDOWN_END]  # ascending too
        claimed: list[list[tuple[int, str | None]]] = [[] for _ in mine]
        for e in ends.get((cluster, broker), ()):
            i = bisect_right(firsts, e[0]) - 1  # the latest shutdown requested by then; i + 1 the next
            k, n = bisect_right(registered, e[0]), bisect_left(registered, e[0])
            earlier, later = ends_shutdown(
                e[0], int(mine[i]["last_ms"]) if i >= 0 else NO_LAST_MS, registered[k - 1] if k else NO_LAST_MS,
                firsts[i + 1] if i + 1 < len(firsts) else NO_NEXT_MS,
                registered[n] if n < len(registered) else NO_NEXT_MS)
            if earlier:
                claimed[i].append(e)
            elif later:
                claimed[i + 1].append(e)
        for span, own in zip(mine, claimed, strict=True):
            own.sort(key=lambda e: (e[0], e[1] or ""))  # ties: the greater phase, as Spark's max
            outcomes = [e for e in own if e[1] is not None]
            span["ended_ms"] = own[0][0] if own else None
            span["outcome"] = outcomes[-1][1] if outcomes else None  # the broker's last word
            succeeded = [e[0] for e in outcomes if e[1] == "succeeded"]
            span["succeeded_ms"] = succeeded[-1] if succeeded else None
            claimed_by[(cluster, broker)].update(e[0] for e in outcomes)
        spans += mine
    for r in said:
        bounds[(r["cluster"], int(r["broker_id"]))].append((int(r["ts_ms"]), int(r["ts_ms"])))
    bound_times: dict[tuple[object, int], tuple[list[int], list[int]]] = {}
    for key in {(r["cluster"], int(r["broker_id"])) for r in said}:
        bounds[key].sort()
        bound_times[key] = ([t for t, _ in bounds[key]], list(accumulate((b for _, b in bounds[key]), max)))
        starts[key].sort(key=lambda m: m[:3])
    for r in said:
        key = (r["cluster"], int(r["broker_id"]))
        if int(r["ts_ms"]) not in claimed_by[key]:
            ts = int(r["ts_ms"])
            start = started_before(starts[key], *bound_times[key], ts)
            spans.append({"cluster": r["cluster"], "broker_id": key[1], "first_ms": ts if start is None else start[0],
                          "last_ms": ts, "attempts": 0, "row": r if start is None else start[3], "ended_ms": ts,
                          "outcome": r["phase"], "succeeded_ms": ts if r["phase"] == "succeeded" else None})
    return sorted(spans, key=lambda s: (str(s["cluster"]), s["broker_id"], s["first_ms"]))


def started_before(starts: list[tuple[int, str, int, Row]], bound_logged_ms: list[int], bounds_ms: list[int],
                   end_ms: int) -> tuple[int, str, int, Row] | None:
    """The broker's "Starting controlled shutdown" (``starts``, sorted by time, file, line) that a succeeded/failed
    line of it at ``end_ms`` ends: its latest at or before the line, at most ``SHUTDOWN_START_MS`` before it, and
    after the bounds logged before the line (``bound_logged_ms``, sorted; ``bounds_ms``: the greatest bound up to
    each): the broker's succeeded/failed lines (the previous one
    ended the shutdown before; the broker's clock, as the start lines) and registrations (a start before the broker
    came back is of a life that crashed mid-shutdown, and taking it would excuse that crash). A registration is the
    controller's line, on its clock, so it is given ``REGISTRATION_SKEW_MS`` later: the two hosts' clocks may differ
    by as much (the slack ``SHUTDOWN_END_SKEW_MS`` allows elsewhere); a larger skew is not allowed for. None if
    there is none. The rule ``admin_tables.controlled_shutdowns`` applies in Spark (``_started``)."""
    j = bisect_left(bound_logged_ms, end_ms)
    after = bounds_ms[j - 1] if j else None
    i = bisect_right(starts, end_ms, key=lambda m: m[0]) - 1
    if i < 0 or starts[i][0] < end_ms - SHUTDOWN_START_MS or (after is not None and starts[i][0] <= after):
        return None
    return starts[i]


def _asked_ms(span: Row) -> int:
    """When a shutdown span is known to have been asked for: its first request, or for one known only from the
    broker's own lines (0 attempts) its end line (its start line says only that the broker began one)."""
    return int(span["first_ms"] if span["attempts"] else span["ended_ms"])


def broker_failures(membership: list[Row], tenures: list[Tenure],
                    merge_ms: int = DEFAULT_FAILURE_MERGE_MS,
                    spans: list[Row] | None = None) -> list[Row]:
    """One row per broker failure: failure callbacks, the deleted brokers of membership diffs, event-log
    ``broker_failed`` records, and the old controller of every failover to another broker (its broker died or
    lost its session: Kafka logs no failure callback for the controller itself).

    Lines of one broker within ``merge_ms`` of each other are one failure (the earliest line is cited). A broker
    that leaves within ``CLEAN_SHUTDOWN_MS`` after a ``controlled_shutdown`` of it, or after its own "Controlled
    shutdown succeeded" (``controlled_shutdown_end`` lines in ``membership``), stopped cleanly and is left out
    (``controlled_shutdowns`` lists it, with 0 attempts when only the broker's line says so); one that leaves
    later, its controlled shutdown given up long before, still failed, and so does one whose last shutdown
    before it left ended "Proceeding to do an unclean shutdown" (``shutdown_spans``, the table's own matching of
    end lines): it stopped uncleanly, leaders and all. ``spans``: ``shutdown_spans(membership)`` when the caller
    already has it (the job: the incidents timeline reads the same spans).
    """
    shutdowns: dict[tuple[object, int], list[Row]] = defaultdict(list)
    for span in shutdown_spans(membership) if spans is None else spans:
        shutdowns[(span["cluster"], int(span["broker_id"]))].append(span)
    found: list[Row] = []
    for r in membership:
        if r["kind"] not in ("broker_failed", "broker_change"):
            continue
        for broker in r.get("brokers") or []:
            found.append({"cluster": r["cluster"], "broker_id": int(broker), "detected_ms": int(r["ts_ms"]),
                          "cause": "failure callback" if r["kind"] == "broker_failed" else "deleted from /brokers/ids",
                          "controller_id": r.get("controller_id"), "controller_epoch": r.get("controller_epoch"),
                          "source_file": r["source_file"], "line_number": r["line_number"]})
    by_cluster: dict[str, list[Tenure]] = defaultdict(list)
    for t in tenures:
        by_cluster[t.cluster].append(t)
    for ts in by_cluster.values():
        for prev, t in pairwise(ts):
            if t.started_by == "failover" and t.controller_id != prev.controller_id:
                found.append({"cluster": t.cluster, "broker_id": prev.controller_id, "detected_ms": t.start_ms,
                              "cause": f"controller failover (epoch {prev.controller_epoch} -> {t.controller_epoch})",
                              "controller_id": t.controller_id, "controller_epoch": t.controller_epoch,
                              "source_file": t.source_file, "line_number": t.line_number,
                              "_since_ms": prev.end_ms})
    alive: dict[tuple[object, int], list[int]] = defaultdict(list)  # when each broker was seen back or acting
    for r in membership:
        # a membership diff's live brokers too: a broker whose session expired registers again, often before the
        # next controller reads the broker list, so no diff names it added (the demo's `expire`)
        back = [*(r.get("added_brokers") or []), *(r.get("live_brokers") or [])] if r["kind"] == "broker_change" \
            else (r.get("brokers") if r["kind"] == "broker_registered" else None)
        for broker in back or []:
            alive[(r["cluster"], int(broker))].append(int(r["ts_ms"]))
    for t in tenures:
        alive[(t.cluster, t.controller_id)].append(t.start_ms)
    for times in alive.values():
        times.sort()  # searched below, once per failure: not scanned (a broker's every sighting, per failure)
    found.sort(key=lambda f: (str(f["cluster"]), f["broker_id"], f.get("_since_ms", f["detected_ms"]),
                              str(f["source_file"]), f["line_number"]))
    merged: list[Row] = []
    kept: list[Row] = []
    for f in found:
        detected = int(f["detected_ms"])
        left_ms = int(f["_since_ms"]) if "_since_ms" in f else detected
        key = (f["cluster"], int(f["broker_id"]))
        # the last request, or the broker's own "succeeded", within CLEAN_SHUTDOWN_MS of its leaving; not the
        # controller's "Removed …" line, which it logs as the broker leaves (onBrokerFailure) whatever came before.
        # A shutdown known only from the broker (0 attempts) counts once it ended before the broker left: begun
        # before and ended after, the broker went mid-shutdown (its session lost), a failure.
        asked = [s for s in shutdowns[key] if _asked_ms(s) <= detected
                 and max(int(s["last_ms"]), int(s["succeeded_ms"] or 0)) >= left_ms - CLEAN_SHUTDOWN_MS]
        if asked and max(asked, key=_asked_ms)["outcome"] != "failed":
            continue  # a clean stop: the controlled shutdown, then the deregistration (or the controller moving)
        kept.append(f)
    for f in kept:
        last = merged[-1] if merged else None
        since = int(f.pop("_since_ms", f["detected_ms"]))
        if last is not None and (last["cluster"], last["broker_id"]) == (f["cluster"], f["broker_id"]):
            seen = alive[(f["cluster"], int(f["broker_id"]))]
            after = bisect_right(seen, int(last["detected_ms"]))  # the first sighting after the last failure
            came_back = after < len(seen) and seen[after] <= since
            if since - int(last["detected_ms"]) <= merge_ms and not came_back:
                continue
        merged.append(f)
    return sorted(merged, key=lambda f: (str(f["cluster"]), f["detected_ms"], f["broker_id"]))
