"""``reassign``'s printed JSON (current, proposed, rollback) is Kafka's ``formatAsReassignmentJson``:
``Json.encodeAsString``, which Jackson 2.10 writes with its ``WriterBasedJsonGenerator`` to a ``String``: characters
past ASCII as they are (``json.dumps``' default escaped them as ``\\u00e9``), control characters as ``\\u00XX`` in
upper-case hex (``CharTypes``' ``"0123456789ABCDEF"``). A topic read from ZooKeeper may hold either."""

from __future__ import annotations

from zkcontroller.admin.reassign import format_reassignment_json
from zkcontroller.model import TopicPartition


def test_topic_names_are_written_as_jacksons_text() -> None:
    text = format_reassignment_json({TopicPartition("caf\u00e9", 1): (2, 1), TopicPartition("a\x1fb", 0): (3,)})
    assert text == ('{"version":1,"partitions":['
                    '{"topic":"a\\u001Fb","partition":0,"replicas":[3],"log_dirs":["any"]},'
                    '{"topic":"caf\u00e9","partition":1,"replicas":[2,1],"log_dirs":["any","any"]}]}')
