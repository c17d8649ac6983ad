"""What both mappings of plain values onto the wire (`control_codec`, `fetch_codec`) share: Kafka's grouping of
partitions under their topic, and an error code read back as `Errors`. One copy, so the two cannot drift apart."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TypeVar

from zkcontroller.protocol.control_requests import Errors

T = TypeVar("T")


def by_topic(items: Iterable[T], topic_of: Callable[[T], str]) -> dict[str, list[T]]:
    """``items`` grouped under their topic, topics in first-seen order (the order they are written in)."""
    grouped: dict[str, list[T]] = defaultdict(list)
    for item in items:
        grouped[topic_of(item)].append(item)
    return grouped


def error_of(code: int) -> Errors:
    """A wire error code as `Errors`; a code we do not know reads as UNKNOWN_SERVER_ERROR rather than failing the
    whole message."""
    try:
        return Errors(code)
    except ValueError:
        return Errors.UNKNOWN_SERVER_ERROR
