"""`gc_paused`: the cyclic collector is off inside a controller event or a broker's control request, back on
(with one young-generation pass) when the outermost section ends, and left alone if it was already off."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from zkcontroller.broker.replica_manager import ReplicaManager
from zkcontroller.protocol.control_requests import ApiKey, ControlResponse, UpdateMetadataRequest
from zkcontroller.runtime import gc_pause
from zkcontroller.runtime.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_nested_sections_keep_the_collector_off_until_the_outermost_ends() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner section ending does not turn it back on
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off_and_errors_still_restore_it() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()
    gc.enable()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_switched_off_for_a_before_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_pause, "ENABLED", False)
    with gc_paused():
        assert gc.isenabled()


def test_a_broker_applies_a_control_request_with_the_collector_off() -> None:
    seen: list[bool] = []

    def handle(request: object, correlation_id: int) -> ControlResponse:
        seen.append(gc.isenabled())
        return ControlResponse(ApiKey.UPDATE_METADATA)

    manager = SimpleNamespace(control_plane=SimpleNamespace(handle=handle), runtime=SimpleNamespace(now_ms=lambda: 0))
    request = UpdateMetadataRequest(controller_id=1, controller_epoch=1, broker_epoch=1, partition_states=(),
                                    live_brokers=(), topic_ids=())
    ReplicaManager.handle_control_request(manager, request)  # type: ignore[arg-type]
    assert seen == [False] and gc.isenabled()


def test_inside_a_loop_the_young_pass_waits_for_the_turns_already_woken() -> None:
    """The requests an event's last step queued are handed over before the collection: the send loops were
    woken during the event, so their turns come before the one that turns the collector back on."""
    import asyncio

    seen: list[tuple[str, bool]] = []

    async def main() -> None:
        woken = asyncio.Event()

        async def sender() -> None:
            await woken.wait()
            seen.append(("sender", gc.isenabled()))

        task = asyncio.create_task(sender())
        await asyncio.sleep(0)
        with gc_paused():
            woken.set()
        seen.append(("section ended", gc.isenabled()))
        await task
        await asyncio.sleep(0)
        seen.append(("next turn", gc.isenabled()))

    asyncio.run(main())
    assert seen == [("section ended", False), ("sender", False), ("next turn", True)]


def test_a_section_starting_before_the_deferred_pass_keeps_the_collector_off_until_it_ends() -> None:
    import asyncio

    seen: list[bool] = []

    async def main() -> None:
        with gc_paused():
            pass
        with gc_paused():  # before the deferred turn: the collector must not be taken for "was off"
            await asyncio.sleep(0)  # the deferred turn runs here, inside the section
            await asyncio.sleep(0)
            seen.append(gc.isenabled())
        await asyncio.sleep(0)
        seen.append(gc.isenabled())

    asyncio.run(main())
    assert seen == [False, True]


def test_a_loop_closed_before_the_deferred_turn_does_not_leave_the_collector_off() -> None:
    import asyncio

    loop = asyncio.new_event_loop()

    async def end_a_section() -> None:
        with gc_paused():
            pass
        loop.stop()  # this turn is the last: the deferred one never runs

    loop.run_until_complete(end_a_section())
    assert gc_pause._deferred_on is loop and not gc.isenabled()
    loop.close()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_before_figure_collects_as_the_section_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setattr(gc_pause, "DEFERRED", False)

    async def main() -> bool:
        with gc_paused():
            pass
        return gc.isenabled()

    assert asyncio.run(main())


class _Cycle:
    """Cyclic garbage: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


def _garbage(count: int) -> list[weakref.ref[_Cycle]]:
    """``count`` cycles dropped at once, and a weak reference to each of every hundredth (to see them freed)."""
    refs = []
    for i in range(count):
        cycle = _Cycle()
        if i % 100 == 0:
            refs.append(weakref.ref(cycle))
    return refs


def test_overlapping_sections_get_the_deferred_pass_once_they_left_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A section held across awaits while others start and end inside it: the depth never returns to 0, and the
    collector used to stay off for the whole stretch (16–83 s in long runs), every cycle of it waiting for its end.
    Past the cap a boundary inside the stretch runs the pass; the collector itself stays off."""
    import asyncio

    monkeypatch.setattr(gc_pause, "CAP_OBJECTS", 20_000, raising=False)
    freed_inside: list[bool] = []

    async def main() -> None:
        release = asyncio.Event()

        async def long_section() -> None:
            with gc_paused():
                await release.wait()

        holder = asyncio.create_task(long_section())
        await asyncio.sleep(0)
        refs: list[weakref.ref[_Cycle]] = []
        for _ in range(10):  # 50,000 tracked objects at least
            with gc_paused():
                refs += _garbage(5_000)
            await asyncio.sleep(0)
        freed_inside.append(all(r() is None for r in refs[:100]))
        freed_inside.append(not gc.isenabled())
        release.set()
        await holder

    asyncio.run(main())
    assert freed_inside == [True, True]


def test_sections_back_to_back_without_a_turn_get_the_pass_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sections run one after another with no await between them (a queue of events that never yield): the
    deferred turn never comes until they stop, so the cap is reached at a section's start."""
    import asyncio

    monkeypatch.setattr(gc_pause, "CAP_OBJECTS", 20_000, raising=False)

    async def main() -> bool:
        refs: list[weakref.ref[_Cycle]] = []
        for _ in range(10):
            with gc_paused():
                refs += _garbage(5_000)
        return all(r() is None for r in refs[:100]) and not gc.isenabled()

    assert asyncio.run(main())


def test_what_one_section_left_still_waits_for_the_turn_after_the_woken_sends(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A section that left more than the cap, then another starting before the deferred turn: the pass is still
    the turn's (after the send loops the first one woke), not at the second section's start."""
    import asyncio

    monkeypatch.setattr(gc_pause, "CAP_OBJECTS", 20_000, raising=False)
    seen: list[bool] = []

    async def main() -> None:
        with gc_paused():
            refs = _garbage(25_000)
        with gc_paused():
            seen.append(refs[0]() is not None)  # not collected at this start
            await asyncio.sleep(0)  # the deferred turn, inside this section: now over the cap
            seen.append(refs[0]() is None)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert seen == [True, True]


def test_a_stretch_that_went_cap_ms_without_a_pass_gets_one_on_the_loops_clock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Few objects but a long stretch: its cycles wait no longer than ``CAP_MS`` on the event loop's clock (virtual
    in a simulation; a stand-in clock here), counted from the stretch's start and then from the last pass."""
    import asyncio

    monkeypatch.setattr(gc_pause, "CAP_MS", 1_000, raising=False)
    now = [0.0]
    loop = asyncio.new_event_loop()
    loop.time = lambda: now[0]  # type: ignore[method-assign]
    freed: list[int] = []

    async def main() -> None:
        release = asyncio.Event()

        async def long_section() -> None:
            with gc_paused():
                await release.wait()

        holder = asyncio.create_task(long_section())
        await asyncio.sleep(0)
        refs: list[weakref.ref[_Cycle]] = []
        for at_s in (0.5, 0.999, 1.0, 1.5, 2.0):
            now[0] = at_s
            with gc_paused():  # its start is a boundary of the stretch; its cycles are made after it
                refs += _garbage(100)[:1]
            await asyncio.sleep(0)
            freed.append(sum(r() is None for r in refs))
        release.set()
        await holder

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert freed == [0, 0, 2, 2, 4]  # at 1.0 s the cycles made before it; at 2.0 s, 1 s after that pass, the next
