"""Kafka ``controller.log`` / ``state-change.log`` parsing, pure Python: the reference and the baseline.

The line layouts and message templates are data (regexes written in the common subset of Python ``re``
and Java ``java.util.regex``), so the Spark extractor (``extract.py``) compiles the very same patterns into
built-in ``rlike``/``regexp_replace`` expressions and a test checks both parsers agree line by line.
Templates follow ``../shared/kafka-logs/TEMPLATES.md`` (Kafka 0.10.2 to 3.9): the wording and prefix of
most messages changed between versions, so one template usually covers several spellings.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

SEP = "\u0001"  # joins captured groups; never appears in a log line we accept

# Deployment wrappers stripped before the layout is matched: CRI / `docker logs -t` timestamps,
# docker-compose `service | ` prefixes and the DockerizedKafkaTestSupport harness wrapper.
PREFIX = (
    r"^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:(?:stdout|stderr) [FP] )?(?=\[|\d{4}-)"
    r"|[\w.-]+\s*\| (?=\[|\d{4}-)"
    r"|\d\d:\d\d:\d\d,\d{3}\s+[A-Z]+\s+\|\|.*? STDOUT: )"
)
# `[%d] %p %m (%c)%n` (default), `%d{ISO8601} %p %m (%c) [%t]%n` (Strimzi), `(%c:%L)` (unit-test layout).
LAYOUT_HEAD = (
    r"^\[?(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:[,.](\d{3})\d*)?(Z|[+-]\d\d:?\d\d)?\]?\s+"
    r"(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\s+"
)
LAYOUT_LOGGER = r"\(([A-Za-z_$][\w.$-]*)(?::\d+)?\)"
LAYOUT = LAYOUT_HEAD + r"(.*?)\s*" + LAYOUT_LOGGER + r"(?:\s+\[[^\]]*\])?\s*$"
"""Groups: date, clock, millis, zone, level, message, logger. Head and logger are exported for the Spark fast path."""
# A stack trace or the tail of a message with an embedded newline: belongs to the record above it.
CONTINUATION = (
    r"^(?:\s+at |\s*\.\.\. \d+ more|\s*Caused by: |\s*Suppressed: |\s*\([\w.$]+\)\s*$"
    r"|[a-zA-Z_$][\w$]*(?:\.[\w$]+)+(?:Exception|Error|Throwable)\b)"
)
JAVA_EXCEPTION = r"^[a-zA-Z_$][\w$]*(?:\.[\w$]+)+(?:Exception|Error|Throwable)\b"
# Our own Python tracebacks: everything from this line up to the next timestamped record is part of it. An
# exception group's (asyncio.TaskGroup's) starts "  + Exception Group Traceback", its members' "    | Traceback".
PY_TRACEBACK = r"^(?:[ |+]*(?:Exception Group )?Traceback \(most recent call last\):"
PY_TRACEBACK += r"|During handling of the above exception|The above exception was the direct cause)"
MAX_EXCEPTION_CHARS = 300
IDENT = r"^\[([^\]]*)\][:,]? ?"
IDENT_CONTROLLER = r"(?:[Cc]ontroller(?:Id=| id=| |-)|^Topic Deletion Manager )(\d+)"
IDENT_PARTITION = r"^Partition (\S+-\d+) broker=(\d+)$"
# A controller epoch: Kafka's Int, which wraps to -2147483648 after 2147483647 (and counts up from there).
EPOCH = r"(-?\d+)"
IDENT_EPOCH = r"epoch=(-?\d+)"
# A broker's own ident: ReplicaManager/state-change ``[Broker id=N]``, KafkaServer ``[KafkaServer id=N]`` (1.0+)
# and ``[Kafka Server N], `` (0.8.2-0.11: KafkaServer's logIdent until 1.0's log context), and a KRaft-mode
# broker's BrokerServer ``[BrokerServer id=N]`` (2.8+ server.log).
IDENT_BROKER = r"^(?:Broker id=|KafkaServer id=|BrokerServer id=|Kafka Server )(\d+)"
# 0.10.2-0.11 state-change lines have no log ident; the message itself starts with who wrote it.
OLD_STATE_PREFIX = rf"^(?:Controller (\d+) epoch {EPOCH}|Broker (\d+)) "
STATE_CHANGE_LOGGER = "state.change.logger"

TP = r"(\[[^\],\s]+,\d+\]|[^\s\[\]]+-\d+)"
TP_SPLIT = r"^\[?(.+)[,-](\d+)\]?$"
LEADER = r"(?:with leader |leader=|Leader:|\"leader\":|Current leader is )(-?\d+)"
LEADER_EPOCH = r"(?:leaderEpoch=|LeaderEpoch:|\"leader_epoch\":|starts at leader epoch |associated leader epoch )(\d+)"
ISR = r"(?:isr=List\(|isr=\[|isr=|ISR:|\"isr\":\[|ISR \[)([\d, ]*\d|)"
INT_LIST = r"-?\d+"


@dataclass(frozen=True)
class Template:
    """A message shape: ``groups`` maps fields to groups of ``pattern``; ``extra`` to separate regexes."""

    kind: str
    pattern: str
    groups: dict[str, int] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)
    consts: dict[str, object] = field(default_factory=dict)

    @functools.cached_property
    def needle(self) -> str:
        """The longest literal run outside any group: a cheap substring test before the regex runs."""
        return _longest_literal(self.pattern)

    @functools.cached_property
    def starts(self) -> tuple[str, ...]:
        """Literal prefixes one of which every match starts with (empty: none known): a cheap startswith guard."""
        return literal_prefixes(self.pattern) if self.pattern.startswith("^") else ()

    @functools.cached_property
    def loose(self) -> str | None:
        """The pattern with its numeric/list field groups loosened (``loosened``); None when it has none."""
        return loosened(self.pattern, self.groups)

    @functools.cached_property
    def loose_extra(self) -> dict[str, str]:
        """The numeric/list extras, loosened."""
        return {name: rx for name, rx in ((n, loosened(r, {n: 1})) for n, r in self.extra.items()) if rx}


_META = set("()[].^$?*+{}|\\")
_MAX_PREFIXES = 16


def literal_prefixes(pattern: str) -> tuple[str, ...]:
    """Literal strings one of which every match of ``pattern`` starts with; ``()`` when that is not known.

    Understands only what the templates use at their start: literals, escaped punctuation, small character
    classes of literals (``[Cc]``) and groups of alternatives; anything else ends the prefix. Sound by
    construction (a prefix is cut short, never guessed), and tests check it on every sample line.
    """
    prefixes, _, _ = _prefixes_of(pattern.removeprefix("^"), 0, ("",))
    if not prefixes or "" in prefixes or len(prefixes) > _MAX_PREFIXES:
        return ()
    return tuple(sorted(p for p in set(prefixes) if not any(p != q and p.startswith(q) for q in prefixes)))


def fast_search(pattern: str) -> str:
    """``pattern`` with a one-character lookahead when it starts with one of several literals.

    Java's ``find`` tries every alternative at every position; a leading character class is one cheap test
    per position (about 4x faster on log lines). A single leading literal is left alone: Java already skips
    ahead with Boyer-Moore for those. Matches exactly what ``pattern`` matches.
    """
    prefixes = literal_prefixes(pattern)
    if len(prefixes) < 2:
        return pattern
    firsts = sorted({p[0] for p in prefixes})
    return "(?=[" + "".join(c if c.isalnum() else "\\" + c for c in firsts) + "])" + pattern


def _quantified(pattern: str, i: int) -> bool:
    return i < len(pattern) and pattern[i] in "?*+{"


def _alternative_end(pattern: str, i: int) -> int:
    """Index of the ``|`` or ``)`` that ends the alternative ``pattern[i]`` is in (or ``len(pattern)``)."""
    depth = 0
    for token in regex_tokens(pattern, i):
        if token.kind in (ALTERNATION, CLOSE) and depth == 0:
            return token.start
        depth += {OPEN: 1, CLOSE: -1}.get(token.kind, 0)
    return len(pattern)


def _prefixes_of(pattern: str, i: int, heads: tuple[str, ...]) -> tuple[tuple[str, ...], int, bool]:
    """Extend ``heads`` from ``pattern[i:]`` up to the end of the current alternative; returns the prefixes,
    the index reached and whether the alternative was read to its end (False: cut short)."""
    while i < len(pattern) and pattern[i] not in "|)":
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            chars: tuple[str, ...] = (pattern[i + 1],)
            end = i + 2
        elif c == "[":
            end = pattern.find("]", i + 1) + 1
            body = pattern[i + 1:end - 1]
            if end == 0 or not body or any(ch in _META or ch == "-" for ch in body):
                return heads, i, False
            chars = tuple(body)
        elif c == "(":
            start = i + 3 if pattern.startswith("(?:", i) else i + 1
            if pattern.startswith("(?", i) and start == i + 1:
                return heads, i, False  # lookaround or flags
            alternatives: list[str] = []
            j, complete = start, True
            while True:
                found, j, whole = _prefixes_of(pattern, j, heads)
                alternatives += found
                complete = complete and whole
                j = _alternative_end(pattern, j)
                if j >= len(pattern) or pattern[j] == ")":
                    break
                j += 1  # past "|"
            if j >= len(pattern) or len(alternatives) > _MAX_PREFIXES or _quantified(pattern, j + 1):
                return heads, i, False
            if not complete:
                return tuple(alternatives), i, False
            heads, i = tuple(alternatives), j + 1
            continue
        elif c in _META:
            return heads, i, False
        else:
            chars, end = (c,), i + 1
        if _quantified(pattern, end):
            return heads, i, False
        heads = tuple(h + ch for h in heads for ch in chars)
        if len(heads) > _MAX_PREFIXES:
            return heads, i, False
        i = end
    return heads, i, True


def _longest_literal(pattern: str) -> str:
    runs, run, depth, i = [], "", 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if depth == 0 and not nxt.isalnum():
                run += nxt
            else:
                runs.append(run)
                run = ""
            i += 2
            continue
        if c in "?*+{" and depth == 0:
            run = run[:-1]  # the quantified character is optional
        if c == "[":
            i = pattern.index("]", i + 1)
        if c in "()[].^$?*+{}|":
            if c == "|" and depth == 0:
                return ""  # top-level alternation: no literal is required
            depth += {"(": 1, ")": -1}.get(c, 0)
            runs.append(run)
            run = ""
        elif depth == 0:
            run += c
        i += 1
    runs.append(run)
    return max(runs, key=len)


_LIE = {"leader": LEADER, "leader_epoch": LEADER_EPOCH, "isr": ISR}
# Ordered by how often the shapes occur, most frequent first (the Spark CASE chain stops at the first hit).
TEMPLATES: tuple[Template, ...] = (
    Template("partition_state_change", rf"^[Cc]hanged partition {TP} (?:state )?from (\w+) to (\w+)",
             {"tp": 1, "from_state": 2, "to_state": 3}, _LIE),
    Template("replica_state_change", rf"^[Cc]hanged state of replica (\d+) for partition {TP} from (\w+) to (\w+)",
             {"broker_id": 1, "tp": 2, "from_state": 3, "to_state": 4}),
    Template("leader_and_isr_request",
             rf"^[Ss]ending (?:become-leader|become-follower) LeaderAndIsr request .*? to broker (\d+) "
             rf"for partition {TP}", {"broker_id": 1, "tp": 2}, _LIE),
    Template("leader_and_isr_received",
             rf"^[Rr]eceived LeaderAndIsr request .* correlation id \d+ from controller (\d+) epoch {EPOCH}"
             rf"(?: for partition {TP})?", {"controller_id": 1, "controller_epoch": 2, "tp": 3},
             {**_LIE, "topic": r"topicName='([^']*)'", "partition": r"partitionIndex=(\d+)"}),
    Template("leader_and_isr_handled",
             r"^(?:[Hh]andling|[Cc]ompleted) LeaderAndIsr request correlationId \d+ from controller (\d+)"
             rf"(?: epoch {EPOCH})?", {"controller_id": 1, "controller_epoch": 2},
             {"tp": rf"transition for partition {TP}"}),
    # A step of handling a LeaderAndIsr request: 0.10.2-2.5 TRACE per partition, 2.6+ INFO per request.
    Template("fetchers_stopped",
             r"^[Ss]topped fetchers as part of (?:become-leader|become-follower|LeaderAndIsr) request "
             rf"(?:correlationId \d+ )?from controller (\d+) epoch {EPOCH}",
             {"controller_id": 1, "controller_epoch": 2}, {"tp": rf"for partition {TP}"}),
    Template("update_metadata_received",
             r"^(?:[Cc]ached leader info .*|Add \d+ partitions and deleted \d+ partitions from metadata cache"
             r"|Deleted partition \S+ from metadata cache) in response to UpdateMetadata request sent by "
             rf"controller (\d+) epoch {EPOCH}", {"controller_id": 1, "controller_epoch": 2},
             {"tp": rf"for partition {TP} in response"}),
    # LeaderIsrAndControllerEpoch.toString: 2.6-3.0 `(Leader:,ISR:,LeaderEpoch:,ControllerEpoch:)`, 3.1 adds
    # `ZkVersion:` (our controller wrote that form before 2026-11-25), 3.2+ also `LeaderRecoveryState:` after the ISR.
    Template("isr_change",
             rf"^Partition {TP} state changed to \(Leader:(-?\d+),ISR:([\d,]*),(?:LeaderRecoveryState:\w+,)?"
             rf"LeaderEpoch:(\d+),(?:ZkVersion:\d+,)?ControllerEpoch:{EPOCH}\) after removing replica (\d+) "
             r"from the ISR",
             {"tp": 1, "leader": 2, "isr": 3, "leader_epoch": 4, "controller_epoch": 5, "broker_id": 6}),
    Template("isr_change", rf"^New leader and ISR for partition {TP} is ", {"tp": 1}, _LIE),
    Template("leader_election", rf"^[Ee]lected leader (-?\d+) for Offline partition {TP}",
             {"leader": 1, "tp": 2}, consts={"strategy": "offline"}),
    Template("leader_election", rf"^No broker in ISR is alive for {TP}\. Elect leader (-?\d+) from live brokers",
             {"tp": 1, "leader": 2}, consts={"strategy": "offline", "clean": False}),
    Template("leader_election", rf"^Selected new leader and ISR .* for offline partition {TP}",
             {"tp": 1}, _LIE, {"strategy": "offline"}),
    Template("leader_election",
             rf"^Partition {TP} completed preferred replica leader election\. New leader is (-?\d+)",
             {"tp": 1, "leader": 2}, consts={"strategy": "preferred"}),
    # 0.10.2-1.0: only ControlledShutdownLeaderSelector logs it (its ident, "[ControlledShutdownLeaderSelector]: ")
    Template("leader_election", rf"^Partition {TP} : current leader = (-?\d+), new leader = (-?\d+)",
             {"tp": 1, "old_leader": 2, "leader": 3}, consts={"strategy": "controlled_shutdown"}),
    Template("partition_state_change_failed", rf"^failed to change state for partition {TP} from (\w+) to (\w+)",
             {"tp": 1, "from_state": 2, "to_state": 3}),
    Template("partition_state_change_failed",
             rf"^[Ii]nitiated state change for partition {TP} from (\w+) to (\w+) failed",
             {"tp": 1, "from_state": 2, "to_state": 3}),
    Template("leader_and_isr_ignored",
             rf"^Ignoring LeaderAndIsr request from controller (\d+) with correlation id \d+ epoch {EPOCH} "
             rf"for partition {TP}", {"controller_id": 1, "controller_epoch": 2, "tp": 3},
             {"leader_epoch": LEADER_EPOCH}),
    Template("became_leader", rf"^Leader {TP} (?:with topic id \S+ )?starts at leader epoch (\d+)",
             {"tp": 1, "leader_epoch": 2}, {"isr": ISR}),
    Template("became_follower", rf"^Follower {TP} (?:with topic id \S+ )?starts at leader epoch (\d+)",
             {"tp": 1, "leader_epoch": 2}, {"leader": LEADER}),
    Template("election_started",
             r"^Starting replica leader election \((\w+)\) for partitions .* triggered by (\w+?)(?:Client)?Triggered",
             {"strategy": 1, "trigger": 2}),
    Template("election_started", r"^Starting preferred replica leader election for partitions",
             consts={"strategy": "preferred"}),
    Template("controller_elected",
             rf"^(\d+) successfully elected as (?:the controller|leader)(?:\. Epoch incremented to {EPOCH})?",
             {"controller_id": 1, "controller_epoch": 2}),
    Template("controller_elected",
             rf"^(?:Controller (\d+) incremented epoch to|Incremented epoch to|Epoch incremented to) {EPOCH}",
             {"controller_id": 1, "controller_epoch": 2}),
    Template("controller_ready", rf"^(?:Broker (\d+) is r|R)eady to serve as the new controller with epoch {EPOCH}",
             {"controller_id": 1, "controller_epoch": 2}),
    Template("controller_resigned", r"^(?:Broker (\d+) resigned as the controller|Resigned)\s*$",
             {"controller_id": 1}),
    # ZooKeeper refused a controller's write (ControllerMovedException: the /controller_epoch zkVersion check of
    # every controller write failed, another broker is controller now), 2.1-3.9: KafkaController "… when
    # processing {event}.", the state machines "… when moving some partitions|replicas to {state} state" and
    # "… when trying to create the topic partition state znode"; the exception's own texts "…. Aborting
    # controller startup procedure" (a lost election) and "…. Aborting controlled shutdown". Controller id from
    # the ident; no epoch (split_brain_windows counts them as the stale controller's refused attempts).
    Template("controller_moved", r"^Controller moved to another broker\b"),
    Template("broker_failed", r"^Broker failure callback for ([\d, ]*\d)", {"brokers": 1}),
    # 0.10.2-3.9 (2.2 adds "bounced brokers"): the membership diff the controller acts on; ``brokers`` are the
    # deleted ones, so a broker that dies shows here even when no failure callback line follows. ``live_brokers``
    # tells a broker back (its session expired and it registered again) from one still dead.
    Template("broker_change",
             r"^Newly added brokers: ([\d, ]*), deleted brokers: ([\d, ]*),(?: bounced brokers: [\d, ]*,)?"
             r" all live brokers: ([\d, ]*)", {"added_brokers": 1, "brokers": 2, "live_brokers": 3}),
    Template("broker_registered", r"^New broker startup callback for ([\d, ]*\d)", {"brokers": 1}),
    # The broker process starting (KafkaServer.startup: 1.0+ "[KafkaServer id=N] starting", 0.8.2-0.11 "[Kafka Server
    # N], starting"; broker id from the ident): a new process, which holds no tenure of the process before it, so a
    # "Resigned" it logs at its own shutdown ends none of those (``controller_timeline.build_tenures``).
    Template("broker_starting", r"^starting\s*$"),
    Template("controlled_shutdown", r"^Shutting down broker (\d+)\s*$", {"broker_id": 1}),
    # How a controlled shutdown ended. The broker's own server.log (KafkaServer.controlledShutdown, 0.10.2-3.9,
    # broker id from its ident): it succeeded, or every retry failed and the broker stops uncleanly anyway. The
    # controller (KafkaController.onBrokerFailure): the shutting-down brokers that have now left (0.10.2-2.0 print
    # the Scala collection, ``ArrayBuffer()`` even when empty; 2.1+ the ids comma-joined, only when some).
    Template("controlled_shutdown_end", r"^Controlled shutdown succeeded", consts={"phase": "succeeded"}),
    # 3.1+: the broker's success line names the request's latency instead.
    Template("controlled_shutdown_end", r"^Controlled shutdown request returned successfully after \d+ ?ms",
             consts={"phase": "succeeded"}),
    Template("controlled_shutdown_end",
             r"^Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed",
             consts={"phase": "failed"}),
    # Our brokers' own (cluster/controlled_shutdown.py; Kafka has no such line): a teardown gave up before the
    # retries ran out because retrying could not help, and the broker stops uncleanly on purpose.
    Template("controlled_shutdown_end",
             r"^Not retrying controlled shutdown \(.*\); proceeding to do an unclean shutdown\s*$",
             consts={"phase": "unclean"}),
    Template("controlled_shutdown_end",
             r"^Removed (?:[A-Za-z]+\()?([\d, ]*)\)? from list of shutting down brokers",
             {"brokers": 1}, consts={"phase": "removed"}),
    # The broker's own steps of a controlled shutdown (KafkaServer.controlledShutdown, 0.8.2-3.9, broker id from its
    # ident): it begins one, and an attempt fails. A failed attempt logs why (``phase`` ``remaining``: the
    # controller answered with partitions still to move or an error code; ``error``: the request itself failed,
    # an IOException) and then, after the backoff, that it retries (``retrying``; up to 3.0 after every failed
    # attempt, the last one included, 3.1+ only when retries remain). The controller logs none of these.
    Template("controlled_shutdown_started", r"^Starting controlled shutdown\s*$"),
    # 3.4+ in ZooKeeper-to-KRaft migration (a KafkaServer whose controller is a KRaft one): before its
    # ControlledShutdown attempts the broker tells the KRaft controller too (a heartbeat wanting shutdown). A step of
    # the shutdown just begun, not its start: ``phase`` ``kraft_notified`` (start lines are those without a phase).
    Template("controlled_shutdown_started", r"^Notifying KRaft of controlled shutdown\s*$",
             consts={"phase": "kraft_notified"}),
    Template("controlled_shutdown_attempt_failed",
             r"^Retrying controlled shutdown (?:after the previous attempt failed|\(\d+ retries remaining\))",
             consts={"phase": "retrying"}),
    Template("controlled_shutdown_attempt_failed",
             r"^Error during controlled shutdown, possibly because leader movement took longer than the configured ",
             consts={"phase": "error"}),
    # 0.8.2-3.0 "Remaining partitions to move: <partitions>" (then "Error from controller: …"); 3.1+ one line
    # "Controlled shutdown request returned after <n>ms with <k> partitions remaining to move" or "… with error E".
    # 0.8.2-2.2 join the partitions with ","; an error reply (NOT_CONTROLLER, STALE_BROKER_EPOCH) has none, and the
    # layout strips the trailing space: the line ends at the colon.
    Template("controlled_shutdown_attempt_failed",
             r"^(?:Remaining partitions to move:(?: |$)|Controlled shutdown request returned after \d+ ?ms with "
             r"(?:error \w+|\d+ partitions remaining to move))", consts={"phase": "remaining"}),
    # 0.8.2-3.0: the same reply's error, the line after "Remaining partitions to move" (``NONE``, or 0, when only
    # partitions remained): one failed attempt logs both, as 3.1+ logs "… with error E" in the one line. 0.8.2-1.0
    # print the code ("Error code from controller: 0"), 1.1-3.0 the name ("Error from controller: NONE").
    Template("controlled_shutdown_attempt_failed", r"^Error (?:code )?from controller: -?\w+\s*$",
             consts={"phase": "remaining"}),
    # Topic deletion (TopicDeletionManager's lines carry ``[Topic Deletion Manager <id>]``, the first one the
    # controller's): one line may name several topics, kept comma-separated in ``topics``.
    Template("topic_deletion", r"^Starting topic deletion for topics (\S+)", {"topics": 1}, consts={"phase": "queued"}),
    Template("topic_deletion", r"^Deletion of topic (\S+) \(re\)started", {"topics": 1}, consts={"phase": "started"}),
    Template("topic_deletion", r"^Halted deletion of topics (\S+) due to (.+?)\s*$",
             {"topics": 1, "deletion_reason": 2}, consts={"phase": "halted"}),
    Template("topic_deletion", r"^Deletion of topic (\S+) successfully completed", {"topics": 1},
             consts={"phase": "completed"}),
    # Reassignment: 2.5+ writes the topic znode with RS/AR/RR at the start and RS alone at the end (the table
    # tells them apart); up to 2.4 the start and end have lines of their own.
    Template("partition_reassignment",
             rf"^Successfully updated assignment of partition {TP} to ReplicaAssignment\(replicas=([\d,]*), "
             r"addingReplicas=([\d,]*), removingReplicas=([\d,]*)\)",
             {"tp": 1, "replicas": 2, "adding_replicas": 3, "removing_replicas": 4}),
    Template("partition_reassignment",
             # Printed as a Scala Seq: ``ArrayBuffer(4, 5)`` / ``List(4, 5)`` (2.8 on Scala 2.13), or ``[4, 5]``.
             rf"^Target replicas (?:\[|[A-Za-z]+\()([\d, ]*)[\])] have all caught up with the leader for "
             rf"reassigning partition {TP}",
             {"replicas": 1, "tp": 2}, consts={"phase": "caught_up"}),
    Template("partition_reassignment", rf"^Handling reassignment of partition {TP} to new replicas ([\d,]+)",
             {"tp": 1, "replicas": 2}, consts={"phase": "started"}),
    Template("partition_reassignment", rf"^Removed partition {TP} from the list of reassigned partitions",
             {"tp": 1}, consts={"phase": "completed"}),
    # A leader's ISR upkeep (kafka.cluster.Partition, ident ``[Partition <tp> broker=<id>]``).
    Template("isr_shrink", r"^Shrinking ISR from ([\d,]*) to ([\d,]*)", {"isr": 2}),
    Template("isr_expand", r"^Expanding ISR from ([\d,]*) to ([\d,]*)", {"isr": 2}),
    # 2.7+: the ISR the controller confirmed (AlterIsr answered); 2.8's expansion has no other INFO line.
    Template("isr_update", r"^ISR updated to ([\d,]*) and version updated to \[\d+\]", {"isr": 1}),
)

INT_FIELDS = ("controller_id", "controller_epoch", "broker_id", "partition", "leader", "old_leader", "leader_epoch")
LIST_FIELDS = ("isr", "brokers", "added_brokers", "live_brokers", "replicas", "adding_replicas", "removing_replicas")
STRING_FIELDS = ("topic", "from_state", "to_state", "strategy", "trigger", "phase", "deletion_reason", "topics")
PARSED_FIELDS = (*INT_FIELDS, *LIST_FIELDS, *STRING_FIELDS, "clean")
LOOSE_FIELDS = frozenset((*INT_FIELDS, *LIST_FIELDS))
"""The fields with loose twins (``loosened``)."""
"""Message-derived columns both parsers produce, besides kind, ts_ms, level and logger."""

# A numeric or broker-list field that does not fit its template makes the line a rejected one (docs/analytics.md,
# "Fields that do not fit"): each such group of a template (and each such extra regex) has a loose twin that takes
# whatever token stands where the number or list should be. Both parsers try the twin only where the strict
# pattern found no value (no template matched, or an optional field group or extra is absent) and reject the line
# when the twin's value does not fit; a value that fits means the strict pattern failed for another reason.
LOOSE_ITEM = r"[^\s,:=()\[\]{}\"]+"
LOOSE_INT = rf"({LOOSE_ITEM})"
# An item of a list ends at a delimiter: "ISR:1,2,LeaderEpoch:3" gives "1,2", not "1,2,LeaderEpoch".
LOOSE_LIST = rf"((?:{LOOSE_ITEM}(?![^\s,()\[\]{{}}\"]))?(?:, ?{LOOSE_ITEM}(?![^\s,()\[\]{{}}\"]))*)"
FIELD_INT = r"-?\d+"
FIELD_LIST = r"[\d, ]*"
REASON_BAD_INT = "field {field} is not an int32 number"
REASON_BAD_LIST = "field {field} is not a list of int32 broker ids"
# The log ident's ids: a number read in part (``[Controller id=5x]``) rejects the line as above; an id that is no
# number at all (``[Controller id=x]``) leaves the field null and the line is kept, with this warning (an ok row's
# ``reason``; the job names the file and line): the ident is a free-form prefix, not a template. The loose twins
# take a word where the strict ones take digits, and only after keys that always precede an id (not
# ``controller-``, which also starts the ident ``[controller-event-thread]``).
IDENT_LOOSE = {
    "controller_id": r"(?:[Cc]ontroller(?:Id=| id=)|^Topic Deletion Manager )(\w+)",
    "controller_epoch": r"epoch=(-?\w+)",
    "broker_id": r"^(?:Broker id=|KafkaServer id=|BrokerServer id=|Kafka Server )(\w+)",
    "partition_broker_id": r"^Partition \S+-\d+ broker=(\w+)$",
}
IDENT_KEYS = {
    "controller_id": ("ontroller", "Topic Deletion Manager "),
    "controller_epoch": ("epoch=",),
    "broker_id": ("Broker id=", "KafkaServer id=", "BrokerServer id=", "Kafka Server "),
    "partition_broker_id": ("Partition ",),
}
"""Substrings one of which an ident must hold for ``IDENT_LOOSE``'s twin to be tried (a cheap guard)."""
_BROKER_KEYS = IDENT_KEYS["broker_id"]
REASON_IDENT_NOT_NUMBER = "log ident field {field} is not a number (left null)"
_DELIMITERS = frozenset(",:=()[]{}\"")


