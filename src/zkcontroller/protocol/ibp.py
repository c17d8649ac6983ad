"""``inter.broker.protocol.version``: parsing and everything Kafka 2.8 picks by it (ApiVersion's role).

One parser and one table for the controller, the brokers and the transports, so every place reads the same
value the same way: request versions, topic ids, AlterIsr, feature versioning. Values are Kafka 2.8.2's
(``kafka.api.ApiVersion``): a full version such as ``2.7-IV1``, or a short one (``2.7``, ``2.7.1``) meaning the
newest internal version of that release (``2.7-IV2``), as ``ApiVersion.apply`` maps them. Anything else is
refused, as Kafka refuses it at startup.
"""

from __future__ import annotations

import re
from types import MappingProxyType

KAFKA_IBPS: tuple[str, ...] = (
    "0.8.0", "0.8.1", "0.8.2", "0.9.0",
    "0.10.0-IV0", "0.10.0-IV1", "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0",
    "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2",
    "1.0-IV0", "1.1-IV0",
    "2.0-IV0", "2.0-IV1", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.2-IV0", "2.2-IV1", "2.3-IV0", "2.3-IV1",
    "2.4-IV0", "2.4-IV1", "2.5-IV0", "2.6-IV0", "2.7-IV0", "2.7-IV1", "2.7-IV2", "2.8-IV0", "2.8-IV1",
)
"""Kafka 2.8.2's ``ApiVersion.allVersions``, oldest first: the order is what "at least" compares."""

_RANK: dict[str, int] = {v: i for i, v in enumerate(KAFKA_IBPS)}
_SHORT: dict[str, str] = {re.sub(r"-IV\d+$", "", v): v for v in KAFKA_IBPS}
"""Short version → its newest internal version (later entries overwrite earlier ones)."""

DEFAULT_IBP = KAFKA_IBPS[-1]
ALTER_ISR_MIN_IBP = "2.7-IV2"
"""From here on a leader proposes ISR changes to the controller (AlterIsr) instead of writing ZooKeeper."""
FEATURE_VERSIONING_MIN_IBP = "2.7-IV0"
"""From here on the controller maintains ``/feature`` (KIP-584)."""
TOPIC_ID_MIN_IBP = "2.8-IV0"
"""KafkaConfig.usesTopicId: from here on the controller gives topics without an id a new one (KIP-516)."""

LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA, CONTROLLED_SHUTDOWN, ALTER_ISR, FETCH = 4, 5, 6, 7, 56, 1
"""Api keys of the inter-broker requests whose version the IBP picks."""

_VERSION_RULES: dict[int, tuple[tuple[str, int], ...]] = {
    # ControllerChannelManager.sendLeaderAndIsrRequest
    LEADER_AND_ISR: (("2.8-IV1", 5), ("2.4-IV1", 4), ("2.4-IV0", 3), ("2.2-IV0", 2), ("1.0-IV0", 1),
                     ("0.8.0", 0)),
    # ControllerChannelManager.sendUpdateMetadataRequests
    UPDATE_METADATA: (("2.8-IV1", 7), ("2.4-IV1", 6), ("2.2-IV0", 5), ("1.0-IV0", 4), ("0.10.2-IV0", 3),
                      ("0.10.0-IV1", 2), ("0.9.0", 1), ("0.8.0", 0)),
    # ControllerChannelManager.sendStopReplicaRequests
    STOP_REPLICA: (("2.6-IV0", 3), ("2.4-IV1", 2), ("2.2-IV0", 1), ("0.8.0", 0)),
    # KafkaServer.controlledShutdown
    CONTROLLED_SHUTDOWN: (("2.4-IV1", 3), ("2.2-IV0", 2), ("0.9.0", 1), ("0.8.0", 0)),
    # AlterIsrManager: AlterIsr has only v0 in 2.8 (sent only from ALTER_ISR_MIN_IBP on)
    ALTER_ISR: (("0.8.0", 0),),
    # ReplicaFetcherThread.fetchRequestVersion
    FETCH: (("2.7-IV1", 12), ("2.3-IV1", 11), ("2.1-IV2", 10), ("2.0-IV1", 8), ("1.1-IV0", 7), ("0.11.0-IV1", 5),
            ("0.11.0-IV0", 4), ("0.10.1-IV1", 3), ("0.10.0-IV0", 2), ("0.9.0", 1), ("0.8.0", 0)),
}
"""Kafka 2.8.2's ``if (ibp >= X) v else if ...`` chains, newest first, cited by where each lives."""


def resolve_ibp(value: str) -> str:
    """Kafka's ``ApiVersion.apply``: ``"2.7"``/``"2.7.1"`` → ``"2.7-IV2"``, ``"2.7-IV1"`` → itself.

    Raises ValueError naming the setting: an unknown value would otherwise pick versions no Kafka sends.
    """
    text = value.strip()
    segments = text.split(".")
    key = ".".join(segments[:3] if text.startswith("0.") else segments[:2])
    full = key if key in _RANK else _SHORT.get(key)
    if full is None:
        raise ValueError(f"inter.broker.protocol.version: {value!r} is not a version such as 2.8-IV1 or 2.6 "
                         f"(Kafka 2.8 knows {KAFKA_IBPS[0]} to {KAFKA_IBPS[-1]})")
    return full


def parse_ibp(value: str) -> tuple[tuple[int, ...], int]:
    """``"2.7-IV2"`` → ((2, 7), 2): a comparable form of the resolved version. Raises ValueError naming the value."""
    full = resolve_ibp(value)
    numbers, _, iv = full.partition("-IV")
    return tuple(int(n) for n in numbers.split(".")), int(iv or 0)


def ibp_at_least(value: str, minimum: str) -> bool:
    """Kafka's ``interBrokerProtocolVersion >= minimum`` (by position in `KAFKA_IBPS`, as ApiVersion's ids)."""
    return _RANK[resolve_ibp(value)] >= _RANK[resolve_ibp(minimum)]


def _versions_at(full: str) -> dict[int, int]:
    rank = _RANK[full]
    return {api: next(v for minimum, v in rules if rank >= _RANK[minimum]) for api, rules in _VERSION_RULES.items()}


IBP_REQUEST_VERSIONS: MappingProxyType[str, MappingProxyType[int, int]] = MappingProxyType(
    {full: MappingProxyType(_versions_at(full)) for full in KAFKA_IBPS})
"""Full IBP → api key → the version a 2.8 controller or broker sends at that IBP."""


def request_versions(value: str) -> dict[int, int]:
    """The inter-broker request versions for an IBP (short or full): api key → version."""
    return dict(IBP_REQUEST_VERSIONS[resolve_ibp(value)])


def broker_registration_version(value: str) -> int:
    """The ``/brokers/ids/<id>`` JSON version a broker writes (ZkData's ``BrokerInfo.apply``): 5 (with
    features) from 2.7-IV0, 4 from 0.10.0-IV1, else 2, so brokers of an older IBP can still read it."""
    return 5 if ibp_at_least(value, FEATURE_VERSIONING_MIN_IBP) else 4 if ibp_at_least(value, "0.10.0-IV1") else 2


def alter_isr_enabled(value: str) -> bool:
    """Kafka's ``isAlterIsrSupported``: leaders send AlterIsr, so only the controller writes partition states."""
    return ibp_at_least(value, ALTER_ISR_MIN_IBP)


def uses_topic_ids(value: str) -> bool:
    """Kafka's ``KafkaConfig.usesTopicId``: the controller creates topic ids (and writes them to ZooKeeper)."""
    return ibp_at_least(value, TOPIC_ID_MIN_IBP)
