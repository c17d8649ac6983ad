"""Client quota configs as Kafka 2.8 defines them (``QuotaConfigs``, ``DynamicConfig.Client/User/Ip``) and the
names of the entities they are stored under (``Sanitizer``).

It sits in the zk layer because three layers read it alike: the config command validates what it writes to
``/config/users|clients|ips/...``, a broker's AlterClientQuotas does the same from the wire, and every broker's
`broker.client_quota_manager` parses what it reads back.

User principals and client ids are stored URL-encoded (``Sanitizer.sanitize``: Java's ``URLEncoder`` in UTF-8,
then ``*`` as ``%2A`` and a space as ``%20``), so ``User:alice`` is ``User%3Aalice``; ``<default>`` is the
default entity of its type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import unquote_to_bytes

from zkcontroller.zk.config_values import ConfigValueError
from zkcontroller.zk.log_config_def import parse_config_value

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
IP_CONNECTION_RATE = "connection_creation_rate"
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
"""``ScramMechanism.mechanismNames``: a user's SCRAM credentials are stored next to its quotas."""

CLIENT_CONFIG_TYPES: dict[str, str] = {
    PRODUCER_BYTE_RATE: "LONG", CONSUMER_BYTE_RATE: "LONG", REQUEST_PERCENTAGE: "DOUBLE",
    CONTROLLER_MUTATION_RATE: "DOUBLE",
}
"""``QuotaConfigs.clientConfigs``, in definition order (ConfigDef parses, and fails, in that order); none has a
validator beyond its type (a negative rate is accepted, as in Kafka)."""
USER_CONFIG_TYPES: dict[str, str] = {**dict.fromkeys(SCRAM_MECHANISMS, "STRING"), **CLIENT_CONFIG_TYPES}
"""``QuotaConfigs.userConfigs``: the SCRAM credentials, then the quotas."""
IP_CONFIG_TYPES: dict[str, str] = {IP_CONNECTION_RATE: "INT"}
"""``QuotaConfigs.ipConfigs`` (``atLeast(0)``)."""


class QuotaConfigError(ConfigValueError):
    """``DynamicConfig.validate``'s failure: an unknown key (IllegalArgumentException) or a value ConfigDef
    refuses (ConfigException)."""


def is_client_or_user_quota_config(name: str) -> bool:
    """``QuotaConfigs.isClientOrUserConfig``."""
    return name in CLIENT_CONFIG_TYPES


def validate(types: Mapping[str, str], configs: Mapping[str, str], key_order: Iterable[str] | None = None) -> None:
    """``DynamicConfig.validate`` with custom properties refused: unknown keys first ("requirement failed:
    Unknown Dynamic Configuration: Set(k)."; ``key_order`` is the order Kafka's Properties gives them), then each
    known key's value, in definition order, as its type."""
    unknown = [k for k in (key_order if key_order is not None else configs) if k not in types]
    if unknown:
        raise QuotaConfigError(f"requirement failed: Unknown Dynamic Configuration: Set({', '.join(unknown)}).")
    for name, kind in types.items():
        if name not in configs:
            continue
        value = parse_config_value(name, kind, configs[name])  # TopicConfigError, a ConfigValueError
        if kind == "INT" and isinstance(value, int) and value < 0:  # the IP rate's atLeast(0)
            raise QuotaConfigError(f"Invalid value {value} for configuration {name}: Value must be at least 0")


def validate_quota_entity(root_type: str, full_sanitized_name: str, configs: Mapping[str, str],
                          key_order: Iterable[str] | None = None) -> None:
    """``AdminZkClient.changeClientIdConfig`` / ``changeUserOrUserClientIdConfig`` / ``changeIpConfig``
    validation: a user's own node takes the user configs (SCRAM too); the default user and a ``<user, client>``
    node take the client configs, as a client does. A `ConfigValueError` names what is wrong."""
    if root_type == "users" and full_sanitized_name != "<default>" and "/clients" not in full_sanitized_name:
        types = USER_CONFIG_TYPES
    elif root_type == "ips":
        types = IP_CONFIG_TYPES
    else:
        types = CLIENT_CONFIG_TYPES
    validate(types, configs, key_order)


# ---------------------------------------------------------------------- Sanitizer

_URL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
"""What ``URLEncoder.encode`` leaves as it is (besides ``*``, which ``sanitize`` then encodes, and the space)."""


def sanitize(name: str) -> str:
    """``Sanitizer.sanitize``: URL-encoded UTF-8 with ``%2A`` for ``*`` and ``%20`` for a space (a lone surrogate
    encodes as ``?``, as Java's encoder writes it)."""
    out: list[str] = []
    for ch in name:
        if ch in _URL_SAFE:
            out.append(ch)
        elif ch == " ":
            out.append("%20")
        else:
            data = ch.encode("utf-8", errors="replace") if not 0xD800 <= ord(ch) <= 0xDFFF else b"?"
            out.append("".join(f"%{b:02X}" for b in data))
    return "".join(out)


def desanitize(name: str) -> str:
    """``Sanitizer.desanitize`` (``URLDecoder.decode`` in UTF-8): ``+`` is a space, ``%XX`` a byte; a ``%`` not
    followed by two hex digits raises ValueError with URLDecoder's message. Bytes that are not UTF-8 decode to
    U+FFFD, as Java's decoder replaces them."""
    i = 0
    while (i := name.find("%", i)) >= 0:
        if len(name) - i < 3:
            raise ValueError("URLDecoder: Incomplete trailing escape (%) pattern")
        if not all(c in "0123456789abcdefABCDEF" for c in name[i + 1:i + 3]):
            raise ValueError("URLDecoder: Illegal hex characters in escape (%) pattern")
        i += 3
    return unquote_to_bytes(name.replace("+", " ")).decode("utf-8", errors="replace")
