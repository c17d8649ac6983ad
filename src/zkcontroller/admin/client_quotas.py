"""``zkcontroller configs --entity-type users|clients|ips``: Kafka 2.8's ``kafka-configs.sh --zookeeper`` for
client quotas (ConfigCommand's ``parseClientQuotaEntity``, ``ConfigEntity.getAllEntities``,
``preProcessScramCredentials``; AdminZkClient's ``changeClientIdConfig``, ``changeUserOrUserClientIdConfig``,
``changeIpConfig``).

An entity is a user (``/config/users/<user>``), a client id (``/config/clients/<id>``), a user's client id
(``/config/users/<user>/clients/<id>``) or an IP (``/config/ips/<ip>``); users and client ids are stored
URL-encoded (`quota_configs.sanitize`) and ``<default>`` is the default of its type. Each write replaces the
node with ``{"version":1,"config":{...}}`` and adds the notification ``{"version":2,"entity_path":
"users/<user>/clients/<id>"}`` that brokers follow (`broker.client_quota_manager`).

A user's ``SCRAM-SHA-256``/``SCRAM-SHA-512`` value is ``[iterations=N,]password=P`` and is stored, as Kafka
stores it, as a salted credential (``salt=...,stored_key=...,server_key=...,iterations=N``); the brokers here
do not authenticate with it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import ipaddress
import re
import secrets
import socket
from dataclasses import dataclass

from zkcontroller.admin.errors import AdminError, AdminOperationError
from zkcontroller.zk import paths
from zkcontroller.zk.config_values import ConfigValueError
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.java_properties import properties_order
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.quota_configs import SCRAM_MECHANISMS, desanitize, sanitize, validate_quota_entity

USERS, CLIENTS, IPS = paths.ConfigType.USER, paths.ConfigType.CLIENT, paths.ConfigType.IP
QUOTA_ENTITY_TYPES = (USERS, CLIENTS, IPS)
DEFAULT_SCRAM_ITERATIONS = 4096
SCRAM_MIN_ITERATIONS = 4096


class QuotaConfigsError(AdminError):
    """What ConfigCommand prints for a refused quota alteration (its IllegalArgumentException's message)."""


@dataclass(frozen=True)
class Entity:
    """ConfigCommand's ``Entity``: a type and its sanitized name (None: every entity of the type)."""

    entity_type: str
    sanitized_name: str | None

    @property
    def entity_path(self) -> str:
        return self.entity_type if self.sanitized_name is None else f"{self.entity_type}/{self.sanitized_name}"

    def __str__(self) -> str:
        type_name = {USERS: "user-principal", CLIENTS: "client-id"}.get(self.entity_type, self.entity_type)
        if self.sanitized_name is None:
            return self.entity_type
        if self.sanitized_name == paths.DEFAULT_ENTITY:
            return f"default {type_name}"
        shown = self.sanitized_name
        if self.entity_type in (USERS, CLIENTS):
            with contextlib.suppress(ValueError):  # a node name Kafka's decoder throws on: shown as stored
                shown = desanitize(shown)
        return f"{type_name} '{shown}'"


@dataclass(frozen=True)
class ConfigEntity:
    """ConfigCommand's ``ConfigEntity``: a root (users, clients or ips) and, for users, maybe a client."""

    root: Entity
    child: Entity | None = None

    @property
    def full_sanitized_name(self) -> str:
        """The node under ``/config/<root type>/``: ``<user>``, or ``<user>/clients/<id>``."""
        return (self.root.sanitized_name or "") + (f"/{self.child.entity_path}" if self.child else "")

    def __str__(self) -> str:
        return str(self.root) + (f", {self.child}" if self.child else "")


def parse_quota_entity(types: list[str], names: list[str], alter: bool) -> ConfigEntity:
    """``parseClientQuotaEntity`` (users, clients or the pair) and ``parseEntity`` (ips). ``names`` holds
    ``--entity-name`` values and ``""`` for each ``--entity-default``, in command-line order; with both types the
    users' comes first whichever order they were typed in (when both names are given, they swap with it)."""
    if types[0] == IPS:
        name = names[0] if names else None
        return ConfigEntity(Entity(IPS, paths.DEFAULT_ENTITY if name == "" else name))
    if alter and len(names) != len(types):
        raise QuotaConfigsError("--entity-name or --entity-default must be specified with each --entity-type for "
                                "--alter")
    reverse = len(types) == 2 and types[0] == CLIENTS
    ordered_types = list(reversed(types)) if reverse else types
    ordered_names = iter(list(reversed(names)) if reverse and len(names) == 2 else names)
    entities = []
    for entity_type in ordered_types:
        name = next(ordered_names, None)
        entities.append(Entity(entity_type, None if name is None else
                               paths.DEFAULT_ENTITY if name == "" else sanitize(name)))
    return ConfigEntity(entities[0], entities[1] if len(entities) > 1 else None)


def is_valid_ip_entity(ip: str) -> bool:
    """``DynamicConfig.Ip.isValidIpEntity``: ``<default>``, an address, or a host name that resolves (Kafka's
    ``InetAddress.getByName``)."""
    if ip == paths.DEFAULT_ENTITY:
        return True
    try:
        ipaddress.ip_address(ip)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(ip, None)
    except (OSError, UnicodeError):
        return False
    return True


# ---------------------------------------------------------------------- SCRAM credentials

_SCRAM_VALUE = re.compile(r"(?:iterations=([0-9]*),)?password=(.*)", re.DOTALL)


def scram_credential(mechanism: str, value: str) -> str:
    """``preProcessScramCredentials`` for one mechanism: ``[iterations=N,]password=P`` to the stored credential
    (``ScramFormatter.generateCredential``: a random salt, PBKDF2 of the password, the client key's hash and the
    server key), with Kafka's refusals."""
    found = _SCRAM_VALUE.fullmatch(value)
    if found is None:
        raise QuotaConfigsError(f"Invalid credential property {mechanism.replace('-', '_')}={value}")
    try:
        iterations = int(found[1]) if found[1] is not None else DEFAULT_SCRAM_ITERATIONS
    except ValueError:
        raise QuotaConfigsError(f'For input string: "{found[1]}"') from None
    if iterations >= 2**31:
        raise QuotaConfigsError(f'For input string: "{found[1]}"')
    if iterations < SCRAM_MIN_ITERATIONS:
        raise QuotaConfigsError(f"Iterations {iterations} is less than the minimum {SCRAM_MIN_ITERATIONS} required "
                                f"for {mechanism.replace('-', '_')}")
    digest = "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"
    salt = _base36(secrets.randbits(130)).encode()  # secureRandomString: a BigInteger(130) in radix 36
    salted = hashlib.pbkdf2_hmac(digest, found[2].encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    stored_key = hashlib.new(digest, client_key).digest()
    server_key = hmac.new(salted, b"Server Key", digest).digest()

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return f"salt={b64(salt)},stored_key={b64(stored_key)},server_key={b64(server_key)},iterations={iterations}"


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


# ---------------------------------------------------------------------- alter and describe

async def alter_quota_config(zk: KafkaZkClient, entity: ConfigEntity, add: dict[str, str], delete: list[str]
                             ) -> dict[str, str]:
    """``alterConfigWithZk`` for users, clients and ips: SCRAM passwords made credentials (users), deletions of
    absent keys refused, the merged configs validated as AdminZkClient's ``changeConfigs`` does, then the node and
    its notification written. Returns the new configs."""
    root_type, name = entity.root.entity_type, entity.full_sanitized_name
    if root_type == USERS:
        add = {k: scram_credential(k, v) if k in SCRAM_MECHANISMS else v for k, v in add.items()}
    current = await zk.get_entity_configs(root_type, name)
    missing = [k for k in delete if k not in current]
    if missing:
        raise QuotaConfigsError(f"Invalid config(s): {','.join(missing)}")
    updated = {**current, **add}
    for key in delete:
        updated.pop(key, None)
    await change_quota_config(zk, root_type, name, updated)
    return updated


async def change_quota_config(zk: KafkaZkClient, root_type: str, full_sanitized_name: str,
                              configs: dict[str, str]) -> None:
    """AdminZkClient's ``changeConfigs`` for a quota entity: validated (an IP must also be an address or a host
    that resolves), then ``setOrCreateEntityConfigs`` and ``createConfigChangeNotification``."""
    if root_type == IPS and not is_valid_ip_entity(full_sanitized_name):
        raise AdminOperationError(f"{full_sanitized_name} is not a valid IP or resolvable host.")
    try:  # the unknown keys named in the order Kafka's Properties iterates them
        validate_quota_entity(root_type, full_sanitized_name, configs, properties_order(configs))
    except ConfigValueError as e:
        raise QuotaConfigsError(str(e)) from None
    await zk.set_or_create_entity_configs(root_type, full_sanitized_name, configs)
    await zk.create_config_change_notification(f"{root_type}/{full_sanitized_name}")


async def all_entities(zk: KafkaZkClient, entity: ConfigEntity) -> list[ConfigEntity]:
    """``ConfigEntity.getAllEntities``: the entity itself when named, else every one with a config node (for
    ``users`` with ``clients``, every client node under each user node)."""
    root, child = entity.root, entity.child
    if root.sanitized_name is None:
        names = await _children(zk, paths.config_entity_type_path(root.entity_type))
        roots = [ConfigEntity(Entity(root.entity_type, n), child) for n in names]
        if child is None:
            return roots
        out: list[ConfigEntity] = []
        for each in roots:
            out += await all_entities(zk, ConfigEntity(each.root, Entity(child.entity_type, None)))
        return out
    if child is not None and child.sanitized_name is None:
        names = await _children(zk, f"{paths.config_entity_type_path(root.entity_path)}/{child.entity_type}")
        return [ConfigEntity(root, Entity(child.entity_type, n)) for n in names]
    return [entity]


async def _children(zk: KafkaZkClient, path: str) -> list[str]:
    """``getAllEntitiesWithConfig``: the children, none when the node is absent."""
    if not await zk.path_exists(path):
        return []
    return await zk.get_children(path)


async def describe_quota_configs(zk: KafkaZkClient, entity: ConfigEntity
                                 ) -> list[tuple[ConfigEntity, dict[str, str] | ZnodeDecodeError]]:
    """``describeConfigWithZk``: each entity's configs, or why its node cannot be read. Describing every user
    leaves out the users whose node holds nothing (those only there for their clients' quotas), as Kafka does."""
    all_users = entity.root.entity_type == USERS and entity.root.sanitized_name is None and entity.child is None
    out: list[tuple[ConfigEntity, dict[str, str] | ZnodeDecodeError]] = []
    for each in await all_entities(zk, entity):
        try:
            found: dict[str, str] | ZnodeDecodeError = await zk.get_entity_configs(
                each.root.entity_type, each.full_sanitized_name)
        except ZnodeDecodeError as e:
            found = e
        if found or not all_users:
            out.append((each, found))
    return out
