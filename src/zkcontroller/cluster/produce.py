"""The workload of a local cluster: ``produce TOPIC RECORDS`` once, or at a steady rate in the background
(offsets only: a record is one offset on the leader's log, replicated by the followers' fetchers).

`produce_command` is the prompt's verb (``zkcontroller cluster``): it takes the words after ``produce`` and
returns the lines to print; bad input raises ValueError with a usage line.
"""

from __future__ import annotations

import asyncio
import contextlib

from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.prompt_help import IN_PROCESS

USAGE = IN_PROCESS.usage("produce")
"""The verb's usage error: its help row's."""
TICK_MS = 100


class ProduceWorkload:
    """Background producers, one per topic, each appending ``rate`` records per second in 100 ms ticks.

    Per topic, since its producer started: ``produced`` records appended, ``failed`` records whose append was
    refused (no running broker led the topic then, e.g. during a failover; they are not tried again, so
    produced + failed is what the rate asked for) and ``errors``, the last refusal. ``produce --stop`` reports
    them (it said only "stopped producing to t")."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.produced: dict[str, int] = {}
        self.failed: dict[str, int] = {}
        self.errors: dict[str, str] = {}

    def start(self, topic: str, rate_per_s: int) -> None:
        if rate_per_s <= 0:
            raise ValueError(f"the produce rate must be positive, got {rate_per_s}")
        self.stop(topic)
        self.produced[topic], self.failed[topic] = 0, 0
        self.errors.pop(topic, None)
        self.tasks[topic] = asyncio.get_running_loop().create_task(self._run(topic, rate_per_s),
                                                                    name=f"produce-{topic}")

    def stop(self, topic: str | None = None) -> list[str]:
        """Stop ``topic``'s producer (every producer when None); returns the topics stopped, sorted."""
        stopped = sorted(self.tasks) if topic is None else [t for t in (topic,) if t in self.tasks]
        for t in stopped:
            self.tasks.pop(t).cancel()
        return stopped

    def summary(self, topic: str) -> str:
        """What ``topic``'s producer did: records produced and failed, and the last failure's reason."""
        failed = self.failed.get(topic, 0)
        last = f" (the last: {self.errors[topic]})" if failed and topic in self.errors else ""
        return (f"stopped producing to {topic}: {self.produced.get(topic, 0)} records produced, "
                f"{failed} failed{last}")

    async def _run(self, topic: str, rate_per_s: int) -> None:
        owed = 0.0
        while True:
            await asyncio.sleep(TICK_MS / 1000)
            owed += rate_per_s * TICK_MS / 1000
            batch = int(owed)
            if not batch:
                continue
            owed -= batch
            try:
                self.cluster.produce(topic, batch)
            except ValueError as e:  # no leader right now (a failover): these records fail, the next tick tries anew
                self.errors[topic] = str(e)
                self.failed[topic] = self.failed.get(topic, 0) + batch
                continue
            self.produced[topic] = self.produced.get(topic, 0) + batch

    async def close(self) -> None:
        tasks = list(self.tasks.values())
        self.stop()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def produce_command(cluster: LocalCluster, workload: ProduceWorkload, args: list[str]) -> list[str]:
    """``produce TOPIC RECORDS``, ``produce TOPIC --rate RATE`` or ``produce --stop [TOPIC]``."""
    if args[:1] == ["--stop"] and len(args) <= 2:
        stopped = workload.stop(args[1] if len(args) == 2 else None)
        return [workload.summary(topic) for topic in stopped] or ["no producer was running"]
    if len(args) == 3 and args[1] == "--rate":
        workload.start(args[0], _count(args[2], "RATE"))
        return [f"producing {args[2]} records/s to {args[0]} (stop with: produce --stop {args[0]})"]
    if len(args) != 2:
        raise ValueError(USAGE)
    appended = cluster.produce(args[0], _count(args[1], "RECORDS"))
    ends = ", ".join(f"{tp.partition}:{leo}" for tp, leo in sorted(appended.items()))
    return [f"Produced {args[1]} records to {args[0]} (log end offsets {ends or 'unchanged'})."]


def _count(text: str, what: str) -> int:
    """A count of at least 1: ``produce t -5`` said "must be a whole number", which -5 is, and ``produce t 0``
    printed "Produced 0 records" for a command that did nothing (a rate of 0 was already refused)."""
    if not text.isdigit() or int(text) == 0:
        raise ValueError(f"{what} must be a positive whole number (1 or more), got {text!r}; {USAGE}")
    return int(text)
