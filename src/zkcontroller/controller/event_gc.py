"""The cyclic garbage collector held off while a controller event runs, and run once after it.

A broker failure or failover allocates millions of short- and long-lived objects in one event; with the
default thresholds the collector ran hundreds of times inside it, re-scanning the context's 100k partitions
each time it reached the older generations (15–35 % of a broker failure in profiles). Reference counting
still frees almost everything at once; only cycles wait until the event ends. Process-wide, so nested
pauses (several controllers in one process, events interleaving at store calls) are counted: the collector
comes back when the last running event ends.
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
def gc_paused_during_event() -> Iterator[None]:
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
