"""A cancelled record-set walk (`log_validator.validate` on the worker) stops within 4096 records of wherever it is,
from its first step: the size and CRC check of every entry of a long uncompressed legacy set, the read of a legacy
wrapper's inflated set into entries (`inspect`), then the check of its messages. Before, a 64 MiB wrapper of
2.58 million messages was read into entries (3 s of a 4.7 s walk) and a set of 1.5 million messages CRC-checked
(1.1 s) before ``cancelled`` was first asked.

Structural: ``progress`` counts the entries built (`record_sets.Entry`), CRC-checked (``check_integrity``) and
counted (``legacy_count``), and every ``cancelled()`` call records it: no wall clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from kafka.record.memory_records import MemoryRecordsBuilder

from zkcontroller.protocol.wire import legacy_records, log_validator, record_sets
from zkcontroller.protocol.wire.compression import GZIP
from zkcontroller.protocol.wire.log_validator import validate
from zkcontroller.protocol.wire.record_sets import UNKNOWN_SERVER_ERROR, RecordSetError, inspect

MESSAGES = 10_000
"""More than two checks' worth (8192) of messages, and not a multiple of 4096."""


def legacy_set(compression: int, magic: int = 1) -> bytes:
    b = MemoryRecordsBuilder(magic=magic, compression_type=compression, batch_size=4 << 20)
    for _ in range(MESSAGES):
        assert b.append(timestamp=1_000 if magic else None, key=b"k", value=b"v" * 30) is not None
    b.close()
    return bytes(b.buffer())


@dataclass
class Walk:
    """``progress``: the entries built, CRC-checked or counted so far; ``asked``: ``progress`` at each
    ``cancelled()`` call."""

    progress: int = 0
    asked: list[int] = field(default_factory=list)

    def cancelled_on(self, call: int | None) -> Callable[[], bool]:
        def cancelled() -> bool:
            self.asked.append(self.progress)
            return len(self.asked) == call
        return cancelled


@pytest.fixture
def walk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Walk]:
    w = Walk()

    def counting(real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            w.progress += 1
            return real(*args, **kwargs)
        return counted
    for module, name in ((record_sets, "Entry"), (log_validator, "check_integrity"),
                         (legacy_records, "check_integrity"), (log_validator, "legacy_count")):
        monkeypatch.setattr(module, name, counting(getattr(module, name)))
    yield w


def run(walk: Walk, data: bytes, call: int | None) -> RecordSetError | int:
    entries = inspect(data, 2)  # on the event loop, before the worker's walk
    walk.progress = 0
    try:
        return validate(data, entries, None, "orders-0", now_ms=1_000, timestamp_difference_max_ms=10,
                        cancelled=walk.cancelled_on(call))
    except RecordSetError as e:
        return e


# progress at each cancelled() call of a walk never cancelled: an uncompressed set (CRCs, then counts), a wrapper
# (its CRC; its count, which reads its inflated set into entries, then checks each one)
UNCOMPRESSED = [0, 4096, 8192, MESSAGES, MESSAGES + 4096, MESSAGES + 8192]
WRAPPER = [0, 1, 2, 2 + 4096, 2 + 8192, 2 + MESSAGES, 2 + MESSAGES + 4096, 2 + MESSAGES + 8192]


@pytest.mark.parametrize(("compression", "asked"), [(0, UNCOMPRESSED), (GZIP, WRAPPER)])
def test_a_walk_asks_from_its_first_step_and_every_4096_records(walk: Walk, compression: int,
                                                                 asked: list[int]) -> None:
    assert run(walk, legacy_set(compression), None) == MESSAGES
    assert walk.asked == asked
    gaps = [b - a for a, b in zip([0, *walk.asked], [*walk.asked, walk.progress], strict=True)]
    assert max(gaps) <= 4096, gaps


@pytest.mark.parametrize(("compression", "asked"), [(0, UNCOMPRESSED), (GZIP, WRAPPER)])
def test_a_walk_stops_at_the_first_check_after_its_cancellation(walk: Walk, compression: int,
                                                                asked: list[int]) -> None:
    """Cancelled at any of its checks (in the wrapper's case: as its inflated set is read into entries, and as
    they are checked), the walk reads nothing more."""
    data = legacy_set(compression)
    for call in range(1, len(asked) + 1):
        walk.asked.clear()
        e = run(walk, data, call)
        assert isinstance(e, RecordSetError)
        assert (e.error, e.exception) == (UNKNOWN_SERVER_ERROR, "java.lang.InterruptedException")
        assert (walk.asked, walk.progress) == (asked[:call], asked[call - 1])


def test_magic_0_timestamps_take_no_slow_path_on_a_bounded_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Magic 0's -1 is exempt from the topic's timestamp bounds: its messages are not checked one by one."""
    checked: list[int] = []
    real = legacy_records._legacy_record_error

    def recorded(*args: Any, **kwargs: Any) -> Any:
        checked.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(legacy_records, "_legacy_record_error", recorded)
    for compression in (0, GZIP):
        data = legacy_set(compression, magic=0)
        assert validate(data, inspect(data, 2), None, "orders-0", now_ms=1_000_000,
                        timestamp_difference_max_ms=10) == MESSAGES
    assert checked == []
