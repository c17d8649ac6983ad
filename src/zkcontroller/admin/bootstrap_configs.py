"""``zkcontroller configs ... --bootstrap-server`` for topics and brokers: Kafka 2.8.2's ConfigCommand AdminClient
path (``describeResourceConfig``, ``alterConfig``) over our wire-protocol admin client. A running broker's
dynamic configs can be changed this way, which the ZooKeeper path refuses (Kafka's rule).

Describe prints ``Dynamic configs for topic t are:`` (``All configs`` with ``--all``) and one
``  key=value sensitive=false synonyms={SOURCE:key=value, ...}`` line per entry, in the Java client's ``HashMap``
order; a topic alters through IncrementalAlterConfigs, a broker (or the broker default) through AlterConfigs
with its whole dynamic set, as Kafka 2.8 does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zkcontroller.admin.admin_client import AdminClient, AdminClientError
from zkcontroller.admin.java_hash_map import hash_map_order
from zkcontroller.protocol.wire.alter_configs import DELETE, SET, AlterResource, ConfigChange
from zkcontroller.protocol.wire.describe_configs import ConfigEntry

TOPIC, BROKER = 2, 4
SOURCES = {0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
           4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG"}
"""``ConfigEntry.ConfigSource`` by its wire id."""


def _resource(kind: str, name: str) -> tuple[int, int]:
    """(resource type, the source a dynamic entry of it has)."""
    if kind == "topics":
        return TOPIC, 1
    return BROKER, 3 if name == "" else 2


async def _entries(admin: AdminClient, kind: str, name: str, synonyms: bool, describe_all: bool
                   ) -> list[ConfigEntry]:
    """getResourceConfig: the resource's entries (only its dynamic ones unless ``describe_all``), in the order
    ``Config``'s HashMap gives them."""
    resource_type, dynamic = _resource(kind, name)
    found = await admin.describe_configs([(resource_type, name)], include_synonyms=synonyms)
    entries = {e.name: e for e in found.get((resource_type, name), [])}
    return [entries[k] for k in hash_map_order(entries) if describe_all or entries[k].source == dynamic]


def _value(value: str | None) -> str:
    return "null" if value is None else value  # Scala's string interpolation of a null


async def describe_lines(admin: AdminClient, kind: str, name: str | None, describe_all: bool) -> list[str]:
    """describeResourceConfig: every topic (listTopics' HashMap order) or every broker and the default when no
    name is given."""
    if name is not None:
        names = [name]
    elif kind == "topics":
        names = hash_map_order(await admin.list_topics(include_internal=True))
    else:
        names = [*(str(b.id) for b in sorted(await admin.live_brokers(), key=lambda b: b.id)), ""]
    lines = []
    for entity in names:
        if kind == "brokers" and entity == "":
            lines.append("Default configs for brokers in the cluster are:")
        else:
            lines.append(f"{'All' if describe_all else 'Dynamic'} configs for {kind[:-1]} {entity} are:")
        for e in await _entries(admin, kind, entity, True, describe_all):
            synonyms = ", ".join(f"{SOURCES.get(s.source, 'UNKNOWN')}:{s.name}={_value(s.value)}" for s in e.synonyms)
            lines.append(f"  {e.name}={_value(e.value)} sensitive={'true' if e.is_sensitive else 'false'} "
                         f"synonyms={{{synonyms}}}")
    return lines


async def alter(admin: AdminClient, kind: str, name: str, add: Mapping[str, str], delete: Sequence[str]) -> str:
    """alterConfig for topics and brokers; the line Kafka prints when done."""
    old = {e.name: e for e in await _entries(admin, kind, name, False, False)}
    invalid = [k for k in delete if k not in old]
    if invalid:
        raise AdminClientError(f"Invalid config(s): {','.join(invalid)}")
    if kind == "topics":
        await admin.incremental_alter_configs([AlterResource(TOPIC, name, (
            *(ConfigChange(k, v, SET) for k, v in add.items()), *(ConfigChange(k, "", DELETE) for k in delete)))])
        return f"Completed updating config for topic {name}."
    merged: dict[str, str | None] = {k: e.value for k, e in old.items()}
    merged.update(add)
    for k in delete:
        merged.pop(k, None)
    sensitive = [k for k, v in merged.items() if v is None]
    if sensitive:
        raise AdminClientError("All sensitive broker config entries must be specified for --alter, missing "
                               f"entries: Set({', '.join(sensitive)})")
    await admin.alter_configs(BROKER, name, merged)
    return ("Completed updating default config for brokers in the cluster." if name == ""
            else f"Completed updating config for broker {name}.")
