"""`gc_freeze`: a `gc_paused` section that built much long-lived state ends with its survivors frozen, a small
one does not, the switch turns it off, and churn of cyclic state among frozen objects does not grow the frozen
heap without bound (the reclaim rule)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from zkcontroller.runtime import gc_freeze
from zkcontroller.runtime.gc_pause import gc_paused

GROWTH = 20_000


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    gc.unfreeze()
    monkeypatch.setattr(gc_freeze, "ENABLED", True)
    monkeypatch.setattr(gc_freeze, "GROWTH", GROWTH)
    monkeypatch.setattr(gc_freeze, "freezes", 0)
    monkeypatch.setattr(gc_freeze, "reclaims", 0)
    monkeypatch.setattr(gc_freeze, "_grown", 0)
    monkeypatch.setattr(gc_freeze, "_frozen_base", None)
    yield
    gc.unfreeze()
    if not was:
        gc.disable()


class Node:
    """A tracked object in a cycle with its list: freed only by the cyclic collector."""

    def __init__(self) -> None:
        self.peers: list[Node] = [self]


def build(n: int) -> list[Node]:
    return [Node() for _ in range(n)]


def test_a_section_that_built_long_lived_state_ends_with_it_frozen() -> None:
    with gc_paused():
        kept = build(GROWTH)  # two tracked objects each
    assert gc_freeze.freezes == 1 and gc.get_freeze_count() >= 2 * GROWTH
    assert gc.is_tracked(kept[0])


def test_small_sections_keep_the_young_pass_until_what_they_built_adds_up() -> None:
    kept = []
    for _ in range(3):
        with gc_paused():
            kept.append(build(GROWTH // 8))  # a quarter of GROWTH each (two tracked objects per Node)
    assert gc_freeze.freezes == 0 and gc.get_freeze_count() == 0
    with gc_paused():
        kept.append(build(GROWTH // 8))
    assert gc_freeze.freezes == 1 and gc.get_freeze_count() >= GROWTH


def test_sections_that_replace_what_they_create_do_not_freeze() -> None:
    """As a broker failure does: new leaderships replace the old ones, freed by reference counting."""
    state = [[] for _ in range(GROWTH)]
    for _ in range(8):
        with gc_paused():
            state = [[] for _ in range(GROWTH)]  # GROWTH new tracked lists, the GROWTH old ones freed
    assert gc_freeze.freezes == 0 and len(state) == GROWTH


def test_switched_off_nothing_is_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_freeze, "ENABLED", False)
    with gc_paused():
        kept = build(GROWTH)
    assert gc_freeze.freezes == 0 and gc.get_freeze_count() == 0
    assert kept


@pytest.mark.parametrize(("setting", "on"), [(None, True), ("1", True), ("on", True), ("0", False),
                                             ("off", False), (" FALSE ", False), ("no", False)])
def test_the_environment_switch(setting: str | None, on: bool) -> None:
    assert gc_freeze.enabled_by(setting) is on


CHURN = """
import gc, json
from zkcontroller.runtime import gc_freeze
from zkcontroller.runtime.gc_pause import gc_paused

class Node:
    def __init__(self):
        self.peers = [self]

gc_freeze.ENABLED, gc_freeze.GROWTH = True, GROWTH
gc.collect()
others = len(gc.get_objects())
live, peak = [], 0
for _ in range(20):
    with gc_paused():
        live = [Node() for _ in range(GROWTH)]
    peak = max(peak, gc.get_freeze_count())
print(json.dumps({"freezes": gc_freeze.freezes, "reclaims": gc_freeze.reclaims, "peak": peak, "others": others,
                  "live": len(live)}))
"""


def test_churn_of_cyclic_state_does_not_grow_the_frozen_heap_without_bound() -> None:
    """Each round replaces the state the last one built (cycles: only the collector frees them). Frozen, the old
    rounds' would stay forever; the reclaim rule frees them once the frozen count doubles. Run in a fresh
    interpreter: the first freeze takes every object of the process, so how many rounds double it depends on the
    process's size (in the whole suite's process, millions of objects: one reclaim in twenty rounds)."""
    script = f"GROWTH = {GROWTH}\n" + CHURN
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    figures = json.loads(done.stdout)
    assert figures["freezes"] == 20 and figures["reclaims"] >= 2, figures
    # what a full pass leaves alive (the process's objects, one round's state) times the ratio, plus the slack
    # and the round that crossed it; without the rule the twenty rounds' 800,000 objects would all stay frozen
    bound = gc_freeze.RECLAIM_RATIO * (figures["others"] + 2 * GROWTH) + GROWTH + 2 * GROWTH
    assert figures["peak"] <= bound, figures
    assert figures["live"] == GROWTH


def test_the_caps_pass_inside_a_stretch_leaves_the_freeze_to_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """`gc_pause`'s cap runs a pass while sections still run: freezing there kept the running sections' transient
    cycles frozen until the next reclaim (10 % more frozen objects in bench_gc_churn). The objects count toward
    the freeze, which comes when the stretch ends."""
    import asyncio

    from zkcontroller.runtime import gc_pause

    monkeypatch.setattr(gc_pause, "CAP_OBJECTS", GROWTH)
    seen: list[tuple[int, int]] = []

    async def main() -> list[Node]:
        kept: list[Node] = []
        with gc_paused():  # the stretch: a section held across awaits with others inside it
            for _ in range(4):
                with gc_paused():
                    kept += build(GROWTH // 2)
                await asyncio.sleep(0)
            seen.append((gc_pause.capped_passes, gc_freeze.freezes))
        await asyncio.sleep(0)  # the deferred turn: the stretch's end
        seen.append((gc_pause.capped_passes, gc_freeze.freezes))
        return kept

    passes = gc_pause.capped_passes
    kept = asyncio.run(main())
    assert [(p - passes, f) for p, f in seen] == [(4, 0), (4, 1)] and len(kept) == 2 * GROWTH  # a pass per inner end
