"""Controller election (§1.5) on both backends: the first epoch, exactly one winner among concurrent
candidates, and the verification path after NODEEXISTS/BADVERSION."""

from __future__ import annotations

import asyncio
import json

import pytest
from tests.contract.zk.conftest import MakeClient
from tests.helpers import Recorder, wait_until

from zkcontroller.coordination.api import EventType, SessionState, WatchedEvent
from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ControllerMovedError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


async def test_first_controller_gets_epoch_1_and_zk_version_1(make_client: MakeClient) -> None:
    client = await make_client()
    assert await client.get_controller_epoch() is None
    assert await client.register_controller_and_increment_controller_epoch(3) == (1, 1)
    assert await client.get_controller_id() == 3
    data, stat = await client.session.get_data(paths.CONTROLLER)
    assert json.loads(data) == {"version": 1, "brokerid": 3, "timestamp": "1662110000000"}
    assert stat.ephemeral_owner == client.session.session_id
    epoch_data, epoch_stat = await client.session.get_data(paths.CONTROLLER_EPOCH)
    assert (epoch_data, epoch_stat.version) == (b"1", 1)


async def test_concurrent_elections_have_exactly_one_winner(make_client: MakeClient) -> None:
    first = await make_client()
    assert await first.register_controller_and_increment_controller_epoch(100) == (1, 1)
    await first.session.close()  # the ephemeral /controller goes: a new election is due
    candidates = [await make_client() for _ in range(8)]
    outcomes = await asyncio.gather(
        *(c.register_controller_and_increment_controller_epoch(i) for i, c in enumerate(candidates)),
        return_exceptions=True,
    )
    winners = [(i, o) for i, o in enumerate(outcomes) if not isinstance(o, BaseException)]
    assert len(winners) == 1, outcomes
    assert all(isinstance(o, ControllerMovedError) for o in outcomes if isinstance(o, BaseException))
    winner, (epoch, zk_version) = winners[0]
    assert epoch == 2
    observer = candidates[0]
    assert await observer.get_controller_id() == winner
    found = await observer.get_controller_epoch()
    assert found is not None and (found[0], found[1].version) == (2, zk_version)


async def test_election_lost_while_controller_alive(make_client: MakeClient) -> None:
    a, b = await make_client(), await make_client()
    await a.register_controller_and_increment_controller_epoch(1)
    with pytest.raises(ControllerMovedError, match="Controller moved to another broker"):
        await b.register_controller_and_increment_controller_epoch(2)
    found = await b.get_controller_epoch()
    assert found is not None and found[0] == 1  # the loser changed nothing


async def test_verification_accepts_our_own_committed_election(make_client: MakeClient) -> None:
    """A multi that committed but whose response was lost is retried and sees NODEEXISTS; the check then
    finds ourselves at /controller with the epoch we meant to write."""
    client = await make_client()
    epoch, version = await client.register_controller_and_increment_controller_epoch(5)
    assert await client._check_controller_and_epoch(5, epoch) == (epoch, version)
    with pytest.raises(ControllerMovedError):
        await client._check_controller_and_epoch(6, epoch)
    with pytest.raises(ControllerMovedError):
        await client._check_controller_and_epoch(5, epoch + 1)


async def test_verification_when_controller_node_went_away(make_client: MakeClient) -> None:
    client = await make_client()
    with pytest.raises(ControllerMovedError, match="went away"):
        await client._check_controller_and_epoch(5, 1)


async def test_epoch_increments_across_failovers(backend: CoordinationBackend, make_client: MakeClient) -> None:
    for expected_epoch in (1, 2, 3):
        client = await make_client()
        epoch, _ = await client.register_controller_and_increment_controller_epoch(expected_epoch)
        assert epoch == expected_epoch
        await backend.expire_session(client.session)
        observer = await make_client()

        await wait_until(lambda o=observer: _no_controller(o), what="the expired controller's ephemeral node to go")


async def _no_controller(client: KafkaZkClient) -> bool:
    return await client.get_controller_id() is None


async def test_delete_controller_is_fenced(make_client: MakeClient) -> None:
    client = await make_client()
    _, version = await client.register_controller_and_increment_controller_epoch(1)
    with pytest.raises(ControllerMovedError):
        await client.delete_controller(version + 1)
    assert await client.get_controller_id() == 1
    await client.delete_controller(version)
    assert await client.get_controller_id() is None
    await client.delete_controller(version)  # absent is fine


async def test_controller_watch_sees_creation_and_deletion(make_client: MakeClient) -> None:
    observer, candidate = await make_client(), await make_client()
    created = Recorder()
    assert await observer.get_controller_id(created) is None
    await candidate.register_controller_and_increment_controller_epoch(1)
    assert await created.next() == WatchedEvent(EventType.NODE_CREATED, SessionState.CONNECTED, paths.CONTROLLER)
    deleted = Recorder()
    assert await observer.get_controller_id(deleted) == 1
    await candidate.session.close()
    assert await deleted.next() == WatchedEvent(EventType.NODE_DELETED, SessionState.CONNECTED, paths.CONTROLLER)
