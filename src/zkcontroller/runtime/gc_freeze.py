"""Long-lived state moved out of the cyclic collector's reach (``gc.freeze``) once the section that built it ends,
so later full collections scan only what came after it.

Why: CPython 3.11 runs a full (generation-2) collection when the middle generation has been collected ten times
and the objects promoted since the last full pass exceed a quarter of those that survived it; each full pass
scans every tracked object in the heap. With five brokers and a 50,000-partition controller in one process
(~500 MiB) they took 1.4–4.8 s each (on a loaded host) and one fell in every controlled shutdown's interval,
long enough to miss heartbeats; none of them freed anything.
Frozen objects sit in a permanent generation no collection scans. Reference counting still frees them as usual;
only cyclic garbage among them is never reclaimed, hence the reclaim rule below.

When (`young_pass`, the pass `gc_pause` runs as a section ends): once the sections since the last freeze have
left ``GROWTH`` net new tracked objects — each section's ``gc.get_count()[0]``, which rises per tracked allocation
and falls per deallocation, with no collection during the section — the state they built is long-lived: a
controller failover loading its context, brokers applying the LeaderAndIsr of new topics, a cluster's set-up.
That section's pass collects the young and middle generations instead of the young one only and freezes the
survivors with everything older: the middle generation's scan and a list splice, no full pass. Sections that
replace about as much as they create (a broker failure, a controlled shutdown) add little.

Reclaim: each later freeze compares the frozen count with the one the first freeze or the last reclaim left;
above ``RECLAIM_RATIO`` times it plus ``GROWTH``, everything is unfrozen, collected in full, and the survivors
frozen again. So cyclic garbage among frozen objects is freed at the latest when the frozen heap has doubled, and
the frozen part is re-scanned once per doubling; CPython's own full passes, still run by its rule, scan only what
is not frozen.

Switch: ``ZKCONTROLLER_GC_FREEZE=0`` (or ``off``/``false``/``no``) in the environment turns it off for the
process; benchmarks set ``ENABLED`` for their before-figure. ``gc_pause`` switched off turns it off too.
"""

from __future__ import annotations

import gc
import os


def enabled_by(setting: str | None) -> bool:
    """``ZKCONTROLLER_GC_FREEZE``'s value: unset or anything but 0/off/false/no (any case) means on."""
    return setting is None or setting.strip().lower() not in ("0", "off", "false", "no")


ENABLED = enabled_by(os.environ.get("ZKCONTROLLER_GC_FREEZE"))
"""``ZKCONTROLLER_GC_FREEZE=0`` turns freezing off; benchmarks switch it for the before-figure."""

GROWTH = 100_000
"""Net new tracked objects the sections must leave for a freeze (creating 2,000 partitions with five in-process
brokers left more: `bench/bench_gc_churn.py` froze once per round)."""

RECLAIM_RATIO = 2.0
"""A full pass over everything when the frozen count exceeds this times the one the last full pass left."""

freezes = 0
"""Freezes so far in this process (figures and tests)."""
reclaims = 0
"""Full passes the reclaim rule ran."""
_grown = 0
"""Net new tracked objects the sections left since the last freeze."""
_frozen_base: int | None = None
"""The frozen count the first freeze or the last reclaim left (None: nothing frozen yet)."""


def young_pass(may_freeze: bool = True) -> None:
    """The collection a ``gc_paused`` section's end runs: young only, or young and middle then a freeze. The cap's
    pass inside a stretch of sections (``may_freeze`` False) counts its objects but leaves the freeze to the
    stretch's end: the sections still running hold transient state, whose cycles a freeze would keep until the
    next reclaim."""
    global _grown
    if ENABLED:
        _grown += gc.get_count()[0]
        if _grown >= GROWTH and may_freeze:
            _grown = 0
            freeze()
            return
    gc.collect(0)


def freeze() -> None:
    """Collect the young and middle generations, freeze the survivors and everything older; reclaim when the
    frozen count has outgrown the last reclaim's (or the first freeze's) by ``RECLAIM_RATIO``."""
    global freezes, reclaims, _frozen_base
    gc.collect(1)
    gc.freeze()
    freezes += 1
    if _frozen_base is None:
        _frozen_base = gc.get_freeze_count()
    elif gc.get_freeze_count() > RECLAIM_RATIO * _frozen_base + GROWTH:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        reclaims += 1
        _frozen_base = gc.get_freeze_count()
