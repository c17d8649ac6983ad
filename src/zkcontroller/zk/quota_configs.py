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

import unicodedata
from collections.abc import Iterable, Mapping

from zkcontroller.zk.config_values import ConfigValueError
from zkcontroller.zk.java_text import IllegalArgumentException, java_utf8_decode
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


_ILLEGAL_HEX = "URLDecoder: Illegal hex characters in escape (%) pattern - "


def _java_hex_digit(char: str) -> int:
    """``Character.digit(char, 16)``: ASCII and full-width Latin letters a-f, and every BMP decimal digit."""
    code = ord(char)
    if char in "abcdefABCDEF":
        return int(char, 16)
    if 0xFF21 <= code <= 0xFF26 or 0xFF41 <= code <= 0xFF46:  # full-width A-F, a-f
        return 10 + (code - 0xFF21) % 0x20
    return unicodedata.decimal(char, -1) if code <= 0xFFFF else -1


def _escaped_byte(pair: str) -> int:
    """``Integer.parseInt(s, i + 1, i + 3, 16)`` of an escape's two chars, as ``URLDecoder`` reads it (a sign is
    taken: ``%+1`` is byte 1), with URLDecoder's message where it throws."""
    negative = pair[0] == "-"
    start = 1 if pair[0] in "+-" else 0
    value = 0
    for index in range(start, 2):
        digit = _java_hex_digit(pair[index])
        if digit < 0:
            raise IllegalArgumentException(f'{_ILLEGAL_HEX}Error at index {index} in: "{pair}"')
        value = value * 16 + digit
    if negative and value:
        raise IllegalArgumentException(f"{_ILLEGAL_HEX}negative value")
    return value


def desanitize(name: str) -> str:
    """``Sanitizer.desanitize``: ``URLDecoder.decode`` in UTF-8 (Java 11+), over UTF-16 chars as Java counts them:
    ``+`` is a space, each run of ``%XX`` escapes is bytes decoded as Java decodes them (`java_utf8_decode`), and a
    broken escape raises URLDecoder's ``IllegalArgumentException`` with its message (which Kafka's listener logs
    for a notification naming it)."""
    if "%" not in name:
        return name.replace("+", " ")
    units = name.encode("utf-16-le", "surrogatepass")
    chars = [units[i:i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(units), 2)]
    out: list[str] = []
    i, count = 0, len(chars)
    while i < count:
        char = chars[i]
        if char != "%":
            out.append(" " if char == "+" else char)
            i += 1
            continue
        run = bytearray()
        while i + 2 < count and chars[i] == "%":
            run.append(_escaped_byte(chars[i + 1] + chars[i + 2]))
            i += 3
        if i < count and chars[i] == "%":
            raise IllegalArgumentException("URLDecoder: Incomplete trailing escape (%) pattern")
        out.append(java_utf8_decode(bytes(run)))
    return "".join(out).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
