"""A topic whose config Kafka's ``TopicConfigHandler`` throws on (an unknown ``message.format.version``, a value
``LogConfig`` refuses where the controller's broker has logs of the topic, a throttled replica list it cannot
parse) gets no ``TopicUncleanLeaderElectionEnable``: the throw aborts the handler before its last step. Ours
enabled unclean election for it all the same."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from zkcontroller.controller.events import ControllerEvent, TopicUncleanLeaderElectionEnable
from zkcontroller.controller.unclean_election import UNCLEAN_ELECTION_LOGGER, UncleanElectionEvents
from zkcontroller.model import TopicPartition
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

ENABLED = {"unclean.leader.election.enable": "true"}


@pytest.fixture
def zk(config_zk: KafkaZkClient) -> KafkaZkClient:
    """The conftest's notification-reading session, by the name these tests use (the conftest's ``zk`` is an
    elected controller's)."""
    return config_zk



def _family(zk: KafkaZkClient, assignment: dict[str, dict[TopicPartition, tuple[int, ...]]]
            ) -> tuple[UncleanElectionEvents, list[ControllerEvent]]:
    """An active controller 1 (IBP 2.7) with these replica assignments, whose queued events are kept."""
    queued: list[ControllerEvent] = []
    context = SimpleNamespace(partition_replica_assignment_for_topic=lambda t: assignment.get(t, {}))
    core: Any = SimpleNamespace(is_active=True, zk=zk, on_watch=lambda _e: None, controller_id=1,
                                events=SimpleNamespace(put=queued.append), context=context,
                                config=SimpleNamespace(inter_broker_protocol_version="2.7"),
                                dynamic_config=SimpleNamespace(unclean_leader_election_enable=False))
    return UncleanElectionEvents(core), queued


@pytest.mark.parametrize(("overrides", "hosted", "announced"), [
    ({"retention.ms": "soon"}, True, False),  # LogConfig.fromProps throws: the broker has logs of it
    ({"retention.ms": "soon"}, False, True),  # no logs there: LogConfig is not built
    ({"leader.replication.throttled.replicas": "0:1:2"}, False, False),
    ({"follower.replication.throttled.replicas": "0:1,,1:1"}, False, False),
    ({"leader.replication.throttled.replicas": "0:99999999999"}, False, False),
    ({"message.format.version": "3.0"}, False, False),
    ({"message.format.version": "2.8"}, True, True),  # newer than the IBP: left out, not refused
    ({"leader.replication.throttled.replicas": "0:1,1:2"}, True, True),
])
async def test_a_config_the_topic_handler_throws_on_enables_no_unclean_election(
        zk: KafkaZkClient, caplog: pytest.LogCaptureFixture, overrides: dict[str, str], hosted: bool,
        announced: bool) -> None:
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", {**ENABLED, **overrides})
    await zk.create_config_change_notification("topics/t")
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "u", ENABLED)
    await zk.create_config_change_notification("topics/u")
    replicas = (1, 2) if hosted else (2, 3)
    family, queued = _family(zk, {"t": {TopicPartition("t", 0): replicas}})
    with caplog.at_level(logging.INFO, UNCLEAN_ELECTION_LOGGER):
        await family.process_config_change_notification(None)  # type: ignore[arg-type]
    topics = [e.topic for e in queued if isinstance(e, TopicUncleanLeaderElectionEnable)]
    assert topics == (["t", "u"] if announced else ["u"])
    refusals = [r.getMessage() for r in caplog.records if "Not enabling unclean leader election" in r.getMessage()]
    assert len(refusals) == (0 if announced else 1)


async def test_a_topic_config_nested_deeper_than_python_parses_is_reported_and_enables_nothing(
        zk: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    """It was read as "not JSON", no overrides (a WARN); Kafka reads it. Here: an error naming it and the depth."""
    pad = b"[" * 3000 + b"]" * 3000
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", ENABLED)
    await zk.session.set_data(paths.topic_config_path("t"),
                              b'{"version":1,"config":{"unclean.leader.election.enable":"true"},"pad":' + pad + b"}")
    await zk.create_config_change_notification("topics/t")
    family, queued = _family(zk, {})
    with caplog.at_level(logging.INFO, UNCLEAN_ELECTION_LOGGER):
        await family.process_config_change_notification(None)  # type: ignore[arg-type]
    assert queued == []
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("/config/topics/t" in m and "JSON nested 3001 levels deep" in m for m in errors), errors