def _item_char(c: str) -> bool:
    """Whether ``c`` is one ``LOOSE_ITEM`` takes."""
    return not (c.isspace() or c in _DELIMITERS)


def read_on(text: str, end: int, is_list: bool) -> bool:
    """Whether a strict field value ending at ``text[end]`` may go on in what its loose twin reads there (a value
    read in part: ``5x``, ``1, two``): a cheap guard before the twin is run on a matched line.

    Sound for the twins of ``loosened``: a twin's item stops at the delimiters, so a value followed by one (or by
    a sentence's final ``.``) is what the twin reads too; a list goes on after ``,`` only with an item that is not
    followed by ``:`` or ``=`` (``LOOSE_LIST``'s lookahead: ``ISR:1,2,LeaderEpoch:3``)."""
    if end >= len(text):
        return False
    c = text[end]
    if c == ".":
        return end + 1 < len(text) and _item_char(text[end + 1])
    if _item_char(c):
        return True
    return is_list and c == "," and _LIST_GOES_ON.match(text, end) is not None


_VALUE_ENDS = (frozenset(" \t)]}\":=,"), frozenset(" \t)]}\":="))
"""By ``is_list``: characters after which ``read_on`` is always False (whitespace, the delimiters; "," but in a
list): a quick exit."""


_LIST_GOES_ON = re.compile(rf",(?: )?+{LOOSE_ITEM}+(?![:=])")
"""A list's next item after its ","; possessive, so an item is taken whole before the look at what follows."""


