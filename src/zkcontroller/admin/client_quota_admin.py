"""DescribeClientQuotas and AlterClientQuotas on a broker (Kafka 2.8.2's ``ZkAdminManager.describeClientQuotas``
and ``alterClientQuotas``, ZooKeeper mode): read and write the nodes `client_quotas` writes for the config command.

Describe: a filter names at most one component per entity type (``user``, ``client-id``, ``ip``; IP components do
not mix with the others), each matching one name exactly, the default entity, or any named entity of the type;
``strict`` leaves out entities with a type the filter does not name. Only nodes with a quota key are answered, with
their values as doubles. A filter Kafka refuses fails the whole request (INVALID_REQUEST, UNSUPPORTED_VERSION for
another entity type, UNKNOWN_SERVER_ERROR without a message for an unknown match type).

Alter: each entry on its own (its error does not stop the others): the entity parsed and sanitized, each op
applied in order to the stored configs (a LONG or INT key must hold a whole number, a DOUBLE is stored as Java
prints it), then AdminZkClient's ``changeConfigs`` with its validation, unless ``validate_only``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from zkcontroller.admin.admin_manager_log import AdminManagerLog
from zkcontroller.admin.client_quotas import is_valid_ip_entity
from zkcontroller.protocol.control_requests import Errors
from zkcontroller.protocol.wire.client_quotas import (
    CLIENT_ID,
    IP,
    MATCH_DEFAULT,
    MATCH_EXACT,
    MATCH_SPECIFIED,
    USER,
    AlteredQuota,
    AlterQuotasQuery,
    DescribedQuotas,
    DescribeQuotasQuery,
    FilterComponent,
    QuotaEntity,
    QuotaOp,
)
from zkcontroller.zk import paths
from zkcontroller.zk.config_values import ConfigValueError
from zkcontroller.zk.java_properties import properties_order
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.log_config_def import java_double, java_parse_double
from zkcontroller.zk.quota_configs import (
    CLIENT_CONFIG_TYPES,
    IP_CONFIG_TYPES,
    USER_CONFIG_TYPES,
    desanitize,
    is_client_or_user_quota_config,
    sanitize,
    validate_quota_entity,
)

UNSUPPORTED_VERSION = 35
LONG_MAX, LONG_MIN, INT_MAX, INT_MIN = 2**63 - 1, -(2**63), 2**31 - 1, -(2**31)
_ANY = object()
"""A component's match for "any named entity" (Kafka's null ``match``); None is the default entity."""


class QuotaApiError(Exception):
    """An ``ApiException`` (its code and message), or, with UNKNOWN_SERVER_ERROR, any other failure (no message,
    as ``ApiError.fromThrowable`` gives)."""

    def __init__(self, error: int, message: str | None) -> None:
        super().__init__(message)
        self.error, self.message = error, message


def _invalid(message: str) -> QuotaApiError:
    return QuotaApiError(Errors.INVALID_REQUEST, message)


def _unknown() -> QuotaApiError:
    return QuotaApiError(Errors.UNKNOWN_SERVER_ERROR, None)


def _sanitize_name(name: str | None) -> str:
    return paths.DEFAULT_ENTITY if name is None else sanitize(name)


def _desanitize_name(name: str) -> str | None:
    if name == paths.DEFAULT_ENTITY:
        return None
    try:
        return desanitize(name)
    except ValueError:
        raise _unknown() from None


# ---------------------------------------------------------------------- describe

async def describe_client_quotas(zk: KafkaZkClient, query: DescribeQuotasQuery, log: AdminManagerLog,
                                 ) -> DescribedQuotas:
    """The whole answer; a refused filter or a failed read is the request's error (``log``: the broker's
    ZkAdminManager logger)."""
    try:
        entries = await _describe(zk, query)
    except QuotaApiError as e:
        return DescribedQuotas(None, e.error, e.message)
    except Exception as e:  # a ZooKeeper failure, a node Kafka cannot read: handleError's UNKNOWN_SERVER_ERROR
        log.error("Error describing client quotas: %s", e)
        return DescribedQuotas(None, Errors.UNKNOWN_SERVER_ERROR, None)
    return DescribedQuotas(tuple(entries))


def _match(component: FilterComponent) -> object:
    """``DescribeClientQuotasRequest.filter``'s component: a name, None (default) or `_ANY`."""
    if component.match_type == MATCH_EXACT:
        if component.match is None:  # ofEntity's requireNonNull
            raise _unknown()
        return component.match
    if component.match_type == MATCH_DEFAULT:
        return None
    if component.match_type == MATCH_SPECIFIED:
        return _ANY
    raise _unknown()  # IllegalArgumentException("Unexpected match type: ...")


