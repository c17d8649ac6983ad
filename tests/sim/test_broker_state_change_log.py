"""Audit #16 end to end: a simulated cluster's own log files, read by our analytics parser (the one that reads Kafka
2.8's logs), give the brokers' leadership transitions as ``became_leader`` / ``became_follower`` rows, and agree
with the controller's elections in ``events.jsonl``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.sim.helpers import run

from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, ParsedLine


def parsed(path: Path) -> list[ParsedLine]:
    rows = list(KafkaLogParser().parse_lines(path.read_text().splitlines()))
    rejected = [r for r in rows if not isinstance(r, ParsedLine)]
    assert not rejected, f"{path.name}: lines our parser cannot read: {rejected[:3]}"
    return [r for r in rows if isinstance(r, ParsedLine)]


def test_a_clusters_state_change_log_yields_the_brokers_leadership_transitions(tmp_path: Path) -> None:
    assert run("kill-leaders", 1, log_dir=tmp_path).ok
    rows = parsed(tmp_path / "state-change.log")
    leaders = [r.fields for r in rows if r.kind == "became_leader"]
    followers = [r.fields for r in rows if r.kind == "became_follower"]
    assert leaders and followers
    for f in leaders + followers:
        assert f["broker_id"] in (1, 2, 3) and f["topic"] and f["partition"] is not None
        assert isinstance(f["leader_epoch"], int) and f["leader_epoch"] >= 0
    assert all(f["isr"] for f in leaders)
    became = {(f["topic"], f["partition"], f["leader_epoch"]): f["broker_id"] for f in leaders}
    assert len(became) == len({(f["topic"], f["partition"], f["leader_epoch"], f["broker_id"]) for f in leaders}), \
        "two brokers became leader of one partition at one leader epoch"
    elections = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    elections = [e for e in elections if e["type"] == "leader_election"]
    assert elections, "the scenario moved no leadership"
    lines = (tmp_path / "state-change.log").read_text().splitlines()
    for e in elections:  # the broker the controller elected says it became leader at that epoch ...
        if became.get((e["topic"], e["partition"], e["leader_epoch"])) != e["leader"]:
            # ... unless it crashed before the request reached it (kill-leaders kills the broker leading most)
            assert restarted_meanwhile(lines, e["leader"], f'{e["topic"]}-{e["partition"]}', e["leader_epoch"]), e
    # the fetcher manager's lines go to server.log, as Kafka's root logger writes them
    assert {r.logger for r in parsed(tmp_path / "server.log")} >= {"kafka.server.ReplicaFetcherManager"}
    added = [line for line in (tmp_path / "server.log").read_text().splitlines() if "Added fetcher to broker" in line]
    assert added and all(line.endswith(" (kafka.server.ReplicaFetcherManager)") for line in added)


def restarted_meanwhile(lines: list[str], broker: int, partition: str, epoch: int) -> bool:
    """The broker's first transition of ``partition`` at ``epoch`` or later is a fresh start (previous epoch -1):
    it was restarted without handling that epoch's LeaderAndIsr."""
    for line in lines:
        found = re.search(rf"\[Broker id={broker}\] (?:Leader|Follower) {re.escape(partition)} starts at leader "
                          r"epoch (\d+)", line)
        if found and int(found[1]) >= epoch:
            return "Previous leader epoch was -1." in line
    return False
