"""``zkcontroller demo``: a short, narrated run of the coordination layer doing what Kafka asks of it.

Three brokers register ephemeral ``/brokers/ids/<id>`` znodes, race to create ``/controller`` while bumping
``/controller_epoch`` in one ``multi``, and watch ``/controller``. The controller's session then expires: its
znodes vanish, the watchers fire, and a survivor wins with the next epoch. Runs on the embedded store by
default, or on a real ZooKeeper with ``--zookeeper``. Later issues grow this into the full cluster demo.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field

from rich.console import Console

from zkcontroller.coordination.api import (
    CheckOp,
    CoordinationSession,
    CreateMode,
    CreateOp,
    EventType,
    SetDataOp,
    WatchedEvent,
)
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.errors import NodeExistsError

console = Console(highlight=False)


@dataclass
class DemoBroker:
    """Just enough of a broker to show registration, election and failover on the store."""

    broker_id: int
    session: CoordinationSession
    wake: asyncio.Queue[WatchedEvent] = field(default_factory=asyncio.Queue)
    epoch_zk_version: int = -1

    async def register(self) -> int:
        path = f"/brokers/ids/{self.broker_id}"
        info = {"version": 5, "host": "localhost", "port": 9092 + self.broker_id, "endpoints": []}
        await self.session.create(path, json.dumps(info).encode(), CreateMode.EPHEMERAL)
        stat = await self.session.exists(path)
        assert stat is not None
        return stat.czxid  # Kafka's broker epoch

    async def try_elect(self) -> int | None:
        """Kafka's election write: create /controller and bump /controller_epoch atomically."""
        if await self.session.exists("/controller", self.wake.put_nowait) is not None:
            return None
        with contextlib.suppress(NodeExistsError):  # someone else created it first: fine
            await self.session.create("/controller_epoch", b"0")
        data, stat = await self.session.get_data("/controller_epoch")
        epoch = int(data) + 1
        payload = json.dumps({"version": 1, "brokerid": self.broker_id, "timestamp": "0"}).encode()
        result = await self.session.multi(
            [
                CreateOp("/controller", payload, CreateMode.EPHEMERAL),
                SetDataOp("/controller_epoch", str(epoch).encode(), stat.version),
            ]
        )
        await self.session.exists("/controller", self.wake.put_nowait)
        if not result.ok:
            return None
        self.epoch_zk_version = stat.version + 1  # the fencing token Kafka keeps as epochZkVersion
        return epoch


async def run_demo(backend: CoordinationBackend, broker_ids: list[int]) -> None:
    sessions = [await backend.new_session(6000) for _ in broker_ids]
    brokers = [DemoBroker(b, s) for b, s in zip(broker_ids, sessions, strict=True)]
    try:
        await sessions[0].ensure_path("/brokers/ids")
        for b in brokers:
            epoch = await b.register()
            console.print(
                f"broker {b.broker_id} registered, session 0x{b.session.session_id:x}, epoch {epoch}"
            )
        winner, epoch = await elect(brokers)
        console.print(f"[bold green]broker {winner.broker_id} is controller with epoch {epoch}[/]")

        console.print(f"expiring broker {winner.broker_id}'s session ...")
        await backend.expire_session(winner.session)
        survivors = [b for b in brokers if b is not winner]
        for b in survivors:
            # The watch armed while /controller was missing fired NodeCreated at the election; skip it.
            while (event := await asyncio.wait_for(b.wake.get(), 30)).type is not EventType.NODE_DELETED:
                pass
            console.print(f"broker {b.broker_id} saw {event.type.name} on {event.path}")
        ids = await survivors[0].session.get_children("/brokers/ids")
        console.print(f"live brokers now: {', '.join(ids)}")
        new_winner, new_epoch = await elect(survivors)
        console.print(f"[bold green]broker {new_winner.broker_id} took over with epoch {new_epoch}[/]")
        fenced = await stale_write_is_fenced(survivors[0].session, winner.epoch_zk_version)
        console.print(f"a write fenced by the old epoch's version is refused: {fenced}")
    finally:
        for s in sessions:
            await s.close()


async def elect(brokers: list[DemoBroker]) -> tuple[DemoBroker, int]:
    results = await asyncio.gather(*(b.try_elect() for b in brokers))
    winners = [(b, e) for b, e in zip(brokers, results, strict=True) if e is not None]
    assert len(winners) == 1, f"exactly one controller must win, got {winners}"
    return winners[0]


async def stale_write_is_fenced(session: CoordinationSession, old_version: int) -> bool:
    """What Kafka's fencing does: a check on /controller_epoch's version rides along with every write."""
    result = await session.multi([CheckOp("/controller_epoch", old_version), CreateOp("/stale-write")])
    return not result.ok and await session.exists("/stale-write") is None