def _word_char(c: str) -> bool:
    """Python's ``\\w``."""
    return c.isalnum() or c == "_"


def bad_field_reason(name: str) -> str:
    """The rejection reason of a line whose ``name`` field does not fit its template."""
    return (REASON_BAD_LIST if name in LIST_FIELDS else REASON_BAD_INT).format(field=name)


def group_spans(pattern: str) -> list[tuple[int, int]]:
    """(index of "(", index of its ")") of each capturing group of ``pattern``, in group-number order."""
    spans: list[tuple[int, int]] = []
    stack: list[int | None] = []
    for token in regex_tokens(pattern):
        if token.kind == OPEN:
            stack.append(len(spans) if token.group == CAPTURE else None)
            if token.group == CAPTURE:
                spans.append((token.start, -1))
        elif token.kind == CLOSE:
            number = stack.pop()
            if number is not None:
                spans[number] = (spans[number][0], token.start)
    return spans


# The regex syntax the templates use, in one place: ``regex_tokens`` cuts a pattern into these tokens, and the
# scans of a pattern's structure (``group_spans``, ``_alternative_end``, ``jvm_parser.split_at_dot_star``) read
# tokens, not characters, so an escape or a character class is skipped the same way everywhere.
LITERAL = "literal"
"""One character that stands for itself."""
ESCAPE = "escape"
"""A backslash and the character after it (``\\d``, ``\\(``...)."""
CLASS = "class"
"""A character class, ``[`` to its ``]`` (escapes and a leading ``]`` included: ``class_end``)."""
ANY = "any"
"""``.``"""
ANCHOR = "anchor"
"""``^`` or ``$``."""
OPEN = "open"
"""``(`` with its ``?...`` marker: ``Token.group`` says which kind of group it opens."""
CLOSE = "close"
ALTERNATION = "alternation"
QUANTIFIER = "quantifier"
"""``?``, ``*``, ``+`` or ``{m,n}``, with a lazy ``?`` or possessive ``+`` after it."""
CAPTURE, NON_CAPTURE, LOOKAROUND, OTHER_GROUP = "capture", "non_capture", "lookaround", "other"
_LOOKAROUNDS = ("(?=", "(?!", "(?<=", "(?<!")
_BRACES = re.compile(r"\{(?:\d+(?:,\d*)?|,\d+)\}")


