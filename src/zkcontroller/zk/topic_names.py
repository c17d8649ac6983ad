"""Kafka's ``Topic.validate``: one rule for the admin tools (which print its messages) and the brokers (which
answer a Metadata request naming an invalid topic with INVALID_TOPIC_EXCEPTION). Here because topic names are
znode names under ``/brokers/topics``, and both layers may import this one."""

from __future__ import annotations

import re

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def topic_name_problem(topic: str) -> str | None:
    """Kafka's message for why ``topic`` is not a legal topic name; None when it is."""
    if not topic:
        return "Topic name is illegal, it can't be empty"
    if topic in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(topic) > MAX_NAME_LENGTH:
        return f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, Topic name: {topic}"
    if not _LEGAL.fullmatch(topic):
        return (f'Topic name "{topic}" is illegal, it contains a character other than ASCII alphanumerics, '
                "'.', '_' and '-'")
    return None
