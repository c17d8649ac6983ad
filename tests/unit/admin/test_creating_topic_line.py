"""AdminZkClient's "Creating topic" line in Kafka's renderings: it printed Python's dict and list forms
(``{0: [2, 1, 3]}``), which no reader of Kafka's server.log expects."""

from __future__ import annotations

from zkcontroller.admin.topics import creating_topic_line


def test_the_assignment_is_a_hash_map_of_array_buffers_and_the_configs_java_properties() -> None:
    assert creating_topic_line("orders", {}, {1: [3, 1], 0: [2, 3]}) == (
        "Creating topic orders with configuration {} and initial partition assignment "
        "HashMap(0 -> ArrayBuffer(2, 3), 1 -> ArrayBuffer(3, 1))")
    assert creating_topic_line("c", {"retention.ms": "5", "cleanup.policy": "compact"}, {0: [1]}) == (
        "Creating topic c with configuration {cleanup.policy=compact, retention.ms=5} and initial partition "
        "assignment HashMap(0 -> ArrayBuffer(1))")