@dataclass(frozen=True)
class Token:
    """One token of a pattern: ``pattern[start:end]``; ``group`` is the group kind of an ``OPEN``."""

    kind: str
    start: int
    end: int
    group: str | None = None


def regex_tokens(pattern: str, start: int = 0) -> Iterator[Token]:
    """The tokens of ``pattern`` from ``start`` (which must be a token's start) to its end.

    A group's marker belongs to its ``OPEN`` token: ``(?:`` (NON_CAPTURE), ``(?=``, ``(?!``, ``(?<=``, ``(?<!``
    (LOOKAROUND); any other ``(?`` is OTHER_GROUP (its marker is only the ``(?``, as none of ours uses one). A
    ``{`` that does not start a ``{m,n}`` is a literal, as in Python and Java.
    """
    i, n = start, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            yield Token(ESCAPE, i, min(i + 2, n))
            i += 2
            continue
        if c == "[":
            end = class_end(pattern, i)
            yield Token(CLASS, i, end)
            i = end
            continue
        if c == "(":
            if not pattern.startswith("(?", i):
                token = Token(OPEN, i, i + 1, CAPTURE)
            elif pattern.startswith("(?:", i):
                token = Token(OPEN, i, i + 3, NON_CAPTURE)
            else:
                look = next((m for m in _LOOKAROUNDS if pattern.startswith(m, i)), None)
                token = Token(OPEN, i, i + len(look), LOOKAROUND) if look else Token(OPEN, i, i + 2, OTHER_GROUP)
            yield token
            i = token.end
            continue
        if c in "?*+{":
            braces = _BRACES.match(pattern, i) if c == "{" else None
            if c != "{" or braces:
                end = braces.end() if braces else i + 1
                end += end < n and pattern[end] in "?+"
                yield Token(QUANTIFIER, i, end)
                i = end
                continue
        kind = {")": CLOSE, "|": ALTERNATION, ".": ANY, "^": ANCHOR, "$": ANCHOR}.get(c, LITERAL)
        yield Token(kind, i, i + 1)
        i += 1


