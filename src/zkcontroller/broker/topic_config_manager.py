"""How a broker learns its topics' configs (Kafka 2.8.2's ``LogManager`` log creation, ``DynamicConfigManager``
and ``TopicConfigHandler``, ZooKeeper mode).

When a LeaderAndIsr creates a topic's first local log, the broker reads ``/config/topics/<topic>`` (Kafka's
``adminZkClient.fetchEntityConfig``) and keeps the topic's `LogConfig`: its overrides over the broker's defaults
from server.properties. Afterwards it follows ``/config/changes/config_change_<n>``: a notification naming
``topics/<t>`` for a topic it keeps re-reads that topic's node (Kafka's ``TopicConfigHandler.processConfigChanges``,
``LogManager.updateTopicConfig``). Kafka reads the node before the LeaderAndIsr is answered; here the read runs
just after (control requests are answered synchronously), and Produce waits for a read still under way
(`wait_loaded`), so no append is judged by the wrong limits.

A node Kafka reads as no overrides (``ConfigEntityZNode.decode``: not JSON, not an object, no ``config`` object) gives
the topic the broker defaults, with a WARN naming the node, as the controller reads it. A node Kafka fails on (a
value that is not a string: on a notification, Kafka's failure line with Jackson's exception, `fetch_entity_config`,
as for every entity type, after a line of ours naming the node), or one whose value ConfigDef refuses, is logged
with its path and the topic keeps the config it had (the broker defaults if it had none); it is still followed, so
a later good change applies. A notification
Kafka cannot decode (`zk.config_changes.decode_notification`) is logged as Kafka logs it, with the exception Kafka
throws, and skipped; one that is not JSON is skipped as Kafka does, with a WARN of ours; one gone when read (another
broker purged it after the listing) gets Kafka's ``read null data from <path>`` WARN and is skipped. The watch is
re-armed after a reconnection and on a new session.
As Kafka's ``ZkNodeChangeNotificationListener``, the broker's start processes every notification already there (its
``lastExecutedChange`` starts at -1), and each pass ends by deleting the notifications created more than 15 minutes
before it began (``changeExpirationMs``; every broker does, a notification another one deleted first is skipped).

Dynamic broker configs (Kafka's ``BrokerConfigHandler`` → ``DynamicBrokerConfig``): ``/config/brokers/<default>``
and ``/config/brokers/<this broker's id>`` are read at start-up and again on a notification naming
``brokers/<default>`` or ``brokers/<this id>``; what is kept of them (`clean_dynamic_configs`) becomes the broker's
log defaults (`LogDefaults.from_levels`) and every kept topic's config is derived again from its overrides, so a
topic without an override follows. A node Kafka reads as no overrides (not JSON, no ``config`` object) drops that
level, with a WARN; a node otherwise malformed is logged and the level keeps what it had.

Client quotas (Kafka's ``ClientIdConfigHandler`` and ``UserConfigHandler``): every ``/config/clients/<id>``,
``/config/users/<user>`` and ``/config/users/<user>/clients/<id>`` is read at start-up, and again on a notification
naming it, into `produce_quotas` (`broker.client_quota_manager`), which Produce is throttled by, `request_quotas`
(the same module) and `controller_mutation_quotas` (`broker.controller_mutation_quota`). A node that cannot be read,
or whose ``producer_byte_rate``, ``consumer_byte_rate`` (checked only: no fetch quota here), ``request_percentage``
or ``controller_mutation_rate`` is no number, is logged (on a notification, as Kafka's handler fails) and the
quotas after that one keep what they had. IP connection-rate quotas (Kafka's ``IpConfigHandler``:
``/config/ips/<ip>``, read at start-up and on a notification naming ``ips/<ip>``) go to `ip_quotas`
(`IpConnectionRateQuotas`), kept and logged as Kafka's ``ConnectionQuotas`` does, not enforced.

Logging. The lines Kafka 2.8.2 has are written as Kafka writes them, under its loggers and without an ident
(neither class sets a ``logIdent``): ``Processing notification(s) to /config/changes`` and ``Error while processing
notification change for path = /config/changes`` (a read of the notifications failing, or anything else a pass
meets, as Kafka's ``processNotifications`` catches every ``Exception``: the pass stops, and the next change is read
as usual) and
``error processing change notification <data> from <path>`` (one notification's handling failing: the pass goes on
with the next, as Kafka's ``processNotification`` wraps each in a ``Try``; the data is the znode's bytes as stored,
decoded as Java's ``new String(data, UTF_8)`` decodes them, `java_utf8_decode`; the failures Kafka's handlers have
are raised with Java's names and messages: a config node with a value that is no string (``JsonMappingException:
Expected `String` value, received 3``); those of the notification itself, `decode_notification` (an
unsupported version, a version 1 type other than exactly ``topics`` or ``clients``, a missing name or path, a
version 2 path of no type Kafka handles or without ``/``, a field of the wrong JSON type); a broker entity neither
``<default>`` nor an integer, ``NumberFormatException: For input string: "abc"`` after its override line; a client
quota's rate that is no number, a user path of neither one nor three parts, a client id whose escapes
``URLDecoder`` refuses; an IP entity's rate that is no int or address that is no IP literal (a numeric IPv6 zone
past ``Integer.MAX_VALUE`` included); a path ZooKeeper's client refuses, `zookeeper_path_error`) and, at DEBUG,
``Purging change notification <path>`` (``kafka.common.ZkNodeChangeNotificationListener``; the first whenever
``/config/changes`` has children, so also after a purge),
``Processing override for entityPath: <type>/<name> with config: HashMap(..)``
(``kafka.server.DynamicConfigManager``: for each notification in order, whatever entity it names, the node's
properties in the Scala ``mutable.HashMap``'s order; for a version 1 notification, as Kafka's
``processEntityConfigChangeVersion1``, ``Processing override for entityType: topics, entity: t with config: {k=v}``
instead, the ``java.util.Properties`` in its Java 11+ order). The
rest has no Kafka counterpart (Kafka fails a LeaderAndIsr on an unreadable config, reads a non-JSON node or
notification silently): it goes under our own logger
`OWN_LOGGER` (``zkcontroller.broker.*``, routed to ``server.log`` beside Kafka's broker lines by `cluster.logs`)
with an ident naming this class and the broker, ``[TopicConfigManager broker=N] ``, since one server.log holds
every in-process broker. No line of ours carries a Kafka logger or a Kafka-looking ident.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping

from zkcontroller.broker.client_quota_manager import (
    ClientQuotaManager,
    ClientRequestQuotaManager,
    IpConnectionRateQuotas,
    apply_ip_quota_config,
    apply_quota_config,
)
from zkcontroller.broker.coalesced_reads import CoalescedReads
from zkcontroller.broker.controller_mutation_quota import ControllerMutationQuotaManager
from zkcontroller.broker.dynamic_broker_config import clean_dynamic_configs
from zkcontroller.broker.log_config import LogConfig, LogDefaults
from zkcontroller.coordination.errors import BadArgumentsError, ZkError
from zkcontroller.java_hash import java_string_hash, scala_hash_order
from zkcontroller.protocol.ibp import DEFAULT_IBP
from zkcontroller.runtime.runtime import Runtime
from zkcontroller.zk import paths
from zkcontroller.zk.config_changes import (
    BROKER_ENTITY_PREFIX,
    MESSAGE_FORMAT_VERSION,
    TOPIC_ENTITY_PREFIX,
    Notification,
    check_throttled_replicas,
    excluded_topic_configs,
    fetch_entity_config,
    purge_obsolete_config_changes,
    read_config_changes,
    validate_log_config,
)
from zkcontroller.zk.config_values import java_parse_int
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.java_properties import properties_order
from zkcontroller.zk.java_text import (
    JavaException,
    NumberFormatException,
    java_trim,
    java_utf8_decode,
    zookeeper_path_error,
)
from zkcontroller.zk.kafka_zk_client import KafkaZkClient
from zkcontroller.zk.log_config_def import TopicConfigError
from zkcontroller.zk.quota_configs import CONSUMER_BYTE_RATE

log = logging.getLogger("kafka.server.DynamicConfigManager")
listener_log = logging.getLogger("kafka.common.ZkNodeChangeNotificationListener")
handler_log = logging.getLogger("kafka.server.TopicConfigHandler")
OWN_LOGGER = "zkcontroller.broker.TopicConfigManager"
own_log = logging.getLogger(OWN_LOGGER)
CONFIG_CHANGES = "/config/changes"
QUOTA_ENTITY_PREFIXES = (f"{paths.ConfigType.USER}/", f"{paths.ConfigType.CLIENT}/")
IP_ENTITY_PREFIX = f"{paths.ConfigType.IP}/"


class TopicConfigManager:
    """The topic configs one broker keeps (for the topics it has logs of), and their upkeep."""

    def __init__(self, broker_id: int, zk: Callable[[], KafkaZkClient | None], runtime: Runtime,
                 defaults: LogDefaults | None = None, inter_broker_protocol_version: str = DEFAULT_IBP) -> None:
        self.broker_id = broker_id
        self.inter_broker_protocol_version = inter_broker_protocol_version
        """The broker's IBP: a topic's ``message.format.version`` newer than it is left out (``excludedConfigs``)."""
        self._zk = zk
        self.runtime = runtime
        self.defaults = defaults or LogDefaults.from_properties()
        self._static = dict(self.defaults.static)
        """server.properties' log properties: the dynamic levels are laid over them."""
        self._default_config = LogConfig(self.defaults.values)
        self._configs: dict[str, LogConfig] = {}
        self._loading: dict[str, asyncio.Task[None]] = {}
        self._last_change = ""
        self._changes = CoalescedReads(runtime, f"config-changes-{broker_id}", self._process)
        """``/config/changes``, read in one task (Kafka's change-event thread)."""
        self.produce_quotas = ClientQuotaManager(runtime)
        """The produce quotas of ``/config/users`` and ``/config/clients`` (Kafka's ``quotaManagers.produce``)."""
        self.controller_mutation_quotas = ControllerMutationQuotaManager(runtime)
        """Their ``controller_mutation_rate`` (Kafka's ``quotaManagers.controllerMutation``)."""
        self.request_quotas = ClientRequestQuotaManager(runtime)
        """Their ``request_percentage`` (Kafka's ``quotaManagers.request``)."""
        self.ip_quotas = IpConnectionRateQuotas()
        """``/config/ips``' connection rates (Kafka's ``socketServer.connectionQuotas``): kept, not enforced."""

    # ------------------------------------------------------------------ what the broker reads

    def config(self, topic: str) -> LogConfig:
        """The topic's config; the broker defaults for a topic not (yet) known."""
        return self._configs.get(topic, self._default_config)

    def min_insync_replicas(self, topic: str) -> int:
        return self.config(topic).min_insync_replicas

    def max_message_bytes(self, topic: str) -> int:
        return self.config(topic).max_message_bytes

    def log_append_time(self, topic: str) -> bool:
        return self.config(topic).log_append_time

    def timestamps_unsupported(self, topic: str) -> bool:
        return self.config(topic).timestamps_unsupported

    @property
    def topics(self) -> list[str]:
        return sorted(self._configs)

    # ------------------------------------------------------------------ log creation and removal

    def logs_created(self, topics: Iterable[str]) -> None:
        """New local logs of ``topics`` (a LeaderAndIsr): read their configs (a topic recreated since gets its
        new config too)."""
        wanted = sorted(set(topics))
        if not wanted or self._zk() is None:
            return
        task = self.runtime.spawn(self._load(wanted), f"topic-configs-{self.broker_id}")
        for topic in wanted:
            self._loading[topic] = task
        task.add_done_callback(lambda done: self._loaded(wanted, done))

    def _loaded(self, topics: list[str], done: asyncio.Task[None]) -> None:
        for topic in topics:
            if self._loading.get(topic) is done:
                del self._loading[topic]

    async def wait_loaded(self, topics: Iterable[str]) -> None:
        """Until the reads under way for ``topics`` are done (at once when none is)."""
        pending = {self._loading[t] for t in topics if t in self._loading}
        if pending:
            await asyncio.wait(pending)

    def forget(self, topic: str) -> None:
        """The topic's last local log is gone (StopReplica with delete): its config is no longer kept."""
        self._configs.pop(topic, None)

    async def _load(self, topics: list[str]) -> None:
        zk = self._zk()
        if zk is None:
            return
        try:
            read = await zk.get_topic_configs(topics, lenient=True)
        except ZkError as e:
            own_log.error("[TopicConfigManager broker=%d] Cannot read the configs of topics %s: %s; they keep the "
                      "configs they had", self.broker_id, ",".join(topics), e)
            return
        for path, ignored in sorted(read.read_as_empty.items()):
            own_log.warning("[TopicConfigManager broker=%d] Reading the topic config %s as no overrides (as Kafka "
                        "does): %s", self.broker_id, path, ignored.reason)
        for path, error in sorted(read.malformed.items()):
            own_log.error("[TopicConfigManager broker=%d] Ignoring the malformed topic config %s: %s", self.broker_id,
                      path, error.reason)
        for topic in topics:
            if paths.topic_config_path(topic) in read.malformed:
                self._configs.setdefault(topic, self._default_config)  # still followed: a later fix is applied
                continue
            self._apply(topic, read.values.get(topic, {}))

    def _apply(self, topic: str, overrides: Mapping[str, str]) -> None:
        try:
            self._configs[topic] = LogConfig.from_overrides(self.defaults, overrides)
        except TopicConfigError as e:
            own_log.error("[TopicConfigManager broker=%d] Ignoring the config of topic %s (%s): %s", self.broker_id,
                      topic, paths.topic_config_path(topic), e)
            self._configs.setdefault(topic, self._default_config)

    # ------------------------------------------------------------------ /config/changes

    async def startup(self) -> None:
        """``DynamicConfigManager.startup``: the notification listener's ``init`` (watch ``/config/changes`` and
        process every notification there, as Kafka's ``lastExecutedChange`` starts at -1: its lines are logged, the
        expired ones purged), then the dynamic broker levels (``DynamicBrokerConfig.initialize``) and the client
        quotas as they are now."""
        zk = self._zk()
        if zk is None:
            return
        self._last_change = ""
        self._changes.start()  # Kafka's change-event thread: it runs beside the reads below
        await self._update_broker_configs([paths.DEFAULT_ENTITY, str(self.broker_id)], log_override=False)
        await self._load_all_quotas(zk)

    # ------------------------------------------------------------------ client quotas

    async def _load_all_quotas(self, zk: KafkaZkClient) -> None:
        """``DynamicConfigManager.startup``: every user, <user, client-id>, client-id and IP node as it is now."""
        try:
            entities = [f"{paths.ConfigType.CLIENT}/{c}" for c in await self._children(zk, paths.ConfigType.CLIENT)]
            for user in await self._children(zk, paths.ConfigType.USER):
                entities.append(f"{paths.ConfigType.USER}/{user}")
                entities += [f"{paths.ConfigType.USER}/{user}/clients/{c}"
                             for c in await self._children(zk, f"{paths.ConfigType.USER}/{user}/clients")]
            ips = await self._children(zk, paths.ConfigType.IP)
        except ZkError as e:
            own_log.error("[TopicConfigManager broker=%d] Cannot read the client quotas: %s", self.broker_id, e)
            return
        await self._update_quotas(entities, log_override=False)
        for ip in ips:  # after the users, as Kafka's handlers map iterates (see config_changes.HANDLED_TYPES)
            path = paths.config_entity_path(paths.ConfigType.IP, ip)
            try:
                configs, ignored = await zk.get_entity_configs_lenient(paths.ConfigType.IP, ip)
                if ignored is not None:
                    own_log.warning("[TopicConfigManager broker=%d] Reading the IP quota config %s as no overrides "
                                    "(as Kafka does): %s", self.broker_id, path, ignored.reason)
                apply_ip_quota_config(self.ip_quotas, ip, configs)
            except Exception as e:  # Kafka's start-up would fail: here this IP is skipped, the others are read
                own_log.error("[TopicConfigManager broker=%d] Ignoring the IP quota config %s: %s", self.broker_id,
                              path, getattr(e, "reason", e))

    @staticmethod
    async def _children(zk: KafkaZkClient, entity_path: str) -> list[str]:
        path = paths.config_entity_type_path(entity_path)
        return await zk.get_children(path) if await zk.path_exists(path) else []

    async def _update_quotas(self, entities: list[str], *, log_override: bool, version: int = 2) -> None:
        """Re-read each ``users/...`` or ``clients/...`` entity's node into the quota managers. On a notification
        (``log_override``) what Kafka's handler throws (a path ZooKeeper refuses, a rate that is no number, a
        user path of neither 1 nor 3 parts) is raised, for Kafka's listener line; otherwise it is logged."""
        zk = self._zk()
        if zk is None:
            return
        for entity in entities:
            entity_type, _, name = entity.partition("/")
            path = paths.config_entity_path(entity_type, name)
            try:
                configs, ignored = await (self._fetch(zk, entity_type, name) if log_override else
                                          zk.get_entity_configs_lenient(entity_type, name))
                if ignored is not None:
                    own_log.warning("[TopicConfigManager broker=%d] Reading the client quota config %s as no "
                                "overrides (as Kafka does): %s", self.broker_id, path, ignored.reason)
                if log_override:
                    log_override_line(entity, configs, version=version)
                for quotas in (self.produce_quotas, self.request_quotas,  # QuotaConfigHandler's order
                               self.controller_mutation_quotas):
                    apply_quota_config(quotas, entity_type, name, configs)
                    if quotas is self.produce_quotas and CONSUMER_BYTE_RATE in configs:
                        ClientQuotaManager.parse_quota(configs[CONSUMER_BYTE_RATE])  # the fetch quota's toLong
            except Exception as e:  # at start-up each entity apart: one that fails does not keep the rest out
                if log_override and isinstance(e, ZkError | JavaException):
                    raise  # a notification's: Kafka's listener logs it
                own_log.error("[TopicConfigManager broker=%d] Ignoring the client quota config %s: %s",
                          self.broker_id, path, getattr(e, "reason", e))

    # ------------------------------------------------------------------ dynamic broker configs

    def _concerns_this_broker(self, entity_name: str) -> bool:
        """``BrokerConfigHandler``: the default entity or this broker's id (others' are theirs to read)."""
        if entity_name == paths.DEFAULT_ENTITY:
            return True
        return java_parse_int(java_trim(entity_name)) == self.broker_id

    async def _update_broker_configs(self, entities: list[str], *, log_override: bool) -> None:
        """Re-read the dynamic levels named (``<default>`` and/or this broker's id), then derive the log defaults
        and every kept topic's config again."""
        zk = self._zk()
        if zk is None or not entities:
            return
        read: dict[bool, dict[str, str]] = {}  # per-broker level (True) or cluster default → what is kept of it
        for entity in entities:
            path = paths.broker_config_path(entity)  # the node named as in the notification, as Kafka reads it
            try:
                if log_override:  # a notification's: what Kafka throws is raised, for the listener's line
                    configs, ignored = await self._fetch(zk, paths.ConfigType.BROKER, entity)
                else:
                    configs, ignored = await zk.get_entity_configs_lenient(paths.ConfigType.BROKER, entity)
            except (ZkError, ZnodeDecodeError) as e:
                own_log.error("[TopicConfigManager broker=%d] Ignoring the dynamic broker config %s: %s",
                          self.broker_id, path, getattr(e, "reason", e))
                continue
            if ignored is not None:
                own_log.warning("[TopicConfigManager broker=%d] Reading the dynamic broker config %s as no overrides "
                            "(as Kafka does): %s", self.broker_id, path, ignored.reason)
            if log_override:
                log_override_line(f"{BROKER_ENTITY_PREFIX}{entity}", configs)
            per_broker = entity != paths.DEFAULT_ENTITY
            read[per_broker] = clean_dynamic_configs(configs, per_broker=per_broker, path=path)
        if not read:
            return
        # merged into the levels as they are now (no await from here on), so concurrent reads do not undo each other
        self._set_defaults(LogDefaults.from_levels(self._static, read.get(False, self.defaults.dynamic_default),
                                                   read.get(True, self.defaults.dynamic_broker)))

    def _set_defaults(self, defaults: LogDefaults) -> None:
        """New broker log defaults (``DynamicLogConfig.reconfigure``/``updateLogsConfig``): each topic keeps its
        overrides over them."""
        self.defaults = defaults
        self._default_config = LogConfig(defaults.values)
        for topic, config in list(self._configs.items()):
            self._apply(topic, config.overrides)

    def shutdown(self) -> None:
        self._changes.stop()
        for task in set(self._loading.values()):
            task.cancel()

    def on_session_reconnected(self) -> None:
        """Re-arm the watch and read what was written meanwhile (a new session's watches start empty; a session
        event on the watch is no change, see `CoalescedReads`: read on the dead session, it logged "Cannot read
        /config/changes: SESSION_EXPIRED" at every expiry)."""
        self._changes.schedule()

    async def _process(self) -> bool:
        """``processNotifications``: each notification newer than the last one processed, in order (one that
        names an entity twice is processed twice, as Kafka's), then the purge of the expired ones. False (no
        further pass) without a store or after a failed read, as Kafka's listener waits for the next change."""
        zk = self._zk()
        if zk is None:
            return False
        try:
            changes = await read_config_changes(zk, self._last_change, self._changes.on_watch)
            if not changes.seen:
                return True
            listener_log.info("Processing notification(s) to %s", CONFIG_CHANGES)
            now = self.runtime.now_ms()
            for notification in changes.notified:
                try:
                    await self._notified(notification)
                except Exception as e:  # processNotification's Try: this one logged, the rest go on
                    if isinstance(e, BadArgumentsError) and e.path:  # a path ZooKeeper's client refuses
                        e = zookeeper_path_error(e.path) or e
                    listener_log.error("error processing change notification %s from %s",
                                       java_utf8_decode(notification.data), notification.path, exc_info=e)
                self._last_change = notification.sequence_number  # Kafka's lastExecutedChange
            self._last_change = changes.last_sequence_number
            for path in await purge_obsolete_config_changes(zk, changes.seen, now):
                listener_log.debug("Purging change notification %s", path)
        except Exception as e:  # ZkNodeChangeNotificationListener.processNotifications' catch: a failed read, or
            # anything else a pass meets; logged, and the next change is read (the watch is armed by the read)
            listener_log.error("Error while processing notification change for path = %s", CONFIG_CHANGES,
                               exc_info=e)
            return False
        return True

    async def _notified(self, notification: Notification) -> None:
        """``ConfigChangedNotificationHandler.processNotification``: what Kafka throws on the notification itself
        (`decode_notification`) is raised, to be logged as Kafka's listener logs it; data that is not JSON, which
        Kafka skips without a word, gets a WARN of ours."""
        if notification.null_data:  # processNotification's `case None`
            listener_log.warning("read null data from %s", notification.path)
            return
        if notification.failure is not None:
            raise notification.failure
        if notification.not_json is not None:
            own_log.warning("[TopicConfigManager broker=%d] Skipping the config change notification %s, which is "
                            "not JSON (as Kafka does, silently): %s", self.broker_id, notification.path,
                            notification.not_json)
            return
        await self._entity_changed(notification.entity, version=notification.version)

    async def _entity_changed(self, entity: str, *, version: int = 2) -> None:
        """``processEntityConfigChangeVersion1``/``2``: the entity's node read and logged ("Processing override
        for entityPath: ..", for version 1 "Processing override for entityType: .., entity: .."), whatever it is,
        then its handler: a broker level this broker takes (``<default>`` or its own id), a client quota, a topic
        this broker keeps logs of. A broker entity that is neither ``<default>`` nor an integer fails as
        ``BrokerConfigHandler``'s ``brokerId.trim.toInt`` does, after the override line."""
        if entity.startswith(BROKER_ENTITY_PREFIX):
            name = entity[len(BROKER_ENTITY_PREFIX):]
            if self._concerns_this_broker(name):
                await self._update_broker_configs([name], log_override=True)
                return
            # BrokerConfigHandler takes no other broker's: read and logged only
            read = await self._read_and_log(paths.ConfigType.BROKER, name)
            trimmed = java_trim(name)
            if read is not None and name != paths.DEFAULT_ENTITY and java_parse_int(trimmed) is None:
                raise NumberFormatException(f'For input string: "{trimmed}"')
        elif entity.startswith(QUOTA_ENTITY_PREFIXES):
            await self._update_quotas([entity], log_override=True, version=version)
        elif entity.startswith(IP_ENTITY_PREFIX):
            ip = entity[len(IP_ENTITY_PREFIX):]
            configs = await self._read_and_log(paths.ConfigType.IP, ip)
            if configs is not None:
                apply_ip_quota_config(self.ip_quotas, ip, configs)  # IpConfigHandler; what it throws is logged
        elif entity.startswith(TOPIC_ENTITY_PREFIX):
            topic = entity[len(TOPIC_ENTITY_PREFIX):]
            configs = await self._read_and_log(paths.ConfigType.TOPIC, topic, version=version)
            if configs is not None:
                self._topic_config_changed(topic, configs)

    def _topic_config_changed(self, topic: str, configs: Mapping[str, str]) -> None:
        """``TopicConfigHandler.processConfigChanges``, in its order: the message format version (an unknown one
        throws; one newer than the IBP is left out, with Kafka's WARN), the new config of a topic this broker has
        logs of (a value ConfigDef refuses throws ``ConfigException``, after a line of ours naming the node: the
        topic keeps its config), then the
        throttled replica lists (which throw after the config is applied). What throws goes to the listener's
        ``error processing change notification`` line."""
        excluded = excluded_topic_configs(configs, self.inter_broker_protocol_version)
        if excluded:
            handler_log.warning("Log configuration %s is ignored for `%s` because `%s` is not compatible with Kafka "
                                "inter-broker protocol version `%s`", MESSAGE_FORMAT_VERSION, topic,
                                configs[MESSAGE_FORMAT_VERSION], self.inter_broker_protocol_version)
        if topic in self._configs or topic in self._loading:  # the logs of the topic this broker has
            overrides = {k: v for k, v in configs.items() if k not in excluded}
            try:
                validate_log_config(overrides)
            except JavaException as e:  # a line of ours naming the node (Kafka's names the notification only)
                own_log.error("[TopicConfigManager broker=%d] Ignoring the config of topic %s (%s): %s",
                              self.broker_id, topic, paths.topic_config_path(topic), e)
                self._configs.setdefault(topic, self._default_config)  # still followed: a later fix is applied
                raise
            self._apply(topic, overrides)
        check_throttled_replicas(configs, self.broker_id)

    async def _fetch(self, zk: KafkaZkClient, entity_type: str, name: str
                     ) -> tuple[dict[str, str], ZnodeDecodeError | None]:
        """`fetch_entity_config` for a notification: what Kafka throws is raised (its listener's line), after a
        line of ours naming the node, which Kafka's does not."""
        try:
            return await fetch_entity_config(zk, entity_type, name)
        except JavaException as e:
            reason = e.__cause__.reason if isinstance(e.__cause__, ZnodeDecodeError) else e
            own_log.error("[TopicConfigManager broker=%d] Ignoring the malformed config %s: %s", self.broker_id,
                          paths.config_entity_path(entity_type, name), reason)
            raise

    async def _read_and_log(self, entity_type: str, name: str, *, version: int = 2) -> dict[str, str] | None:
        """``fetchEntityConfig`` and the override line; None without a store. A node Kafka's decode throws on
        raises what it throws (`fetch_entity_config`), for the listener's line: the entity keeps what it had (a
        topic this broker keeps is still followed, so a later fix is applied)."""
        zk = self._zk()
        if zk is None:
            return None
        path = paths.config_entity_path(entity_type, name)
        try:
            configs, ignored = await self._fetch(zk, entity_type, name)
        except JavaException:
            if entity_type == paths.ConfigType.TOPIC and (name in self._configs or name in self._loading):
                self._configs.setdefault(name, self._default_config)
            raise
        if ignored is not None and entity_type == paths.ConfigType.TOPIC and name in self._configs:
            own_log.warning("[TopicConfigManager broker=%d] Reading the topic config %s as no overrides (as Kafka "
                            "does): %s", self.broker_id, path, ignored.reason)
        log_override_line(f"{entity_type}/{name}", configs, version=version)
        return configs


def log_override_line(entity_path: str, configs: Mapping[str, str], *, version: int = 2) -> None:
    """``processEntityConfigChangeVersion2``'s INFO line: the node's properties as the Scala ``mutable.HashMap``
    Kafka prints (its iteration order), SCRAM credentials hidden. Version 1's line names the type and the entity
    apart and prints the ``java.util.Properties`` as Java 11+ does (its ``ConcurrentHashMap`` order), nothing
    hidden."""
    if not log.isEnabledFor(logging.INFO):
        return
    if version == 1:
        entity_type, _, name = entity_path.partition("/")
        shown = ", ".join(f"{k}={configs[k]}" for k in properties_order(configs))
        log.info("Processing override for entityType: %s, entity: %s with config: {%s}", entity_type, name, shown)
        return
    shown = ", ".join(f"{k} -> {'[hidden]' if k.startswith('SCRAM-') else configs[k]}"
                      for k in scala_hash_order(sorted(configs), java_string_hash))
    log.info("Processing override for entityPath: %s with config: HashMap(%s)", entity_path, shown)
