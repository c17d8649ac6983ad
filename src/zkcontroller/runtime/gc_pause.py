"""The cyclic garbage collector held off while a controller event or a broker's control request runs, and
run once (young generation only) after it.

A broker failure or failover allocates millions of short- and long-lived objects in one event; with the
default thresholds the collector ran hundreds of times inside it, re-scanning the context's 100k partitions
each time it reached the older generations (15–35 % of a broker failure in profiles). A broker applying a
LeaderAndIsr or StopReplica of 10,000 partitions does the same on its side: in a controlled shutdown of a
broker leading 10,000 partitions (one process, five brokers, 1.3 million objects) one full collection inside
the brokers' handling took 433 ms. Reference counting still frees almost everything at once; only cycles wait
until the section ends. Process-wide, so nested pauses (several controllers and brokers in one process,
sections interleaving at awaits) are counted: the collector comes back when the last running one ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

ENABLED = True
"""Benchmarks switch this off for the before-figure."""

_depth = 0
_paused_enabled_gc = False


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _paused_enabled_gc
    if not ENABLED:
        yield
        return
    if _depth == 0:
        _paused_enabled_gc = gc.isenabled()
        gc.disable()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _paused_enabled_gc:
            gc.enable()
            gc.collect(0)  # the young objects the event left, scanned once instead of per 700 allocations
