"""Real Kafka lines, one per version family and shutdown step, parse to the kind their template names.

test_kafka_log_parser states each template with our own values; these read the lines real clusters wrote from the
shared logs at run time (``tests.shared_lines``: the repository holds no copy of them). A real line's concrete
values are not restated here: each field the template reads must be found, and be what the line shows.
"""

from __future__ import annotations

import pytest
from tests.shared_lines import shared_line

from zkcontroller.analytics.kafka_log_parser import KafkaLogParser, ParsedLine

# (sample file, key: template words its first matching line holds, kind, fields of fixed meaning, fields whose
# values the line shows as text)
REAL = [
    ("19-andrei-0.10.2-state-change-unclean-election.log", "to OnlinePartition with leader", "partition_state_change",
     {"from_state": "OfflinePartition", "to_state": "OnlinePartition"},
     ("controller_id", "controller_epoch", "topic", "partition", "leader")),
    ("19-andrei-0.10.2-state-change-unclean-election.log", "for Offline partition [", "leader_election",
     {"strategy": "offline"}, ("leader", "controller_epoch", "topic", "partition")),
    ("17-andrei-0.10.2-controller-unclean.log", "There's potential data loss", "leader_election", {"clean": False},
     ("topic", "partition", "leader")),
    ("17-andrei-0.10.2-controller-unclean.log", "is ready to serve as the new controller", "controller_ready", {},
     ("controller_id", "controller_epoch")),
    ("13-citypulse-1.0-controller.log", "New leader and ISR for partition", "isr_change", {},
     ("controller_id", "topic", "partition", "leader", "leader_epoch", "isr")),
    ("15-citypulse-1.0-state-change-elections.log", "for Offline partition", "leader_election", {},
     ("controller_id", "controller_epoch", "topic", "partition", "leader")),
    ("08-choopong-1.1-controller-reelection.log", "successfully elected as the controller", "controller_elected",
     {"controller_epoch": None}, ("controller_id",)),
    ("01-guenterh-2.7-broker1-controller.log", "Epoch incremented to", "controller_elected", {},
     ("controller_id", "controller_epoch")),
    ("02-guenterh-2.7-broker1-state-change.log", "after removing replica", "isr_change", {},
     ("topic", "partition", "leader", "isr", "leader_epoch", "broker_id")),
    ("02-guenterh-2.7-broker1-state-change.log", "failed to change state for partition",
     "partition_state_change_failed", {"to_state": "OnlinePartition"}, ("controller_epoch", "partition")),
    ("01-guenterh-2.7-broker1-controller.log", "] Resigned", "controller_resigned", {}, ("controller_id",)),
    ("01-guenterh-2.7-broker1-controller.log", "Halted deletion of topics", "topic_deletion", {"phase": "halted"},
     ("controller_id", "topic", "topics")),
    ("46-cookjustin-3.3.1-state-change.log", "from NewPartition to OnlinePartition with state LeaderAndIsr",
     "partition_state_change", {}, ("topic", "partition", "leader", "isr")),
    ("46-cookjustin-3.3.1-state-change.log", "starts at leader epoch", "became_leader", {},
     ("broker_id", "topic", "leader_epoch", "isr")),
    ("44-choopong-1.1-server-zk-expiry-controlled-shutdown.log", "Controlled shutdown succeeded",
     "controlled_shutdown_end", {"phase": "succeeded", "controller_id": None}, ("broker_id",)),
    ("44-choopong-1.1-server-zk-expiry-controlled-shutdown.log", "] shutting down (kafka.server", "other", {},
     ("broker_id",)),
    ("44-choopong-1.1-server-zk-expiry-controlled-shutdown.log", "Starting controlled shutdown",
     "controlled_shutdown_started", {"phase": None, "controller_id": None}, ("broker_id",)),
    ("05-andreastraut-2.8-controller.log", "from list of shutting down brokers", "controlled_shutdown_end",
     {"phase": "removed", "broker_id": None}, ("controller_id", "brokers")),
    ("10-choopong-1.1-controller-broker-failure.log", "Removed ArrayBuffer() from list", "controlled_shutdown_end",
     {"phase": "removed", "brokers": None}, ("controller_id",)),
]


def _shown(value: object, line: str) -> bool:
    """``value`` (a field the parser read) appears in ``line`` as Kafka printed it: a list item by item."""
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(str(item) in line for item in items)


@pytest.mark.parametrize(("name", "key", "kind", "fixed", "shown"), REAL,
                         ids=[f"{i:02d}-{c[2]}" for i, c in enumerate(REAL)])
def test_a_real_kafka_line_parses_to_its_templates_kind(name: str, key: str, kind: str, fixed: dict[str, object],
                                                        shown: tuple[str, ...]) -> None:
    line = shared_line(name, key)
    parsed = KafkaLogParser().parse_line(1, line)
    assert isinstance(parsed, ParsedLine), parsed
    assert parsed.kind == kind, line
    assert {k: parsed.fields[k] for k in fixed} == fixed, line
    missing = [k for k in shown if parsed.fields.get(k) is None or not _shown(parsed.fields[k], line)]
    assert not missing, (missing, parsed.fields, line)
