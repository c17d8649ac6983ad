"""The controller's pass over ``/config/changes`` (`UncleanElectionEvents.process_config_change_notification`):
one notification that fails is logged and skipped, the rest of its read still counts, and the topics named are
read once each, pipelined, with one ``TopicUncleanLeaderElectionEnable`` per notification naming one enabled."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from zkcontroller.controller.events import ControllerEvent, TopicUncleanLeaderElectionEnable
from zkcontroller.controller.unclean_election import UNCLEAN_ELECTION_LOGGER, UncleanElectionEvents
from zkcontroller.coordination.api import CreateMode
from zkcontroller.zk import paths
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

ENABLED = {"unclean.leader.election.enable": "true"}


@pytest.fixture
def zk(config_zk: KafkaZkClient) -> KafkaZkClient:
    """The conftest's notification-reading session, by the name these tests use (the conftest's ``zk`` is an
    elected controller's)."""
    return config_zk



def _family(zk: KafkaZkClient) -> tuple[UncleanElectionEvents, list[ControllerEvent]]:
    """The family of an active controller 1 whose queued events are kept."""
    queued: list[ControllerEvent] = []
    core: Any = SimpleNamespace(is_active=True, zk=zk, on_watch=lambda _e: None, controller_id=1,
                                events=SimpleNamespace(put=queued.append),
                                dynamic_config=SimpleNamespace(unclean_leader_election_enable=False))
    return UncleanElectionEvents(core), queued


async def _notify(zk: KafkaZkClient, data: bytes) -> str:
    return await zk.session.create(f"{paths.CONFIG_CHANGES}/{paths.CONFIG_CHANGE_PREFIX}", data,
                                   CreateMode.PERSISTENT_SEQUENTIAL)


def _topics(queued: list[ControllerEvent]) -> list[str]:
    return [e.topic for e in queued if isinstance(e, TopicUncleanLeaderElectionEnable)]


async def test_a_notification_python_could_not_decode_no_longer_fails_every_later_pass(zk: KafkaZkClient) -> None:
    """JSON nested 600 deep raised RecursionError out of the read, before the last notification read advanced:
    this pass and every later one failed, and no topic was ever enabled by a notification again."""
    await _notify(zk, b'{"version":' + b"[" * 600 + b"]" * 600 + b"}")
    await _notify(zk, b'{"version":' + b"9" * 5000 + b"}")
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", ENABLED)
    last = await zk.create_config_change_notification("topics/t")
    family, queued = _family(zk)
    await family.process_config_change_notification(None)  # type: ignore[arg-type]
    assert _topics(queued) == ["t"]
    assert family.last_sequence_number == last.rsplit("_", 1)[1]


async def test_a_topic_zookeeper_refuses_is_logged_and_the_rest_of_the_read_still_counts(
        zk: KafkaZkClient, caplog: pytest.LogCaptureFixture) -> None:
    """``topics/``, ``topics/a//b``, a NUL: ZooKeeper's client refuses the path, which raised BadArgumentsError
    out of the event after the last notification read had advanced: the notifications after it were never
    looked at."""
    for name in ("", "a//b", "a\\u0000b", "."):
        await _notify(zk, b'{"version":2,"entity_path":"topics/' + name.encode() + b'"}')
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", ENABLED)
    await zk.create_config_change_notification("topics/t")
    family, queued = _family(zk)
    with caplog.at_level(logging.ERROR, UNCLEAN_ELECTION_LOGGER):
        await family.process_config_change_notification(None)  # type: ignore[arg-type]
    assert _topics(queued) == ["t"]
    assert [r.getMessage() for r in caplog.records] == [
        "[Controller id=1] Ignoring the config change of topic '': Path must not end with / character",
        "[Controller id=1] Ignoring the config change of topic '.': Invalid path string \"/config/topics/.\" "
        "caused by relative paths not allowed @15",
        "[Controller id=1] Ignoring the config change of topic 'a\\x00b': Invalid path string "
        "\"/config/topics/a\x00b\" caused by null character not allowed @16",
        "[Controller id=1] Ignoring the config change of topic 'a//b': Invalid path string \"/config/topics/a//b\" "
        "caused by empty node name specified @17"]  # each topic once, in name order
    await family.process_config_change_notification(None)  # type: ignore[arg-type]
    assert _topics(queued) == ["t"]  # nothing read twice


async def test_the_topics_a_read_names_are_read_once_each_and_announced_once_per_notification(
        zk: KafkaZkClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each notification read its topic's node on its own, one after the other on the controller's loop."""
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", ENABLED)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "u", ENABLED)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "off", {"unclean.leader.election.enable": "no"})
    for topic in ["t"] * 30 + ["off", "u", "t", "absent"]:
        await zk.create_config_change_notification(f"topics/{topic}")
    reads: list[list[str]] = []
    get_topic_configs = zk.get_topic_configs

    async def counted(topics: Any, **kwargs: Any) -> Any:
        reads.append(sorted(topics))
        return await get_topic_configs(topics, **kwargs)

    async def single(*_args: Any) -> Any:
        raise AssertionError("a topic read on its own")

    monkeypatch.setattr(zk, "get_topic_configs", counted)
    monkeypatch.setattr(zk, "get_entity_configs_lenient", single)
    family, queued = _family(zk)
    await family.process_config_change_notification(None)  # type: ignore[arg-type]
    assert reads == [["absent", "off", "t", "u"]]
    assert _topics(queued) == ["t"] * 30 + ["u", "t"]


async def test_a_broker_notification_that_fails_is_logged_and_the_next_one_handled(
        zk: KafkaZkClient, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    family, queued = _family(zk)

    async def failing(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("broker node unreadable")

    monkeypatch.setattr(family, "_update_broker_config", failing)
    await zk.set_or_create_entity_configs(paths.ConfigType.TOPIC, "t", ENABLED)
    bad = await zk.create_config_change_notification("brokers/<default>")
    await zk.create_config_change_notification("topics/t")
    with caplog.at_level(logging.ERROR, UNCLEAN_ELECTION_LOGGER):
        await family.process_config_change_notification(None)  # type: ignore[arg-type]
    assert _topics(queued) == ["t"]
    assert [r.getMessage() for r in caplog.records] == [
        f"[Controller id=1] Skipping the config change notification {bad} (brokers/<default>): RuntimeError: "
        "broker node unreadable"]
