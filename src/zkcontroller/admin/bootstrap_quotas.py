"""``zkcontroller configs --entity-type users|clients|ips ... --bootstrap-server``: Kafka 2.8.2's ConfigCommand
AdminClient path for client quotas (``describeQuotaConfigs``, ``alterConfig``'s users/clients/ips cases,
``alterQuotaConfigs``) through DescribeClientQuotas and AlterClientQuotas, which every broker serves from
ZooKeeper (`client_quota_admin`).

Types and names pair by position, as ConfigCommand zips ``entityTypes`` with ``entityNames`` (``--entity-name``
and ``--entity-default`` in command-line order): a name is an exact match, ``--entity-default`` the type's default
entity, a type without a name every entity of it (``--describe`` only; the filter is strict, Kafka's
``containsOnly``). Describe prints ``Quota configs for user-principal 'u', client-id 'c' are k=v, ...`` per entity,
values as Java's ``Double.toString``, in the order the Java client's ``HashMap``s give them.

What Kafka's tool does that these brokers cannot: SCRAM credentials go through AlterUserScramCredentials and
DescribeUserScramCredentials, which they do not serve, so a SCRAM key is refused here with that reason (use
``--zookeeper``) and a user's describe lists its quotas only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from zkcontroller.admin.admin_client import AdminClient
from zkcontroller.admin.client_quotas import CLIENTS, IPS, USERS, QuotaConfigsError
from zkcontroller.admin.java_hash_map import hash_map_order
from zkcontroller.java_double import java_double
from zkcontroller.java_hash import hash_map_spread, java_string_hash, scala_immutable_hash_set_order
from zkcontroller.protocol.wire.client_quotas import (
    CLIENT_ID,
    IP,
    MATCH_DEFAULT,
    MATCH_EXACT,
    MATCH_SPECIFIED,
    USER,
    FilterComponent,
    QuotaAlteration,
    QuotaEntity,
    QuotaOp,
)
from zkcontroller.scala_sets import immutable_set, map_key_set
from zkcontroller.zk.java_properties import properties_order
from zkcontroller.zk.log_config_def import java_parse_double
from zkcontroller.zk.quota_configs import IP_CONNECTION_RATE, SCRAM_MECHANISMS, is_client_or_user_quota_config

WIRE_TYPES = {USERS: USER, CLIENTS: CLIENT_ID, IPS: IP}
"""ConfigCommand's entity types as ``ClientQuotaEntity``'s."""
_LABELS = ((USER, "user-principal"), (CLIENT_ID, "client-id"), (IP, "ip"))

SCRAM_REFUSED = ("SCRAM credentials are set through AlterUserScramCredentials, which these brokers do not serve: "
                 "use --zookeeper for {keys}")


def _int32(n: int) -> int:
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n


def _entity_hash(entity: QuotaEntity) -> int:
    """``ClientQuotaEntity.hashCode``: ``Objects.hash(entries)``, the entries a ``HashMap<String, String>``."""
    entries = sum(java_string_hash(t) ^ (0 if n is None else java_string_hash(n)) for t, n in dict(entity).items())
    return _int32(31 + entries)


def java_hash_map_order(items: Sequence[QuotaEntity], capacity: int) -> list[QuotaEntity]:
    """The iteration order of a ``new HashMap<>(capacity)`` of entities put in this order: by bucket of the last
    table, a chain in insertion order (a resize keeps each chain's order). A chain of more than eight doubles a
    table under 64 slots, as ``treeifyBin``; a tree bin (eight colliding entities in a table of 64) is not
    replayed, as an entity is not ``Comparable`` and Java would order it by identity hash."""
    cap = 1
    while cap < capacity:
        cap <<= 1
    hashes = [hash_map_spread(_entity_hash(e) & 0xFFFFFFFF) for e in items]
    threshold = int(cap * 0.75)
    for size in range(1, len(items) + 1):
        chain = sum(1 for h in hashes[:size - 1] if h & (cap - 1) == hashes[size - 1] & (cap - 1))
        if chain >= 8 and cap < 64:
            cap <<= 1
            threshold = int(cap * 0.75)
        if size > threshold:
            cap <<= 1
            threshold = int(cap * 0.75)
    order = sorted(range(len(items)), key=lambda i: hashes[i] & (cap - 1))
    return [items[i] for i in order]


def _entity_text(entity: QuotaEntity) -> str:
    """describeQuotaConfigs' ``entityStr``: user, then client id, then IP."""
    names = dict(entity)
    parts = []
    for kind, label in _LABELS:
        if kind in names:
            name = names[kind]
            parts.append(f"the default {label}" if name is None else f"{label} '{name}'")
    return ", ".join(parts)


def _components(types: Sequence[str], names: Sequence[str]) -> list[FilterComponent]:
    """getAllClientQuotasConfigs' filter: ``""`` the default entity, a name an exact match, no name any."""
    if len(names) > len(types):
        raise QuotaConfigsError("More entity names specified than entity types")
    out = []
    for i, kind in enumerate(types):
        wire = WIRE_TYPES[kind]
        if i >= len(names):
            out.append(FilterComponent(wire, MATCH_SPECIFIED, None))
        elif names[i] == "":
            out.append(FilterComponent(wire, MATCH_DEFAULT, None))
        else:
            out.append(FilterComponent(wire, MATCH_EXACT, names[i]))
    return out


async def describe_lines(admin: AdminClient, types: Sequence[str], names: Sequence[str]) -> list[str]:
    """describeQuotaConfigs (users and clients: describeClientQuotaAndUserScramCredentialConfigs without the SCRAM
    part)."""
    found = await admin.describe_client_quotas(_components(types, names), strict=True)
    lines = []
    for entity in java_hash_map_order(list(found), len(found)):
        values = dict(found[entity])
        shown = ", ".join(f"{k}={java_double(values[k])}" for k in hash_map_order(values, len(values)))
        lines.append(f"Quota configs for {_entity_text(entity)} are {shown}")
    return lines


def _key_order(keys: Iterable[str], total: int) -> list[str]:
    """The order of some of the keys of Kafka's ``configsToBeAdded`` (an immutable Map of ``total`` keys): its
    ``keys.filterNot`` or ``filter(..).keys``: a Map1–Map4's insertion order, a ``HashMap``'s trie order."""
    return scala_immutable_hash_set_order(keys, java_string_hash) if total > 4 else list(keys)


def check_keys(types: Sequence[str], names: Sequence[str], add: Mapping[str, str], delete: Sequence[str]) -> None:
    """alterConfig's checks of the keys for users, clients and ips, in its words and order; SCRAM keys are
    refused after Kafka's own checks (`SCRAM_REFUSED`)."""
    added = properties_order(add)
    if types[0] == IPS:
        unknown = [k for k in dict.fromkeys([*added, *delete]) if k != IP_CONNECTION_RATE]
        if unknown:
            raise QuotaConfigsError("Only connection quota configs can be added for 'ips' using --bootstrap-server. "
                                    f"Unexpected config names: {','.join(unknown)}")
        return
    # Kafka's sets: ``unknownConfigsToAdd`` is ``configsToBeAdded.keys.filterNot(..)``, a Map's key set (always
    # ``Set(..)``); adding ``scramConfigsToAddMap.keys`` to it (as an ``Iterable``) builds a new immutable Set
    scram_add = [k for k in added if k in SCRAM_MECHANISMS]
    unknown_add = [k for k in added if k not in SCRAM_MECHANISMS and not is_client_or_user_quota_config(k)]
    scram_delete = [k for k in delete if k in SCRAM_MECHANISMS]
    unknown_delete = [k for k in delete if k not in SCRAM_MECHANISMS and not is_client_or_user_quota_config(k)]
    quota_keys = any(map(is_client_or_user_quota_config, [*added, *delete]))
    if types[0] == CLIENTS or len(types) == 2:
        if unknown_add or scram_add:
            raise QuotaConfigsError("Only quota configs can be added for 'clients' using --bootstrap-server. "
                                    "Unexpected config names: " + immutable_set(
                                        [*_key_order(unknown_add, len(added)), *_key_order(scram_add, len(added))],
                                        java_string_hash))
        if unknown_delete or scram_delete:
            raise QuotaConfigsError("Only quota configs can be deleted for 'clients' using --bootstrap-server. "
                                    f"Unexpected config names: ArrayBuffer({', '.join(unknown_delete + scram_delete)})")
        return
    if unknown_add:
        raise QuotaConfigsError("Only quota and SCRAM credential configs can be added for 'users' using "
                                "--bootstrap-server. Unexpected config names: "
                                + map_key_set(unknown_add, java_string_hash, len(added)))
    if unknown_delete:
        raise QuotaConfigsError("Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-"
                                f"server. Unexpected config names: ArrayBuffer({', '.join(unknown_delete)})")
    if scram_add or scram_delete:
        if "" in names:
            raise QuotaConfigsError("The use of --entity-default or --user-defaults is not allowed with User SCRAM "
                                    "Credentials using --bootstrap-server.")
        if quota_keys:
            raise QuotaConfigsError("Cannot alter both quota and SCRAM credential configs simultaneously for "
                                    "'users' using --bootstrap-server.")
        raise QuotaConfigsError(SCRAM_REFUSED.format(keys=",".join(dict.fromkeys([*scram_add, *scram_delete]))))


async def alter(admin: AdminClient, types: Sequence[str], names: Sequence[str], add: Mapping[str, str],
                delete: Sequence[str]) -> str:
    """alterConfig for users, clients (or a user's client) and ips; the line Kafka prints when done."""
    if len(types) != len(names):  # processCommand, before any call
        raise QuotaConfigsError("An entity name must be specified for every entity type")
    check_keys(types, names, add, delete)
    found = await admin.describe_client_quotas(_components(types, names), strict=True)
    old = dict(next(iter(found.values()), ()))  # getClientQuotasConfig: the first entity's (at most one)
    invalid = [k for k in delete if k not in old]
    if invalid:
        raise QuotaConfigsError(f"Invalid config(s): {','.join(invalid)}")
    ops = []
    for key in properties_order(add):
        value = java_parse_double(add[key])
        if value is None:
            raise QuotaConfigsError(f"Cannot parse quota configuration value for {key}: {add[key]}")
        ops.append(QuotaOp(key, value))
    ops.extend(QuotaOp(k, None) for k in delete)
    entity = tuple((WIRE_TYPES[t], n or None) for t, n in zip(types, names, strict=True))
    await admin.alter_client_quotas([QuotaAlteration(entity, tuple(ops))])
    if names[0]:
        return f"Completed updating config for {types[0][:-1]} {names[0]}."
    return f"Completed updating default config for {types[0]} in the cluster."
