"""Lines both cluster prompts print (``zkcontroller cluster`` and ``cluster --processes``), so a topic's
placement reads the same at either, in the layout of Kafka's ``kafka-topics.sh --describe``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def created_topic_lines(topic: str, assignment: Mapping[int, Sequence[int]]) -> list[str]:
    """``Created topic T.`` (kafka-topics --create), then each partition's replicas as ``--describe`` shows
    them (no leader or ISR yet: the controller has not acted)."""
    return [f"Created topic {topic}."] + [
        f"\tTopic: {topic}\tPartition: {partition}\tReplicas: {','.join(map(str, replicas))}"
        for partition, replicas in sorted(assignment.items())]
