"""The dynamic broker configs the controller uses (spec §9.15): Kafka's ``DynamicBrokerConfig`` for one key.

A broker's effective ``unclean.leader.election.enable`` is its ``/config/brokers/<id>`` value, else the cluster
default ``/config/brokers/<default>``, else the static server config. Kafka keeps this in the broker's
``KafkaConfig`` (``DynamicBrokerConfig.updateBrokerConfig``/``updateDefaultConfig``) and the controller's
``PartitionStateMachine`` reads the log manager's current default config; here the controller keeps it, shared
with its partition state machine, and the config-change family updates it.
"""

from __future__ import annotations

from dataclasses import dataclass

from zkcontroller.zk import config_values
from zkcontroller.zk.znodes import UNCLEAN_LEADER_ELECTION_ENABLE


class InvalidDynamicConfigError(ValueError):
    """A stored dynamic value that ConfigDef would refuse; Kafka drops that key and keeps the others."""


def parse_boolean(key: str, value: str) -> bool:
    """ConfigDef's BOOLEAN (`zkcontroller.zk.config_values.parse_boolean`), raising `InvalidDynamicConfigError`
    with Kafka's ConfigException text. The topic override and the dynamic broker levels are read alike."""
    return config_values.parse_boolean(key, value, InvalidDynamicConfigError)


def parse_unclean_leader_election_enable(configs: dict[str, str]) -> bool | None:
    """The key as `parse_boolean` reads it; None if absent."""
    value = configs.get(UNCLEAN_LEADER_ELECTION_ENABLE)
    return None if value is None else parse_boolean(UNCLEAN_LEADER_ELECTION_ENABLE, value)


@dataclass(slots=True)
class DynamicBrokerConfig:
    """The static value and the two dynamic levels, each None when that level does not set the key."""

    static_unclean_leader_election_enable: bool = False
    default_unclean_leader_election_enable: bool | None = None
    """From ``/config/brokers/<default>``."""
    broker_unclean_leader_election_enable: bool | None = None
    """From ``/config/brokers/<this broker's id>``."""

    @property
    def unclean_leader_election_enable(self) -> bool:
        """Per-broker over cluster default over static: the broker default that a topic override overlays."""
        for value in (self.broker_unclean_leader_election_enable, self.default_unclean_leader_election_enable):
            if value is not None:
                return value
        return self.static_unclean_leader_election_enable
