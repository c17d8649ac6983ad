"""ConfigDef's BOOLEAN, parsed once (`zkcontroller.zk.config_values`) and read alike by the controller, the admin
tools and the server.properties loader: Java's ``trim`` (chars up to U+0020, not Unicode whitespace), then
``equalsIgnoreCase`` against true/false, each caller raising its own error class with Kafka's message."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from zkcontroller.admin.configs import validate_broker_configs
from zkcontroller.admin.errors import InvalidConfigError
from zkcontroller.admin.topic_rules import validate_topic_configs
from zkcontroller.cluster.server_properties import ConfigError, broker_properties
from zkcontroller.controller.dynamic_config import InvalidDynamicConfigError, parse_unclean_leader_election_enable
from zkcontroller.zk.config_values import ConfigValueError, java_equals_ignore_case, parse_boolean

KEY = "unclean.leader.election.enable"
MESSAGE = "Expected value to be either true or false"

# (value, what Kafka's ConfigDef.parseType makes of it: True/False, or None for a ConfigException)
CASES = [
    ("true", True), ("FALSE", False), (" TrUe\t", True), ("\nfalse\r\n", False),
    ("true\x00", True),  # Java's trim strips every control char, NUL included
    ("\x1ffalse\x0b", False),
    ("\u00a0true", None),  # NO-BREAK SPACE is Unicode whitespace but above U+0020: Java keeps it
    ("true\u2003", None),
    ("fal\u017fe", False),  # LONG S upper-cases to S, so Java's equalsIgnoreCase matches "false"
    ("yes", None), ("", None), ("1", None), ("tru", None), ("truee", None),
]


@pytest.mark.parametrize(("value", "expected"), CASES)
def test_parse_boolean_is_configdef_boolean(value: str, expected: bool | None) -> None:
    if expected is None:
        with pytest.raises(ConfigValueError) as e:
            parse_boolean(KEY, value)
        assert str(e.value) == f"Invalid value {value} for configuration {KEY}: {MESSAGE}"
    else:
        assert parse_boolean(KEY, value) is expected


def test_caller_chooses_the_error_class() -> None:
    with pytest.raises(InvalidConfigError, match=f"^Invalid value  maybe  for configuration k: {MESSAGE}$"):
        parse_boolean("k", " maybe ", InvalidConfigError)


def test_java_equals_ignore_case() -> None:
    assert java_equals_ignore_case("\u212a", "k")  # KELVIN SIGN lower-cases to k
    assert not java_equals_ignore_case("stra\u00dfe", "STRASSE")  # no one-to-many case mapping in Java's chars
    assert not java_equals_ignore_case("true", "tru")


def _dynamic(value: str) -> bool | None:
    return parse_unclean_leader_election_enable({KEY: value})


def _server_properties(value: str) -> bool | None:
    props = {"broker.id": "1", "zookeeper.connect": "zk:2181", KEY: value}
    return broker_properties(props).controller.unclean_leader_election_enable


def _broker_configs(value: str) -> bool | None:
    validate_broker_configs({KEY: value})
    return None


def _topic_configs(value: str) -> bool | None:
    validate_topic_configs({KEY: value})
    return None


CALLERS: list[tuple[Callable[[str], bool | None], type[Exception]]] = [
    (_dynamic, InvalidDynamicConfigError),
    (_server_properties, ConfigError),
    (_broker_configs, InvalidConfigError),
    (_topic_configs, InvalidConfigError),
]


@pytest.mark.parametrize(("caller", "error"), CALLERS, ids=["dynamic", "server.properties", "configs", "topics"])
@pytest.mark.parametrize(("value", "expected"), CASES)
def test_every_caller_agrees(caller: Callable[[str], bool | None], error: type[Exception], value: str,
                             expected: bool | None) -> None:
    if expected is None:
        with pytest.raises(error, match=f"^Invalid value .* for configuration {KEY}: {MESSAGE}$"):
            caller(value)
    else:
        assert caller(value) in (expected, None)
