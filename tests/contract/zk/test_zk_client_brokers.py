"""Broker registration (§1.3) on both backends: broker epoch = czxid, the ephemeral-owner check, and
re-registration after a session expiry that left (or did not leave) the old node behind."""

from __future__ import annotations

import pytest
from tests.contract.zk.conftest import MakeClient
from tests.helpers import wait_until

from zkcontroller.coordination.backend import CoordinationBackend
from zkcontroller.coordination.errors import NodeExistsError
from zkcontroller.model import Broker, BrokerInfo, EndPoint
from zkcontroller.zk.znodes import BrokerIdZNode


def info(broker_id: int, port: int = 9092) -> BrokerInfo:
    return BrokerInfo(Broker(broker_id, (EndPoint(f"host{broker_id}", port, "PLAINTEXT", "PLAINTEXT"),), "r1"))


async def test_broker_epoch_is_the_registration_czxid(make_client: MakeClient) -> None:
    client = await make_client()
    await client.create_top_level_paths()
    epoch = await client.register_broker(info(1))
    data, stat = await client.session.get_data(BrokerIdZNode.path(1))
    assert epoch == stat.czxid and stat.ephemeral_owner == client.session.session_id
    assert BrokerIdZNode.decode(data, BrokerIdZNode.path(1)) == info(1)
    found = await client.get_broker(1)
    assert found is not None and (found.broker, found.epoch) == (info(1).broker, epoch)


async def test_registering_twice_on_one_session_keeps_the_epoch(make_client: MakeClient) -> None:
    client = await make_client()
    await client.create_top_level_paths()
    assert await client.register_broker(info(1)) == await client.register_broker(info(1))


async def test_stale_node_of_our_expired_session_is_replaced(make_client: MakeClient) -> None:
    """ZOOKEEPER-2985: after our session is gone (as far as we know) the server may still hold its node."""
    client = await make_client()
    await client.create_top_level_paths()
    old_session = client.session
    old_epoch = await client.register_broker(info(1))
    client.replace_session((await make_client()).session)  # the old session is still alive on the server
    new_epoch = await client.register_broker(info(1))
    assert new_epoch > old_epoch
    _, stat = await client.session.get_data(BrokerIdZNode.path(1))
    assert stat.ephemeral_owner == client.session.session_id != old_session.session_id
    assert stat.czxid == new_epoch


async def test_broker_id_owned_by_another_live_process_is_refused(make_client: MakeClient) -> None:
    first, second = await make_client(), await make_client()
    await first.create_top_level_paths()
    epoch = await first.register_broker(info(1))
    with pytest.raises(NodeExistsError):
        await second.register_broker(info(1, port=9999))
    found = await first.get_broker(1)
    assert found is not None and found.epoch == epoch and found.broker == info(1).broker


async def test_reregistration_after_real_expiry(backend: CoordinationBackend, make_client: MakeClient) -> None:
    client = await make_client()
    observer = await make_client()
    await client.create_top_level_paths()
    old_epoch = await client.register_broker(info(4))
    await backend.expire_session(client.session)

    async def gone() -> bool:
        return await observer.get_broker(4) is None

    await wait_until(gone, what="the expired registration to go")
    client.replace_session((await make_client()).session)
    new_epoch = await client.register_broker(info(4))
    assert new_epoch > old_epoch
    brokers = await observer.get_all_brokers_and_epochs()
    assert {b: e.epoch for b, e in brokers.values.items()} == {4: new_epoch}


async def test_all_brokers_read_past_a_malformed_registration(make_client: MakeClient) -> None:
    client = await make_client()
    await client.create_top_level_paths()
    epochs = {b: await client.register_broker(info(b)) for b in (1, 2, 3)}
    await client.session.set_data(BrokerIdZNode.path(2), b'{"version":5,"jmx_port":"x"}')
    await client.session.create("/brokers/ids/not-a-broker", b"")
    read = await client.get_all_brokers_and_epochs()
    assert {b: e.epoch for b, e in read.values.items()} == {1: epochs[1], 3: epochs[3]}
    assert list(read.malformed) == ["/brokers/ids/2"]
    assert await client.get_sorted_broker_list() == [1, 2, 3]


async def test_update_broker_info_keeps_the_epoch(make_client: MakeClient) -> None:
    client = await make_client()
    await client.create_top_level_paths()
    epoch = await client.register_broker(info(1))
    await client.update_broker_info(info(1, port=9094))
    found = await client.get_broker(1)
    assert found is not None and found.epoch == epoch and found.broker.endpoints[0].port == 9094
