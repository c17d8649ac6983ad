"""The controller's broker-level ``unclean.leader.election.enable``: per-broker over cluster default over static,
each level's value parsed as Kafka's ConfigDef BOOLEAN."""

from __future__ import annotations

import pytest

from zkcontroller.controller.dynamic_config import (
    DynamicBrokerConfig,
    InvalidDynamicConfigError,
    parse_unclean_leader_election_enable,
)

KEY = "unclean.leader.election.enable"


@pytest.mark.parametrize(("static", "default", "broker", "effective"), [
    (False, None, None, False),
    (True, None, None, True),
    (False, True, None, True),
    (True, False, None, False),
    (False, True, False, False),  # the per-broker value overrides the default
    (False, False, True, True),
    (True, None, False, False),
])
def test_precedence(static: bool, default: bool | None, broker: bool | None, effective: bool) -> None:
    assert DynamicBrokerConfig(static, default, broker).unclean_leader_election_enable is effective


@pytest.mark.parametrize(("value", "parsed"), [(" TRUE ", True), ("false", False), ("True", True)])
def test_parsed_as_configdef_boolean(value: str, parsed: bool) -> None:
    assert parse_unclean_leader_election_enable({KEY: value, "other": "x"}) is parsed


def test_absent_and_invalid() -> None:
    assert parse_unclean_leader_election_enable({"leader.replication.throttled.rate": "1"}) is None
    with pytest.raises(InvalidDynamicConfigError, match=f"Invalid value yes for configuration {KEY}: Expected value "
                       "to be either true or false"):
        parse_unclean_leader_election_enable({KEY: "yes"})