def class_end(pattern: str, i: int) -> int:
    """Index just past the character class that starts at ``pattern[i]`` ("["), escapes included."""
    j = i + 1
    j += pattern.startswith("^", j)
    j += pattern.startswith("]", j)
    while pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def loosened(pattern: str, fields: dict[str, int]) -> str | None:
    """``pattern`` with each numeric/list field group (``fields``: name -> group) loosened; None if none is."""
    spans = group_spans(pattern)
    loose = {g: LOOSE_LIST if name in LIST_FIELDS else LOOSE_INT
             for name, g in fields.items() if name in INT_FIELDS or name in LIST_FIELDS}
    if not loose:
        return None
    out, at = [], 0
    for g in sorted(loose):
        start, end = spans[g - 1]
        out += [pattern[at:start], loose[g]]
        at = end + 1
    return "".join(out) + pattern[at:]


def field_fits(name: str, value: str) -> bool:
    """Whether a loose twin's ``value`` is what the strict pattern takes for field ``name`` (and in int32 range)."""
    if name in LIST_FIELDS:
        return re.fullmatch(FIELD_LIST, value) is not None and all(
            _int32(x) is not None for x in re.findall(INT_LIST, value))
    return re.fullmatch(FIELD_INT, value) is not None and _int32(value) is not None

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


