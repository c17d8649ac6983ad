"""The cyclic garbage collector held off while a controller event or a broker's control request runs, and
run once (young generation only) after it, in the event loop's next turn.

A broker failure or failover allocates millions of short- and long-lived objects in one event; with the
default thresholds the collector ran hundreds of times inside it, re-scanning the context's 100k partitions
each time it reached the older generations (15–35 % of a broker failure in profiles). A broker applying a
LeaderAndIsr or StopReplica of 10,000 partitions does the same on its side: in a controlled shutdown of a
broker leading 10,000 partitions (one process, five brokers, 1.3 million objects) one full collection inside
the brokers' handling took 433 ms. Reference counting still frees almost everything at once; only cycles wait
until the section ends. Process-wide, so nested pauses (several controllers and brokers in one process,
sections interleaving at awaits) are counted: the collector comes back when the last running one ends.

Why the next turn: the young pass over what a broker failure leaves (25–34 ms) ran as the event ended, before
the controller's send loops could hand over the LeaderAndIsr requests the event's last step queued; they were
woken during the event, so their turns come first and the requests go out before the collection. Outside a
running loop (or if the loop closed before that turn) the collection runs when the section ends, as before.

A section that built much long-lived state (a failover's context, a big LeaderAndIsr) ends with a freeze instead
of the young pass (`gc_freeze`), so full collections stop re-scanning that state.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from contextlib import contextmanager

from zkcontroller.runtime import gc_freeze

ENABLED = True
"""Benchmarks switch this off for the before-figure."""

DEFERRED = True
"""The young pass in the loop's next turn; benchmarks switch this off for the before-figure."""

_depth = 0
_paused_enabled_gc = False
_deferred_on: asyncio.AbstractEventLoop | None = None
"""The loop whose next turn owes the collection (the collector stays off until then)."""


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _paused_enabled_gc
    if not ENABLED:
        yield
        return
    if _depth == 0:
        if _deferred_on is not None and _deferred_on.is_closed():
            _collect()  # that turn never came: collect now so the collector is not left off
        if _deferred_on is None:  # else still off since the last section, waiting for its turn
            _paused_enabled_gc = gc.isenabled()
            gc.disable()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _paused_enabled_gc and _deferred_on is None:
            _end_pause()


def _end_pause() -> None:
    global _deferred_on
    if DEFERRED:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            _deferred_on = loop
            loop.call_soon(_collect)
            return
    gc.enable()
    gc_freeze.young_pass()  # the young objects the section left, scanned once instead of per 700 allocations


def _collect() -> None:
    """The deferred end of the pause; a section running now ends it instead when it ends."""
    global _deferred_on
    if _deferred_on is None:
        return
    _deferred_on = None
    if _depth == 0 and _paused_enabled_gc:
        gc.enable()
        gc_freeze.young_pass()