async def _describe(zk: KafkaZkClient, query: DescribeQuotasQuery
                    ) -> list[tuple[QuotaEntity, tuple[tuple[str, float], ...]]]:
    components: dict[str, object] = {}
    for component in query.components:
        match = _match(component)
        kind = component.entity_type
        if kind in (USER, CLIENT_ID, IP):
            if kind in components:
                label = {USER: "user", CLIENT_ID: "client", IP: "ip"}[kind]
                raise _invalid(f"Duplicate {label} filter component entity type")
            components[kind] = match
        elif kind == "":
            raise _invalid("Unexpected empty filter component entity type")
        else:
            raise QuotaApiError(UNSUPPORTED_VERSION, f"Custom entity type '{kind}' not supported")
    if (USER in components or CLIENT_ID in components) and IP in components:
        raise _invalid("Invalid entity filter component combination, IP filter component should not be used with "
                       "user or clientId filter component.")
    out = []
    if IP not in components:
        out += await _describe_user_client(zk, components, query.strict)
    if USER not in components and CLIENT_ID not in components:
        out += await _describe_ips(zk, components, query.strict)
    return out


async def _configs(zk: KafkaZkClient, entity_type: str, name: str) -> dict[str, str]:
    """``fetchEntityConfig``: Kafka's lenient reading (not JSON: no configs)."""
    return (await zk.get_entity_configs_lenient(entity_type, name))[0]


async def _all_configs(zk: KafkaZkClient, entity_path: str) -> dict[str, dict[str, str]]:
    """``fetchAllEntityConfigs``: each child of ``/config/<entity_path>`` and its configs."""
    parent = paths.config_entity_type_path(entity_path)
    if not await zk.path_exists(parent):
        return {}
    root_type, _, prefix = entity_path.partition("/")
    return {name: await _configs(zk, root_type, f"{prefix}/{name}" if prefix else name)
            for name in await zk.get_children(parent)}


def _values(configs: Mapping[str, str], wanted: Iterable[str]) -> tuple[tuple[str, float], ...]:
    """``fromProps``: each value as Java's ``toDouble`` reads it; one it cannot read fails the request."""
    out = []
    for key in properties_order(k for k in configs if k in set(wanted)):
        value = java_parse_double(configs[key])
        if value is None:  # IllegalStateException("Unexpected client quota configuration value: k -> v")
            raise _unknown()
        out.append((key, value))
    return tuple(out)


async def _describe_user_client(zk: KafkaZkClient, components: Mapping[str, object], strict: bool
                                ) -> list[tuple[QuotaEntity, tuple[tuple[str, float], ...]]]:
    """``handleDescribeClientQuotas``: the user, client and <user, client> nodes the filter can match, read as
    Kafka reads them (one node when the match is exact, every node of the kind otherwise), then matched."""
    user, client = _exact(components, USER), _exact(components, CLIENT_ID)
    exclude_user, exclude_client = strict and USER not in components, strict and CLIENT_ID not in components
    candidates: list[tuple[bool, str | None, bool, str | None, dict[str, str]]] = []
    if user is not _ANY and exclude_client:
        configs = await _configs(zk, paths.ConfigType.USER, _node(user))
        candidates.append((True, _name(user), False, None, configs))
    elif not exclude_user and client is _ANY:
        for name, configs in (await _all_configs(zk, paths.ConfigType.USER)).items():
            candidates.append((True, _desanitize_name(name), False, None, configs))
    if exclude_user and client is not _ANY:
        configs = await _configs(zk, paths.ConfigType.CLIENT, _node(client))
        candidates.append((False, None, True, _name(client), configs))
    elif user is _ANY and not exclude_client:
        for name, configs in (await _all_configs(zk, paths.ConfigType.CLIENT)).items():
            candidates.append((False, None, True, _desanitize_name(name), configs))
    if user is not _ANY and client is not _ANY:
        configs = await _configs(zk, paths.ConfigType.USER, f"{_node(user)}/clients/{_node(client)}")
        candidates.append((True, _name(user), True, _name(client), configs))
    elif not exclude_user and not exclude_client:
        for user_node in await _all_configs(zk, paths.ConfigType.USER):
            clients = await _all_configs(zk, f"{paths.ConfigType.USER}/{user_node}/{paths.ConfigType.CLIENT}")
            for client_node, configs in clients.items():
                candidates.append((True, _desanitize_name(user_node), True, _desanitize_name(client_node), configs))

    def matches(kind: str, has: bool, name: str | None) -> bool:
        if kind in components:
            wanted = components[kind]
            return has if wanted is _ANY else has and name == wanted
        return not has or not strict

    out = []
    for has_user, user_name, has_client, client_name, configs in candidates:
        values = _values(configs, CLIENT_CONFIG_TYPES)
        if values and matches(USER, has_user, user_name) and matches(CLIENT_ID, has_client, client_name):
            entity = ((USER, user_name),) * has_user + ((CLIENT_ID, client_name),) * has_client
            out.append((entity, values))
    return out


def _exact(components: Mapping[str, object], kind: str) -> object:
    """The name (None: the default) a component matches exactly, else `_ANY` (Kafka's ``wantExact``)."""
    return components.get(kind, _ANY)


def _name(name: object) -> str | None:
    assert name is None or isinstance(name, str)
    return name


def _node(name: object) -> str:
    return _sanitize_name(_name(name))


