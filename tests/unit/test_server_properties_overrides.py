"""``--override`` as kafka-server-start reads it (kafka.Kafka.getPropsFromArgs → CommandLineUtils.parseKeyValueArgs:
split at the first ``=``, nothing trimmed, no value is ``""``), and known configs' values parsed as ConfigDef parses
them (``String.trim`` — every char up to U+0020, and only those — then Java's ``Integer.parseInt``)."""

from __future__ import annotations

import re

import pytest

from zkcontroller.cluster.server_properties import ConfigError, broker_properties, parse_overrides, parse_properties

BASE = "broker.id=3\nzookeeper.connect=zk1:2181\nbroker.rack=r0\n"


@pytest.mark.parametrize(("override", "parsed"), [
    ("a=b", {"a": "b"}), ("a=b=c", {"a": "b=c"}), (" a = b ", {" a ": " b "}), ("a", {"a": ""}), ("a=", {"a": ""}),
    ("=b", {"": "b"}), ("", {"": ""}), ("a=\u00a0b\t", {"a": "\u00a0b\t"}),
])
def test_overrides_are_kept_as_typed(override: str, parsed: dict[str, str]) -> None:
    assert parse_overrides([override]) == parsed


def test_an_override_key_is_not_trimmed() -> None:
    p = broker_properties(parse_properties(BASE), [" broker.id=9", "custom.key= v "])
    assert p.broker_id == 3  # " broker.id" is some other (unknown) key
    assert p.unknown == {" broker.id": "9", "custom.key": " v "}


@pytest.mark.parametrize(("override", "broker_id"), [
    ("broker.id= 9 ", 9), ("broker.id=\t9\n", 9), ("broker.id=\x009\x1f", 9), ("broker.id=+9", 9), ("broker.id=09", 9),
    ("broker.id=\u0669", 9), ("broker.id=2147483647", 2**31 - 1),
])
def test_int_values_are_trimmed_then_parsed_as_java(override: str, broker_id: int) -> None:
    """With id generation off, any id from 0 up is taken (on, the default, ids end at reserved.broker.max.id)."""
    given = [override, "broker.id.generation.enable=false"]
    assert broker_properties(parse_properties(BASE), given).broker_id == broker_id


@pytest.mark.parametrize("value", ["\u00a09", "9\u2003", "1_0", "2147483648", "\U0001d7d7", "9 9", ""])
def test_int_values_java_refuses(value: str) -> None:
    with pytest.raises(ConfigError) as refused:
        broker_properties(parse_properties(BASE), [f"broker.id={value}"])
    assert str(refused.value) == f"Invalid value {value} for configuration broker.id: Not a number of type INT"


def test_string_values_are_trimmed_as_configdef_does() -> None:
    assert broker_properties(parse_properties(BASE), ["broker.rack=\t r1 \n"]).rack == "r1"
    assert broker_properties(parse_properties(BASE), ["broker.rack=\u00a0r1"]).rack == "\u00a0r1"  # not ≤ U+0020
    p = broker_properties(parse_properties(BASE), ["log.dirs= /d/a , /d/b ", "zookeeper.connect= zk2:2181 "])
    assert p.log_dirs == ("/d/a", "/d/b") and p.zookeeper_connect == "zk2:2181"
    with pytest.raises(ConfigError, match=re.escape("Duplicate log directory found: /d/a,/d/a\u00a0")):
        broker_properties(parse_properties(BASE), ["log.dirs=/d/a,/d/a\u00a0,/d/a"])


@pytest.mark.parametrize(("listener", "host", "port"), [
    ("PLAINTEXT://h_1.example-2:9092", "h_1.example-2", 9092), ("PLAINTEXT://[::1]:9092", "::1", 9092),
    ("PLAINTEXT://::1:9092", "::1", 9092), ("plaintext://:9092", "", 9092), ("PLAINTEXT://%x:09", "%x", 9),
])
def test_listeners_parsed_with_kafkas_endpoint_pattern(listener: str, host: str, port: int) -> None:
    p = broker_properties(parse_properties(BASE), [f"listeners={listener}"])
    assert (p.listener.host, p.listener.port) == (host, port)


@pytest.mark.parametrize("listener", ["PLAINTEXT://h o:9092", "PLAINTEXT://h:\u0669\u0660\u0669\u0662",
                                      "PLAINTEXT://h\u00e9:9092", "PLAINTEXT://h:+9092", "PLAINTEXT://h"])
def test_listeners_kafkas_pattern_refuses(listener: str) -> None:
    with pytest.raises(ConfigError, match="Unable to parse"):
        broker_properties(parse_properties(BASE), [f"listeners={listener}"])
