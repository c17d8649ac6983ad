"""A controller elected after ``/controller_epoch`` reached Int.MaxValue, as in Kafka 2.8: the epoch wraps to
Int.MinValue (written ``-2147483648``), the controller takes office with it, and the brokers, which saw
Int.MaxValue, refuse its requests as coming from a stale controller (STALE_CONTROLLER_EPOCH, and state.change's
"is old" line)."""

from __future__ import annotations

import logging
import random

import pytest
from tests.helpers import wait_until
from tests.integration.conftest import ClusterFactory

from zkcontroller.admin.topics import TopicAdmin
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

INT_MAX, INT_MIN = 2**31 - 1, -(2**31)

pytestmark = pytest.mark.parametrize("backend", ["embedded"], indirect=True)


async def test_the_epoch_after_int_max_wraps_and_brokers_refuse_it_as_stale(
        make_cluster: ClusterFactory, admin: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "state.change.logger")
    await admin.session.create(paths.CONTROLLER_EPOCH, str(INT_MAX - 1).encode())
    cluster = await make_cluster([1, 2])
    first = await cluster.wait_for_controller()
    assert first.context.epoch == INT_MAX
    await TopicAdmin(admin, random.Random(1)).create_topic("t", 1, 2)
    planes = [server.control_plane for server in cluster.brokers.values()]
    assert all(plane is not None for plane in planes)
    await wait_until(lambda: all(p is not None and p.controller_epoch == INT_MAX and p.partitions for p in planes),
                     what="both brokers following the Int.MaxValue controller")

    await admin.session.delete(paths.CONTROLLER)  # the controller moves: a new election increments the epoch
    await wait_until(lambda: (c := cluster.active_controller()) is not None and c.context.epoch == INT_MIN,
                     what="a controller elected with the wrapped epoch")
    data, _stat = await admin.session.get_data(paths.CONTROLLER_EPOCH)
    assert data == b"-2147483648"

    def refused() -> list[str]:
        return [r.getMessage() for r in list(caplog.records) if r.name == "state.change.logger"
                and "-2147483648" in r.getMessage() and "Latest known controller epoch is 2147483647" in r.getMessage()]

    await wait_until(lambda: {m.split("]")[0] for m in refused()} == {"[Broker id=1", "[Broker id=2"},
                     what="both brokers refusing the wrapped epoch as old")
    assert all(p is not None and p.controller_epoch == INT_MAX for p in planes)
    # The cluster's own waits take the wrapped epoch as the later election (the shell and the demo ask for
    # "an epoch above the old one").
    wrapped = await cluster.wait_for_controller(timeout_s=10, min_epoch=INT_MAX + 1)
    assert wrapped.context.epoch == INT_MIN
    assert (await cluster.wait_for_controller(timeout_s=10)).context.epoch == INT_MIN
