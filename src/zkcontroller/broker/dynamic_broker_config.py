"""A broker's dynamic broker configs (Kafka 2.8.2's ``DynamicBrokerConfig`` and ``DynamicLogConfig``, ZooKeeper
mode): ``/config/brokers/<default>`` and ``/config/brokers/<this broker's id>``.

Kafka cleans what it reads before using it (``fromPersistentProps``): a known property that is not dynamic is
dropped ("Non-dynamic configs configured in ZooKeeper will be ignored"), as is a per-broker one (``listeners``...)
at the cluster-default level; a value ConfigDef refuses is dropped by ``removeInvalidConfigs`` with "Dynamic
broker|default cluster config contains invalid values in: Set(...), these configs will be ignored". A key Kafka
defines but this project does not know is kept as given (it cannot be checked here). The log-default properties
among what is left (``DynamicLogConfig.ReconfigurableConfigs``) then set the broker's topic defaults:
per-broker over cluster default over server.properties over Kafka's default (`LogDefaults.from_levels`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from zkcontroller.broker.config_helper import BROKER_CONFIG_DEFAULTS, DYNAMIC_BROKER_CONFIGS
from zkcontroller.broker.log_config import BROKER_LOG_PROPERTIES, parse_broker_log_properties
from zkcontroller.zk.log_config_def import parse_config_value

log = logging.getLogger("kafka.server.DynamicBrokerConfig")

PER_BROKER_CONFIGS = frozenset({"listeners", "advertised.listeners"})
"""``DynamicBrokerConfig.PerBrokerConfigs`` among the properties known here."""


def _invalid_reason(name: str, value: str) -> str | None:
    """Why ConfigDef refuses ``value`` for ``name`` (None: accepted, or a key not known here)."""
    try:
        if name in BROKER_LOG_PROPERTIES:
            parse_broker_log_properties({name: value})
        elif name in BROKER_CONFIG_DEFAULTS:
            parse_config_value(name, BROKER_CONFIG_DEFAULTS[name][0], value)
    except ValueError as e:
        return str(e)
    return None


def clean_dynamic_configs(configs: Mapping[str, str], *, per_broker: bool, path: str,
                          report: bool = True) -> dict[str, str]:
    """What Kafka keeps of a ``/config/brokers/...`` node's configs; each dropped group is logged at ERROR when the
    broker takes the node up (``report``), not when it is only read to answer a request."""
    kept = dict(configs)
    source = "broker" if per_broker else "default cluster"

    def drop(names: list[str], message: str) -> None:
        if names:
            for name in names:
                del kept[name]
            if report:
                log.error("%s: Set(%s) (%s)", message, ", ".join(names), path)

    drop(sorted(k for k in kept if k in BROKER_CONFIG_DEFAULTS and k not in DYNAMIC_BROKER_CONFIGS),
         "Non-dynamic configs configured in ZooKeeper will be ignored")
    if not per_broker:
        drop(sorted(k for k in kept if k in PER_BROKER_CONFIGS),
             "Per-broker configs defined at default cluster level will be ignored")
    reasons = {k: r for k, v in kept.items() if (r := _invalid_reason(k, v)) is not None}
    if reasons:
        for name in reasons:
            del kept[name]
    if reasons and report:
        log.error("Dynamic %s config contains invalid values in: Set(%s), these configs will be ignored (%s: %s)",
                  source, ", ".join(sorted(reasons)), path, "; ".join(reasons[k] for k in sorted(reasons)))
    return kept