@functools.lru_cache(maxsize=4096)
def _second_ms(date: str, clock: str, zone: str | None) -> int:
    return ts_to_ms(date, clock, None, zone)


def ts_to_ms(date: str, clock: str, millis: str | None, zone: str | None) -> int:
    """Layout timestamp parts -> ms since epoch; a timestamp without zone is taken as UTC."""
    if millis is not None:  # lines come in time order: most share their second with the line before
        return _second_ms(date, clock, zone) + int(millis)
    text = f"{date}T{clock}.000"
    if zone and zone != "Z":
        text += zone if ":" in zone else f"{zone[:3]}:{zone[3:]}"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // _MS


@dataclass
class ParsedLine:
    """One log record; ``fields`` holds every PARSED_FIELDS column (None when absent)."""

    line_number: int
    ts_ms: int
    level: str
    logger: str
    kind: str
    fields: dict[str, object]
    exception: str | None = None
    """The exception of a stack trace or Python traceback that followed the record (folded into it)."""
    warning: str | None = None
    """Why part of the record was left null (``REASON_IDENT_NOT_NUMBER``), for a warning naming the line."""


@dataclass(frozen=True)
class RejectedLine:
    """A line that is neither a log record nor the continuation of one."""

    line_number: int
    reason: str
    line: str


