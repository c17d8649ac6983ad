"""server.properties' topic defaults (``message.max.bytes``, ``min.insync.replicas``, ``log.retention.*``...):
known keys (no "isn't a known config" warning), refused at load when bad, and kept as given for the broker."""

from __future__ import annotations

import logging

import pytest

from zkcontroller.cluster.server_properties import ConfigError, broker_properties

BASE = {"broker.id": "1", "zookeeper.connect": "localhost:2181"}


def test_topic_defaults_are_known_and_kept_as_given(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        props = broker_properties({**BASE, "min.insync.replicas": "2", "message.max.bytes": "5000",
                                   "log.retention.hours": "1"})
    assert "isn't a known config" not in caplog.text
    assert props.given["min.insync.replicas"] == "2" and props.given["broker.id"] == "1"
    assert props.unknown == {}


@pytest.mark.parametrize(("key", "value", "message"), [
    ("min.insync.replicas", "0", "Value must be at least 1"),
    ("message.max.bytes", "lots", "Not a number of type INT"),
    ("log.preallocate", "maybe", "Expected value to be either true or false"),
])
def test_a_bad_topic_default_is_refused_before_start(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        broker_properties({**BASE, key: value})
