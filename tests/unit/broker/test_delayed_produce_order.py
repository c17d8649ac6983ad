"""The produce purgatory wakes the requests waiting on a partition in the order they started waiting, whatever
their events' memory addresses: the simulator's runs are reproducible only if the wake order is."""

from __future__ import annotations

import asyncio

from zkcontroller.broker.delayed_produce import ProduceWaiters
from zkcontroller.model import TopicPartition

TP = TopicPartition("t", 0)


class _Recording(asyncio.Event):
    def __init__(self, number: int, woken: list[int]) -> None:
        super().__init__()
        self.number, self.woken = number, woken

    def set(self) -> None:
        self.woken.append(self.number)
        super().set()


def test_waiters_are_woken_in_the_order_they_started_waiting() -> None:
    waiters, woken = ProduceWaiters(), []
    events = [_Recording(n, woken) for n in range(64)]
    for event in reversed(events):  # the order of waiting, unrelated to the order of allocation
        waiters.watch([TP], event)
    waiters.wake(TP)
    assert woken == list(range(63, -1, -1))
    waiters.unwatch([TP], events[10])
    woken.clear()
    waiters.shutdown()
    assert woken == [n for n in range(63, -1, -1) if n != 10]
