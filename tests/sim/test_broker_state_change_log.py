"""Audit #16 end to end: a simulated cluster's own log files, read by our analytics parser (the one that reads Kafka
2.8's logs), give the brokers' leadership transitions as ``became_leader`` / ``became_follower`` rows, and agree
with the controller's decisions in ``events.jsonl``.

The checks are causal, not positional: which request reaches which broker before a kill, a controller move or the
end of the run is the schedule's business, so no check counts on a given election being answered, on a line's
place in the file or on a count. Instead every row a broker writes must follow from a decision the controller
recorded (in that role, and after it), one broker at most leads a partition at an epoch, and an elected broker that
later moved past the elected epoch must either have said it became leader at that epoch or never have held it (its
next row says it came from an older epoch: restarted, or the request died with its controller). A broker that took
an epoch silently, logged the wrong role or epoch, or fetched from anyone but the leader fails one of these.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.sim.helpers import CI, run

from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, ParsedLine

BROKERS = (1, 2, 3)
PREVIOUS_EPOCH = re.compile(r"\. Previous leader epoch was (-?\d+)\. \(state\.change\.logger\)$")
ADDED_FETCHER = re.compile(r"\[ReplicaFetcherManager on broker (\d+)\] Added fetcher to broker (\d+) for "
                           r"partitions (?:Hash)?Map\((.*)\) \(kafka\.server\.ReplicaFetcherManager\)$")
FETCH_STATE = re.compile(r"(\S+)-(\d+) -> InitialFetchState\(BrokerEndPoint\(id=(\d+), host=[^)]*\),(\d+),(\d+)\)")

Key = tuple[str, int, int]
"""(topic, partition, leader epoch)."""


@dataclass(frozen=True)
class Transition:
    """One ``Leader/Follower <tp> starts at leader epoch E ... Previous leader epoch was P.`` line."""

    broker: int
    leader: bool
    key: Key
    previous_epoch: int
    isr: tuple[int, ...]
    ts_ms: int
    line_number: int


@dataclass(frozen=True)
class Decision:
    """The controller's first record of a partition's leadership at one leader epoch."""

    leader: int
    ts_ms: int


def parsed(path: Path) -> list[ParsedLine]:
    rows = list(KafkaLogParser().parse_lines(path.read_text().splitlines()))
    rejected = [r for r in rows if not isinstance(r, ParsedLine)]
    assert not rejected, f"{path.name}: lines our parser cannot read: {rejected[:3]}"
    return [r for r in rows if isinstance(r, ParsedLine)]


def transitions(path: Path) -> list[Transition]:
    """The brokers' leadership transitions, in file order, each checked against Kafka's line format."""
    lines = path.read_text().splitlines()
    found = []
    for row in parsed(path):
        if row.kind not in ("became_leader", "became_follower"):
            continue
        f, line = row.fields, lines[row.line_number - 1]
        assert f["broker_id"] in BROKERS and f["topic"] and f["partition"] is not None, line
        assert isinstance(f["leader_epoch"], int) and f["leader_epoch"] >= 0, line
        previous = PREVIOUS_EPOCH.search(line)
        assert previous, f"no 'Previous leader epoch was P.' ending: {line}"
        # P is the epoch the replica held: -1 when fresh, never past the epoch it now starts at
        assert -1 <= int(previous[1]) <= f["leader_epoch"], line
        found.append(Transition(f["broker_id"], row.kind == "became_leader",
                                (f["topic"], f["partition"], f["leader_epoch"]), int(previous[1]),
                                tuple(f["isr"] or ()), row.ts_ms, row.line_number))
    return found


def decisions(events: list[dict]) -> dict[Key, Decision]:
    """Every leadership the controller wrote (creation, election, ISR change), by partition and leader epoch; two
    different leaders recorded for one epoch fail here."""
    decided: dict[Key, Decision] = {}
    for e in events:
        if "leader_epoch" not in e or "leader" not in e:
            continue
        key = (e["topic"], e["partition"], e["leader_epoch"])
        first = decided.setdefault(key, Decision(e["leader"], e["ts_ms"]))
        assert first.leader == e["leader"], f"leaders {first.leader} and {e['leader']} both recorded at {key}"
    return decided


SCENARIOS = [("rolling-restart", 10_000, True), ("kill-leaders", CI.duration_ms, False)]
"""(scenario, run length, whether its elections are certain to reach a broker). A rolling restart's controlled
shutdowns hand every partition a stopping broker leads to a live one, on any schedule (10 s is the first broker's
stop and restart, and some of the next's); kill-leaders' crashes are where an elected broker dies before hearing of
it (seed 1 has one), and a seed can end with no election at all."""


@pytest.mark.parametrize(("scenario", "duration_ms", "elections_heard"), SCENARIOS)
def test_a_clusters_state_change_log_yields_the_brokers_leadership_transitions(
        tmp_path: Path, scenario: str, duration_ms: int, elections_heard: bool) -> None:
    assert run(scenario, 1, log_dir=tmp_path, duration_ms=duration_ms).ok
    check_logs(tmp_path, elections_heard)


def check_logs(log_dir: Path, elections_heard: bool) -> None:
    """The brokers' lines in ``log_dir`` against the controller's ``events.jsonl`` there (see the module doc);
    ``elections_heard``: some elected broker must have logged becoming leader."""
    events = [json.loads(line) for line in (log_dir / "events.jsonl").read_text().splitlines()]
    decided = decisions(events)
    failovers = [e["ts_ms"] for e in events if e["type"] == "controller_elected"]
    moves = transitions(log_dir / "state-change.log")
    assert any(t.leader for t in moves) and any(not t.leader for t in moves)  # topic creation gives both

    # every transition a broker logs is one the controller decided, in that role, after deciding it
    leaders: dict[Key, int] = {}
    for t in moves:
        if t.leader:
            assert t.broker in t.isr, f"a leader outside its own ISR: {t}"
            assert leaders.setdefault(t.key, t.broker) == t.broker, f"two brokers led {t.key}: {leaders[t.key]}, {t}"
        decision = decided.get(t.key)
        if decision is None:
            # A controller that died with its write in flight never recorded it; its successor read it from
            # ZooKeeper and sent it. Only then: some controller was elected after the partition's last record.
            last = max((d.ts_ms for k, d in decided.items() if k[:2] == t.key[:2] and k[2] < t.key[2]), default=0)
            assert any(last <= ts <= t.ts_ms for ts in failovers), \
                f"broker {t.broker} took {t.key}, which the controller never recorded: {t}"
            continue
        assert (decision.leader == t.broker) == t.leader, f"broker {t.broker} disagrees with {decision}: {t}"
        assert t.ts_ms >= decision.ts_ms, f"broker {t.broker} logged {t.key} before the controller decided it: {t}"

    # an elected broker that moved on past the elected epoch either said it became leader there or never held it
    answered = 0
    for e in (e for e in events if e["type"] == "leader_election"):
        key: Key = (e["topic"], e["partition"], e["leader_epoch"])
        later = [t for t in moves if t.broker == e["leader"] and t.key[:2] == key[:2] and t.key[2] >= key[2]]
        if not later:
            continue  # the run ended (or the broker stayed down) before it heard of this epoch
        first = later[0]
        if first.key == key:
            assert first.leader, f"broker {e['leader']} was elected for {key} but became a follower: {first}"
            answered += 1
        else:
            assert first.previous_epoch < key[2], \
                f"broker {e['leader']} held {key} (elected: {e}) without saying it became leader: {first}"
    assert answered or not elections_heard, "no elected broker logged becoming leader"

    # the fetcher manager's lines go to server.log, as Kafka's root logger writes them; each Added line follows
    # the same broker's Follower line for that partition and epoch, and names that epoch's leader
    server_rows = parsed(log_dir / "server.log")
    assert {r.logger for r in server_rows} >= {"kafka.server.ReplicaFetcherManager"}
    logged_at = {r.line_number: r.ts_ms for r in server_rows}
    added = [(logged_at[number], line) for number, line in
             enumerate((log_dir / "server.log").read_text().splitlines(), start=1) if "Added fetcher to broker" in line]
    assert added
    followed: dict[tuple[int, Key], int] = {}  # (broker, partition and epoch) -> when it first said Follower
    for t in moves:
        if not t.leader:
            followed.setdefault((t.broker, t.key), t.ts_ms)
    for ts_ms, line in added:
        found = ADDED_FETCHER.search(line)
        assert found, f"not Kafka's Added fetcher line: {line}"
        broker, leader = int(found[1]), int(found[2])
        entries = FETCH_STATE.findall(found[3])
        assert entries, line
        for topic, partition, endpoint, epoch, _offset in entries:
            key = (topic, int(partition), int(epoch))
            assert int(endpoint) == leader, line
            assert (broker, key) in followed, f"broker {broker} fetches {key} it never became follower of: {line}"
            assert ts_ms >= followed[broker, key], f"broker {broker} fetched {key} before becoming follower: {line}"
            assert leaders.get(key, leader) == leader, f"broker {broker} fetches {key} from {leader}, not its leader"
            assert decided.get(key, Decision(leader, 0)).leader == leader, \
                f"broker {broker} fetches {key} from {leader}, not the elected leader"