class KafkaLogParser:
    """Stateless line parser; ``parse_lines`` adds the continuation bookkeeping a file needs."""

    def __init__(self) -> None:
        self._prefix = re.compile(PREFIX)
        self._layout = re.compile(LAYOUT)
        self._continuation = re.compile(CONTINUATION)
        self._py_traceback = re.compile(PY_TRACEBACK)
        self._java_exception = re.compile(JAVA_EXCEPTION)
        self._timestamp = re.compile(TIMESTAMP_START)
        self._ident = re.compile(IDENT)
        self._ident_controller = re.compile(IDENT_CONTROLLER)
        self._ident_epoch = re.compile(IDENT_EPOCH)
        self._ident_broker = re.compile(IDENT_BROKER)
        self._ident_partition = re.compile(IDENT_PARTITION)
        self._ident_loose = {name: re.compile(rx) for name, rx in IDENT_LOOSE.items()}
        self._old_prefix = re.compile(OLD_STATE_PREFIX)
        self._tp = re.compile(TP_SPLIT)
        self._ints = re.compile(INT_LIST)
        self._templates = [
            (t, t.starts, t.needle, re.compile(t.pattern), {k: re.compile(v) for k, v in t.extra.items()},
             tuple((name, g, name in LIST_FIELDS, name in t.extra) for name, g in t.groups.items()
                   if name in LOOSE_FIELDS))
            for t in TEMPLATES
        ]
        # Per template: its loose twin, the (field, group) pairs it checks and the loose extras, in PARSED_FIELDS
        # order (the first field that does not fit names the reason).
        self._loose = {id(t): (re.compile(t.loose) if t.loose else None,
                               [(n, t.groups[n]) for n in PARSED_FIELDS if t.groups.get(n) and n in LOOSE_FIELDS],
                               [(n, re.compile(t.loose_extra[n])) for n in PARSED_FIELDS if n in t.loose_extra])
                       for t in TEMPLATES}
        # Templates a body can match, by its first character (most templates start with a literal word).
        self._unguarded = [t for t in self._templates if not t[1]]
        firsts = {p[0] for t in self._templates for p in t[1]}
        self._by_first = {c: [t for t in self._templates if not t[1] or any(p[0] == c for p in t[1])]
                          for c in firsts}

    def parse_message(self, logger: str, message: str) -> tuple[str, dict[str, object], str | None, str | None]:
        """(kind, fields, None, warning) of one message, kind ``other`` when no template matches; or (..., reason,
        ...) when a numeric or broker-list field does not fit its template (the line is to be rejected). The
        warning (else None) names a log-ident id that is no number (``REASON_IDENT_NOT_NUMBER``)."""
        values: dict[str, object] = dict.fromkeys(PARSED_FIELDS)
        body = message
        ident = self._ident.match(body)
        ident_bad = warning = None
        if ident:
            text = ident.group(1)
            cm, em, bm = (self._ident_controller.search(text), self._ident_epoch.search(text),
                          self._ident_broker.search(text))
            partition = self._ident_partition.match(text)
            for name, m in (("controller_id", cm), ("controller_epoch", em), ("broker_id", bm)):
                if m is not None:
                    values[name] = m.group(1)
                    if ident_bad is None and m.end(1) < len(text) and _word_char(text[m.end(1)]):
                        ident_bad = bad_field_reason(name)  # read in part: "[Controller id=5x]"
            if partition:
                values["tp"], values["broker_id"] = partition.group(1), partition.group(2)
            # the loose ident twins only where a key stands without its number (IDENT_KEYS: cheap guards)
            if ((cm is None and ("ontroller" in text or text.startswith("Topic Deletion Manager ")))
                    or (em is None and "epoch=" in text) or (bm is None and text.startswith(_BROKER_KEYS))
                    or (partition is None and text.startswith("Partition "))):
                warning = self._ident_warning(text, (cm, em, bm, partition))
            body = body[ident.end():]
        if logger == STATE_CHANGE_LOGGER:
            old = self._old_prefix.match(body)
            if old:
                values["controller_id"] = old.group(1) or values["controller_id"]
                values["controller_epoch"] = old.group(2) or values["controller_epoch"]
                values["broker_id"] = old.group(3) or values["broker_id"]
                body = body[old.end():]
        kind = "other"
        candidates = self._by_first.get(body[:1], self._unguarded)
        bad: str | None = None
        for template, starts, needle, pattern, extra, loose_groups in candidates:
            if (starts and not body.startswith(starts)) or needle not in body:
                continue
            m = pattern.search(body)
            if m is None:
                continue
            kind = template.kind
            found = {name: m.group(g) for name, g in template.groups.items()}
            # the numeric/list fields the loose twins are to check: those read on (``read_on``), those missing
            # (an extra of a group's name replaces its value: whether it is missing is the extra's to say)
            check: set[str] = set()
            for name, g, is_list, replaced in loose_groups:
                if not found[name]:
                    if not replaced:
                        check.add(name)
                    continue
                end = m.end(g)
                if end < len(body) and body[end] not in _VALUE_ENDS[is_list] and read_on(body, end, is_list):
                    check.add(name)
            for name, rx in extra.items():
                xm = rx.search(body)
                value = found[name] = _group(xm, 1)
                if name not in LOOSE_FIELDS:
                    continue
                if not value:
                    check.add(name)
                    continue
                end, is_list = xm.end(1), name in LIST_FIELDS  # type: ignore[union-attr]
                if end < len(body) and body[end] not in _VALUE_ENDS[is_list] and read_on(body, end, is_list):
                    check.add(name)
            bad = self._unfit(template, body, check) if check else None
            for name, value in found.items():
                if value:  # template values win over the log ident's
                    values[name] = value
            values.update(template.consts)
            break
        else:
            for template, starts, needle, _, _, _ in candidates:
                if (starts and not body.startswith(starts)) or needle not in body:
                    continue
                bad = self._unfit(template, body, set(template.groups), whole=True)
                if bad:
                    break
        typed, overflow = self._typed(values)
        return kind, typed, bad or ident_bad or overflow, warning

    def _ident_warning(self, text: str, strict: tuple[re.Match[str] | None, ...]) -> str | None:
        """``REASON_IDENT_NOT_NUMBER`` for the first ident id (``IDENT_LOOSE``'s order) whose strict pattern found
        no number (``strict``: the matches in that order) and its loose twin a word, else None."""
        for (name, rx), found in zip(self._ident_loose.items(), strict, strict=True):
            if found is None and any(key in text for key in IDENT_KEYS[name]) and rx.search(text):
                return REASON_IDENT_NOT_NUMBER.format(field="broker_id" if name == "partition_broker_id" else name)
        return None

    def _unfit(self, template: Template, body: str, missing: set[str], whole: bool = False) -> str | None:
        """The reason a field of ``template`` named in ``missing`` (no strict value, or one the text after it may
        go on from: ``read_on``) does not fit, if one does not: its loose twin found a value there that does
        not fit. ``whole``: the template's pattern did not match at all."""
        loose, loose_groups, loose_extra = self._loose[id(template)]
        if loose is not None and (whole or missing & template.groups.keys()):
            m = loose.search(body)
            if m is not None:
                for name, g in loose_groups:
                    if whole or name in missing:
                        value = m.group(g)
                        if value is not None and not field_fits(name, value):
                            return bad_field_reason(name)
        if whole:
            return None
        for name, rx in loose_extra:
            if name in missing:
                em = rx.search(body)
                if em is not None and not field_fits(name, em.group(1)):
                    return bad_field_reason(name)
        return None

    def _typed(self, values: dict[str, object]) -> tuple[dict[str, object], str | None]:
        """Values as their columns' types, and the reason of the first field out of int32 range (if one is)."""
        tp = values.pop("tp", None)
        if tp and values["topic"] is None:
            m = self._tp.match(str(tp))
            if m:
                values["topic"], values["partition"] = m.group(1), m.group(2)
        topics = values["topics"]
        if topics and values["topic"] is None and "," not in str(topics):
            values["topic"] = topics  # one topic: where the event log puts it (so the two merge)
        bad: str | None = None
        for name in INT_FIELDS:
            if values[name] is not None:
                values[name] = _int32(str(values[name]))
                if values[name] is None:
                    bad = bad or bad_field_reason(name)
        for name in LIST_FIELDS:
            if values[name] is not None:
                values[name] = [_int32(x) for x in self._ints.findall(str(values[name]))]
                if None in values[name]:  # type: ignore[operator]
                    bad = bad or bad_field_reason(name)
        for name in ("strategy", "trigger"):
            if values[name] is not None:
                values[name] = str(values[name]).lower()
        return values, bad

    def parse_line(self, line_number: int, line: str) -> ParsedLine | RejectedLine | None:
        """A record, a rejection, or None for a blank or continuation line."""
        text = line.rstrip("\r\n")
        if not text.strip() or self._continuation.match(text):
            return None
        stripped = text if text.startswith("[") else self._prefix.sub("", text, count=1)
        m = None if SEP in stripped else self._layout.match(stripped)
        if m is None:
            return RejectedLine(line_number, _reject_reason(stripped), text)
        date, clock, millis, zone, level, message, logger = m.groups()
        try:
            ts_ms = ts_to_ms(date, clock, millis, zone)
        except ValueError:
            return RejectedLine(line_number, REASON_BAD_TIMESTAMP, text)
        kind, values, bad, warning = self.parse_message(logger, message)
        if bad is not None:
            return RejectedLine(line_number, bad, text)
        return ParsedLine(line_number, ts_ms, level, logger, kind, values, warning=warning)

    def parse_lines(self, lines: Iterable[str], first_line: int = 1) -> Iterator[ParsedLine | RejectedLine]:
        """Records and rejections of a file (or of a chunk starting at ``first_line``).

        Java stack traces and our own Python tracebacks are folded into the record above them: their lines
        yield nothing, and the exception they name becomes that record's ``exception``. A record is
        yielded once the next line shows it has no more trace to come.
        """
        held: ParsedLine | None = None
        in_traceback = False
        for number, line in enumerate(lines, start=first_line):
            text = line.rstrip("\r\n")
            if self._py_traceback.match(text):
                in_traceback = True
                continue
            if in_traceback and text and self._timestamp.match(self._prefix.sub("", text, count=1)) is None:
                if held is not None and text[:1] not in " \t":
                    held.exception = text[:MAX_EXCEPTION_CHARS]  # a traceback's last line names the exception
                continue
            in_traceback = False
            if held is not None and held.exception is None and self._java_exception.match(text):
                held.exception = text[:MAX_EXCEPTION_CHARS]
            result = self.parse_line(number, text)
            if result is None:
                continue
            if held is not None:
                yield held
                held = None
            if isinstance(result, ParsedLine):
                held = result
            else:
                yield result
        if held is not None:
            yield held


def _int32(digits: str) -> int | None:
    """A matched decimal kept only in int32 range, else None (as Spark's try_cast, and the JVM parser): the
    columns are int32, and one corrupt broker id must not fail the whole chunk's Arrow batch."""
    number = int(digits)
    return number if -(2**31) <= number < 2**31 else None


def _group(m: re.Match[str] | None, g: int) -> str | None:
    return m.group(g) if m else None


TIMESTAMP_START = r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d"
REASON_NO_TIMESTAMP = "no log timestamp at line start"
REASON_NO_LAYOUT = "timestamp but no 'LEVEL message (logger)' layout"
REASON_BAD_TIMESTAMP = "timestamp is not a valid date and time"
REASON_CONTROL_CHAR = "contains control character U+0001"


def _reject_reason(text: str) -> str:
    """Why a line failed the layout; the Spark extractor derives the same reasons with the same tests."""
    if SEP in text:
        return REASON_CONTROL_CHAR
    if re.match(TIMESTAMP_START, text) is None:
        return REASON_NO_TIMESTAMP
    return REASON_NO_LAYOUT

