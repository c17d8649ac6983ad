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

The caps (`CAP_OBJECTS`, `CAP_MS`): while sections overlap (the brokers' control requests inside the controller's
awaits, a queue of events run back to back) the depth never reaches 0 or the next section starts before the
deferred turn, and the collector stayed off for the whole stretch: 16–83 s in long runs with five in-process
brokers, all cyclic garbage of the stretch waiting for its end. So a stretch gets the deferred pass anyway at its
next boundary (a section starting or ending while another runs, or the deferred turn coming inside a section) once
it has left ``CAP_OBJECTS`` net new tracked objects (``gc.get_count()[0]``, which only grows while the collector
is off: what the garbage is made of) or ``CAP_MS`` has passed since it began or since its last pass on the
running event loop's clock (the loop's time: virtual in a simulation, so its passes do not depend on the host's
speed; no time cap outside a loop). The collector itself stays off until the stretch ends, and such a pass does
not freeze: the sections still running hold transient state (the freeze comes with the stretch's own pass).
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

CAP_OBJECTS: int | None = 500_000
"""Net new tracked objects a stretch of overlapping sections may leave before a boundary runs the deferred pass;
None: no cap (the before-figure). Not lower: what a pass inside the stretch keeps is scanned again by the
stretch's own pass (250,000 doubled the set-up's time in collections in bench_gc_churn)."""

CAP_MS: int | None = 10_000
"""How long (on the event loop's clock) a stretch may go without a pass before a boundary runs one; None: no cap.
Not shorter: a pass inside a stretch also scans the transient objects its sections still hold, which the pass at
its end never sees (1 s doubled the time in collections in bench_gc_churn); the object cap bounds the garbage."""

capped_passes = 0
"""Passes the cap ran inside a stretch (figures and tests)."""

_depth = 0
_paused_enabled_gc = False
_deferred_on: asyncio.AbstractEventLoop | None = None
"""The loop whose next turn owes the collection (the collector stays off until then)."""
_left_by_last = 0
"""``gc.get_count()[0]`` when the collection was deferred to that turn."""
_timed_on: asyncio.AbstractEventLoop | None = None
"""The loop the running stretch began in (None: outside one), whose clock times it."""
_last_pass_ms = 0.0
"""That loop's time (ms) when the stretch began or the cap last ran its pass."""


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _paused_enabled_gc, _timed_on, _last_pass_ms
    if not ENABLED:
        yield
        return
    if _depth == 0:
        if _deferred_on is not None and _deferred_on.is_closed():
            _collect()  # that turn never came: collect now so the collector is not left off
        if _deferred_on is None:  # else still off since the last section, waiting for its turn
            _paused_enabled_gc = gc.isenabled()
            gc.disable()
            _timed_on = _running_loop()
            _last_pass_ms = 0.0 if _timed_on is None else _timed_on.time() * 1000
        else:  # sections run back to back without a turn: what the last one left waits for that turn
            _cap(_left_by_last, timed=False)
    else:
        _cap()  # a section starting inside another: a boundary of the stretch
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _paused_enabled_gc and _deferred_on is None:
            _end_pause()
        elif _depth > 0:
            _cap()


def _cap(owed_to_the_turn: int = 0, *, timed: bool = True) -> None:
    """The deferred pass inside a stretch of overlapping sections, once it has left ``CAP_OBJECTS`` objects or
    gone ``CAP_MS`` without one; the collector stays off. Not where the depth returns to 0: that pass is the
    deferred turn's, after the send loops already woken. A section starting before that turn discounts what the
    turn owes (``owed_to_the_turn``) and does not look at the time: the turn comes at that section's first
    await; only sections that run back to back without one (no turn at all) reach the cap there."""
    global capped_passes, _left_by_last, _last_pass_ms
    if not _paused_enabled_gc or gc.isenabled():
        return
    now = _timed_on.time() * 1000 if _timed_on is not None and _timed_on is _running_loop() else None
    if ((CAP_OBJECTS is not None and gc.get_count()[0] - owed_to_the_turn >= CAP_OBJECTS)
            or (timed and now is not None and CAP_MS is not None and now - _last_pass_ms >= CAP_MS)):
        capped_passes += 1
        _left_by_last = 0  # the pass collected those too
        if now is not None:
            _last_pass_ms = now
        gc_freeze.young_pass(may_freeze=False)  # a freeze waits for the stretch's end: its state is settled then


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _end_pause() -> None:
    global _deferred_on, _left_by_last
    if DEFERRED:
        loop = _running_loop()
        if loop is not None:
            _deferred_on = loop
            _left_by_last = gc.get_count()[0]
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
    elif _depth > 0:
        _cap()  # the turn came inside a section that started first: the stretch goes on