async def _describe_ips(zk: KafkaZkClient, components: Mapping[str, object], strict: bool
                        ) -> list[tuple[QuotaEntity, tuple[tuple[str, float], ...]]]:
    ip = components.get(IP, _ANY)
    exact = IP in components and ip is not _ANY
    every = (IP in components and ip is _ANY) or (IP not in components and not strict)
    entries: dict[str | None, dict[str, str]] = {}
    if exact:
        entries = {_name(ip): await _configs(zk, paths.ConfigType.IP, _node(ip))}
    elif every:
        entries = {_desanitize_name(n): c for n, c in (await _all_configs(zk, paths.ConfigType.IP)).items()}
    out: list[tuple[QuotaEntity, tuple[tuple[str, float], ...]]] = []
    for name, configs in entries.items():
        values = _values(configs, IP_CONFIG_TYPES)
        if values:
            out.append((((IP, name),), values))
    return out


# ---------------------------------------------------------------------- alter

async def alter_client_quotas(zk: KafkaZkClient, query: AlterQuotasQuery, log: AdminManagerLog,
                              ) -> list[AlteredQuota]:
    """One answer per distinct entity (a repeated one answers once, for its last entry), in request order
    (``log``: the broker's ZkAdminManager logger)."""
    results: dict[frozenset[tuple[str, str | None]], AlteredQuota] = {}
    for entry in query.entries:
        entity = tuple(dict(entry.entity).items())  # a HashMap: a repeated type keeps its last name
        try:
            await _alter_entity(zk, entity, entry.ops, query.validate_only)
            result = AlteredQuota(entity)
        except QuotaApiError as e:
            result = AlteredQuota(entity, e.error, e.message)
        except Exception as e:  # ZooKeeper, a node Kafka cannot read, a value validation refuses
            log.info("Error encountered while updating client quotas: %s", e)
            result = AlteredQuota(entity, Errors.UNKNOWN_SERVER_ERROR, None)
        key = frozenset(entity)
        results.pop(key, None)
        results[key] = result
    return list(results.values())


def _parse_entity(entity: QuotaEntity) -> tuple[str, str, Mapping[str, str]]:
    """``parseAndSanitizeQuotaEntity`` and the match on its parts: the root type, the node's sanitized name and
    the keys (with their types) the entity takes."""
    if not entity:
        raise _invalid("Invalid empty client quota entity")
    parts: dict[str, str] = {}
    for kind, name in entity:
        if kind not in (USER, CLIENT_ID, IP):
            raise _invalid(f"Unhandled client quota entity type: {kind}")
        parts[kind] = _sanitize_name(name)
        if name == "":
            raise _invalid(f"Empty {kind} not supported")
    user, client, ip = parts.get(USER), parts.get(CLIENT_ID), parts.get(IP)
    if ip is not None and user is None and client is None:
        if not is_valid_ip_entity(ip):
            raise _invalid(f"{ip} is not a valid IP or resolvable host.")
        return paths.ConfigType.IP, ip, IP_CONFIG_TYPES
    if ip is not None:
        raise _invalid("Invalid quota entity combination, IP entity should not be used with user/client ID entity.")
    if user is not None and client is not None:
        return paths.ConfigType.USER, f"{user}/clients/{client}", USER_CONFIG_TYPES
    if user is not None:
        return paths.ConfigType.USER, user, USER_CONFIG_TYPES
    assert client is not None
    return paths.ConfigType.CLIENT, client, CLIENT_CONFIG_TYPES


def _to_whole(value: float, low: int, high: int) -> int:
    """Scala's ``Double.toLong``/``toInt``: truncated toward zero, NaN 0, saturated at the type's bounds."""
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return high if value > 0 else low
    return max(low, min(high, int(value)))


async def _alter_entity(zk: KafkaZkClient, entity: QuotaEntity, ops: Iterable[QuotaOp], validate_only: bool) -> None:
    root_type, name, keys = _parse_entity(entity)
    configs = await _configs(zk, root_type, name)
    for op in ops:
        if op.value is None:
            configs.pop(op.key, None)
            continue
        kind = keys.get(op.key)
        if kind is None:
            raise _invalid(f"Invalid configuration key {op.key}")
        if kind == "DOUBLE":
            configs[op.key] = java_double(op.value)
        elif kind in ("LONG", "INT"):
            whole = _to_whole(op.value + 1e-6, *((LONG_MIN, LONG_MAX) if kind == "LONG" else (INT_MIN, INT_MAX)))
            if abs(float(whole) - op.value) > 1e-6:
                raise _invalid(f"Configuration {op.key} must be a {kind} value")
            configs[op.key] = str(whole)
        else:  # a SCRAM credential: set through AlterUserScramCredentials, not here
            raise _unknown()
    if validate_only:
        return
    try:
        validate_quota_entity(root_type, name, configs, properties_order(configs))
    except ConfigValueError:
        raise _unknown() from None  # a ConfigException or IllegalArgumentException: not an ApiException
    await zk.set_or_create_entity_configs(root_type, name, configs)
    await zk.create_config_change_notification(f"{root_type}/{name}")


__all__ = ["QuotaApiError", "alter_client_quotas", "describe_client_quotas", "is_client_or_user_quota_config"]
