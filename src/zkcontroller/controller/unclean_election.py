"""Unclean leader election enabled at runtime (spec §9.15): Kafka's ``TopicUncleanLeaderElectionEnable``.

``kafka-configs --alter --entity-type topics`` writes ``/config/topics/<t>`` and a sequential
``/config/changes/config_change_<n>``. The controller watches those notifications (in Kafka the broker's config
manager does and calls the controller), decoded as Kafka decodes them (`zk.config_changes.decode_notification`:
one Kafka fails on names no entity; the brokers log Kafka's failure line for it); each notification naming a topic
whose ``unclean.leader.election.enable`` is now true (Scala's ``toBoolean``: ``true`` in any case, untrimmed)
queues one ``TopicUncleanLeaderElectionEnable``, as each of Kafka's ``TopicConfigHandler`` calls does, so a topic
named twice in one read is announced twice, and its offline partitions' election tried twice (the second finds
those the first elected led already). The topics
named in one read are read once each, pipelined, before the events are queued; a notification that fails (its
topic's path refused by ZooKeeper's client, a broker node unreadable) is logged and skipped, the others go on,
as Kafka's listener goes on. A topic whose config Kafka's ``TopicConfigHandler`` throws on before its last step
(an unknown ``message.format.version``, a value ``LogConfig`` refuses where this broker is a replica of the topic,
a throttled replica list it cannot parse: `zk.config_changes.check_topic_config_change`) is logged and announced
not, as Kafka's aborted handler never asks for the event. The strategy stays
``OfflinePartitionLeaderElectionStrategy(false)``: the permission comes from re-reading the topic's config
(§5.7). Notifications are left in place (Kafka's config manager purges them after 15 minutes); this family
remembers the last one it read. The tenure that the broker's
start-up election begins reads every notification already there and then every topic's config, as Kafka's broker
does when it starts, so a topic enabled while no controller ran is announced ("Unclean leader election has been
enabled for topic ...") even once its notification is purged; a later tenure starts after them
(`UncleanElectionEvents.register_watches`).

Broker-level changes (Kafka's ``UncleanLeaderElectionEnable``): a notification naming ``brokers/<default>`` or
``brokers/<this broker's id>`` makes the controller re-read that ``/config/brokers/...`` node (Kafka's
``BrokerConfigHandler`` → ``DynamicBrokerConfig``) into `ControllerCore.dynamic_config`; when the effective value
(per-broker over default over static) goes from false to true, every offline partition is elected again. Both
nodes are also read at each failover, before the partition state machine starts. A node Kafka reads as no
overrides (not JSON, or no ``config`` object) is reported with its path and drops that level, as in Kafka; any
other malformed node is logged with its path and changes nothing; an invalid value is dropped, as Kafka's
``removeInvalidConfigs`` does.

Each unclean election is counted (``context.stats.unclean_leader_elections``) and logged; the offsets it
loses are not known to the controller (they are the difference between the old and new leaders' log ends).

Logging: KafkaController's own lines here ("Unclean leader election has been enabled ...") stay under
``kafka.controller.KafkaController``. Everything else this family logs has no KafkaController counterpart: the
unclean elections with what they lose, and the controller's own reading of ``/config/changes`` and
``/config/brokers`` (in Kafka the broker's DynamicConfigManager does that, and our brokers log its lines too).
Those go under our logger `UNCLEAN_ELECTION_LOGGER` with the same ``[Controller id=N] `` ident, so no reader
takes them for Kafka's controller and the analytics parser still reads the controller id; `cluster.logs`
routes ``zkcontroller.controller.*`` to ``controller.log``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zkcontroller.controller.core import ControllerCore
from zkcontroller.controller.dynamic_config import InvalidDynamicConfigError, parse_unclean_leader_election_enable
from zkcontroller.controller.event_log import PrefixedLogger
from zkcontroller.controller.events import (
    ConfigChangeNotification,
    ControllerEvent,
    TopicUncleanLeaderElectionEnable,
    UncleanLeaderElectionEnable,
)
from zkcontroller.controller.families import EventFamily, Handler
from zkcontroller.coordination.errors import BadArgumentsError
from zkcontroller.model import LeaderAndIsr
from zkcontroller.protocol.ibp import DEFAULT_IBP
from zkcontroller.zk import paths
from zkcontroller.zk.client_admin import unclean_leader_election_override
from zkcontroller.zk.client_base import BulkRead
from zkcontroller.zk.config_changes import (
    BROKER_ENTITY_PREFIX,
    Notification,
    check_topic_config_change,
    newest_config_change,
    read_config_changes,
)
from zkcontroller.zk.config_values import java_parse_int
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.java_text import JavaException, java_trim, zookeeper_path_error
from zkcontroller.zk.znodes import UNCLEAN_LEADER_ELECTION_ENABLE

UNCLEAN_ELECTION_LOGGER = "zkcontroller.controller.UncleanElection"
"""Our logger for this family's lines that Kafka's controller does not have (see the module docstring)."""


class UncleanElectionEvents(EventFamily):
    last_sequence_number = ""
    """The newest config-change notification already read (sequence numbers sort as strings)."""

    def __init__(self, core: ControllerCore) -> None:
        super().__init__(core)
        self.log = PrefixedLogger(UNCLEAN_ELECTION_LOGGER, f"[Controller id={core.controller_id}] ")
        self.replays_notifications_there = True
        """Whether a tenure beginning now reads the notifications already there (see `register_watches`): only
        the one the broker's start-up election begins."""
        self.replay_topic_configs = False
        """Set by that tenure until its first notification pass has also gone over every topic's config."""

    def broker_start_election_done(self) -> None:
        """The election of the broker's start is over (won or lost): a later tenure finds the notifications there
        processed by its broker while it was not active, which Kafka's controller drops."""
        self.replays_notifications_there = False

    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {
            ConfigChangeNotification: self.process_config_change_notification,
            TopicUncleanLeaderElectionEnable: self.process_topic_unclean_leader_election_enable,
            UncleanLeaderElectionEnable: self.process_unclean_leader_election_enable,
        }

    async def register_watches(self) -> None:
        """Watch the notifications. The tenure the broker's start-up election begins also reads every one already
        there, then every topic's config, as Kafka's broker does at its start (``DynamicConfigManager.startup``:
        its listener's ``lastExecutedChange`` starts at -1, then ``fetchAllEntityConfigs`` hands every topic's
        config to ``TopicConfigHandler``, which asks this controller, active by then, for a
        ``TopicUncleanLeaderElectionEnable`` per topic with the override on; a topic in both is announced twice,
        as Kafka does): a config set while no controller ran is announced and its topic elected again, after the
        failover's election (which reads every topic's config already). A later tenure starts after them: its
        broker processed them while it was not active, and Kafka drops those events."""
        self.core.watches.register_child_handler(paths.CONFIG_CHANGES, ConfigChangeNotification)
        # brokers create /config/changes at start-up; a store without it has no notifications either
        newest = await newest_config_change(self.core.zk, self.core.on_watch)
        if self.replays_notifications_there:
            self.last_sequence_number = ""
            self.replay_topic_configs = True
            self.core.events.put(ConfigChangeNotification())  # handled after the failover, as Kafka's event is
        else:
            self.last_sequence_number = newest
        # Kafka's DynamicBrokerConfig.initialize: the broker's current dynamic configs; read at every failover
        # because only the active controller watches the notifications. No event: the partition state
        # machine's start-up elects the offline partitions with this value.
        for entity in (paths.DEFAULT_ENTITY, str(self.core.controller_id)):
            await self._update_broker_config(entity, log_override=False)

    def on_resignation(self) -> None:
        self.core.watches.unregister_child_handler(paths.CONFIG_CHANGES)

    async def on_session_reconnected(self) -> None:
        """Re-arm the ``/config/changes`` watch and read the notifications written while disconnected."""
        self.core.events.put(ConfigChangeNotification())

    async def process_config_change_notification(self, _event: ConfigChangeNotification) -> None:
        """Each new notification in order (Kafka's handlers run per notification): the topics they name are read
        first, each once, in one pipelined read; then one ``TopicUncleanLeaderElectionEnable`` per notification
        naming a topic enabled. One that fails (a broker node unreadable, a bug) is logged and skipped: the others
        still count, and the next pass starts after them all."""
        core = self.core
        if not core.is_active:
            return
        changes = await read_config_changes(core.zk, self.last_sequence_number, core.on_watch)
        named = {n.entity_name for n in changes.notified if n.entity_type == paths.ConfigType.TOPIC}
        enabled = await self._unclean_enabled_topics(named)  # a failed read raises before the notifications count
        self.last_sequence_number = changes.last_sequence_number
        for notification in changes.notified:
            try:
                await self._notified(notification, enabled)
            except Exception as e:  # processNotification's Try: this one logged, the rest go on
                self.log.error(f"Skipping the config change notification {notification.path} "
                               f"({notification.entity or 'no entity'}): {type(e).__name__}: {e}", e)
        if self.replay_topic_configs:  # fetchAllEntityConfigs(topics), after the listener's init
            self.replay_topic_configs = False
            topics = await core.zk.get_children(paths.config_entity_type_path(paths.ConfigType.TOPIC))
            # the failover's election read them all already and reported those read as no overrides
            for topic in sorted(await self._unclean_enabled_topics(topics, report_empty=False)):
                core.events.put(TopicUncleanLeaderElectionEnable(topic=topic))

    async def _notified(self, notification: Notification, enabled: set[str]) -> None:
        """One notification: a broker level this controller takes re-read, a topic enabled announced."""
        core = self.core
        if not notification.entity_type:  # failed, not JSON, or gone
            self.log.debug(f"Skipping the config change notification {notification.path}: it names no entity "
                           "(the brokers log Kafka's failure line for it)")
        elif notification.entity_type == paths.ConfigType.BROKER:
            broker = notification.entity_name
            if self._concerns_this_broker(broker):
                was_enabled = core.dynamic_config.unclean_leader_election_enable
                await self._update_broker_config(broker, log_override=True)
                if core.dynamic_config.unclean_leader_election_enable and not was_enabled:
                    core.events.put(UncleanLeaderElectionEnable())
        elif notification.entity_type == paths.ConfigType.TOPIC and notification.entity_name in enabled:
            # TopicConfigHandler → enableTopicUncleanLeaderElection: one event per notification
            core.events.put(TopicUncleanLeaderElectionEnable(topic=notification.entity_name))

    def _concerns_this_broker(self, entity_name: str) -> bool:
        """Kafka's BrokerConfigHandler: the default entity, or this broker's id (other brokers' are theirs)."""
        if entity_name == paths.DEFAULT_ENTITY:
            return True
        broker_id = java_parse_int(java_trim(entity_name))  # BrokerConfigHandler's brokerId.trim.toInt
        if broker_id is None:  # the brokers log Kafka's failure of it (NumberFormatException)
            self.log.error(f"Ignoring the config change of broker entity {entity_name!r}: not a broker id")
        return broker_id == self.core.controller_id

    async def _update_broker_config(self, entity_name: str, *, log_override: bool) -> None:
        """Read ``/config/brokers/<entity_name>`` into the controller's dynamic config (Kafka's
        ``updateDefaultConfig``/``updateBrokerConfig``); a malformed node (a value that is not a string) is
        reported and changes nothing."""
        core = self.core
        path = paths.broker_config_path(entity_name)
        try:
            configs, ignored = await core.zk.get_entity_configs_lenient(paths.ConfigType.BROKER, entity_name)
        except ZnodeDecodeError as e:
            self.log.error(f"Ignoring the dynamic broker config {path}: {e.reason}")
            return
        if ignored is not None:  # Kafka reads it as no overrides: the level no longer sets anything
            self.log.warn(f"Reading the dynamic broker config {path} as no overrides (as Kafka does): "
                          f"{ignored.reason}")
        if log_override:  # DynamicConfigManager's line (a Scala map's rendering)
            rendered = ", ".join(f"{k} -> {v}" for k, v in sorted(configs.items()))
            self.log.info(f"Processing override for entityPath: {BROKER_ENTITY_PREFIX}{entity_name} with config: "
                          f"HashMap({rendered})")
        try:
            value = parse_unclean_leader_election_enable(configs)
        except InvalidDynamicConfigError as e:
            source = "default cluster" if entity_name == paths.DEFAULT_ENTITY else "broker"
            self.log.error(f"Dynamic {source} config contains invalid values in: "
                           f"Set({UNCLEAN_LEADER_ELECTION_ENABLE}), these configs will be ignored ({path}: {e})")
            value = None  # removeInvalidConfigs drops the key; the level no longer sets it
        if entity_name == paths.DEFAULT_ENTITY:
            core.dynamic_config.default_unclean_leader_election_enable = value
        else:
            core.dynamic_config.broker_unclean_leader_election_enable = value

    async def _unclean_enabled_topics(self, topics: Iterable[str], *, report_empty: bool = True) -> set[str]:
        """The topics for which Kafka's ``TopicConfigHandler`` asks for a ``TopicUncleanLeaderElectionEnable``,
        their nodes read in one pipelined read: the override read as ``Try(value.toBoolean).getOrElse(false)``
        (Scala's ``toBoolean``: ``true`` in any case, nothing around it, so `` true``, which ConfigDef reads as
        true, asks for nothing). A node as Kafka reads it (``ConfigEntityZNode.decode``): one that is not JSON or
        has no ``config`` object is no overrides, so not enabled (WARN if ``report_empty``); a value ConfigDef
        refuses, or a name whose path ZooKeeper's client refuses (``topics/``, ``topics/a//b``), is reported
        (ERROR) and not enabled."""
        readable = []
        for topic in sorted(set(topics)):
            refused = zookeeper_path_error(paths.topic_config_path(topic))
            if refused is None:
                readable.append(topic)
            else:
                self.log.error(f"Ignoring the config change of topic {topic!r}: {refused}")
        zk = self.core.zk
        try:
            read = await zk.get_topic_configs(readable, lenient=True)
        except BadArgumentsError:  # a name the store refuses though ZooKeeper's client takes it: one by one
            read = BulkRead()
            for topic in readable:
                try:
                    one = await zk.get_topic_configs([topic], lenient=True)
                except BadArgumentsError as e:
                    self.log.error(f"Ignoring the config change of topic {topic!r}: {e}")
                    continue
                read.values.update(one.values)
                read.malformed.update(one.malformed)
                read.read_as_empty.update(one.read_as_empty)
        enabled = set()
        for topic in readable:
            path = paths.topic_config_path(topic)
            if path in read.malformed:
                self.log.error(f"Ignoring the config of topic {topic}: {read.malformed[path]}")
                continue
            if path in read.read_as_empty:
                if report_empty:
                        self.log.warn(f"Reading the config of topic {topic} as no overrides (as Kafka does): "
                                  f"{read.read_as_empty[path].reason}")
                continue
            configs = read.values.get(topic, {})
            try:
                unclean_leader_election_override(configs, path)
            except ZnodeDecodeError as e:
                self.log.error(f"Ignoring the config of topic {topic}: {e}")
                continue
            value = configs.get(UNCLEAN_LEADER_ELECTION_ENABLE)
            if value is not None and value.isascii() and value.lower() == "true" and self._handled(topic, configs):
                enabled.add(topic)
        return enabled

    def _handled(self, topic: str, configs: Mapping[str, str]) -> bool:
        """Whether Kafka's ``TopicConfigHandler`` on this controller's broker gets as far as asking for the event:
        it throws first on an unknown ``message.format.version``, on a value ``LogConfig`` refuses (only if the
        broker has logs of the topic: here, if it is one of its replicas) and on a throttled replica list it
        cannot parse (its listener logs ``error processing change notification``; the broker logs that line)."""
        core = self.core
        context = getattr(core, "context", None)
        assignment = {} if context is None else context.partition_replica_assignment_for_topic(topic)
        has_logs = any(core.controller_id in replicas for replicas in assignment.values())
        config = getattr(core, "config", None)
        try:
            check_topic_config_change(configs, core.controller_id, has_logs=has_logs,
                                      inter_broker_protocol_version=getattr(
                                          config, "inter_broker_protocol_version", DEFAULT_IBP))
        except JavaException as e:
            self.log.error(f"Not enabling unclean leader election for topic {topic}: its config change fails on "
                           f"this broker as in Kafka, which asks for no TopicUncleanLeaderElectionEnable then "
                           f"({type(e).__module__}.{type(e).__name__}: {e})")
            return False
        return True

    async def process_unclean_leader_election_enable(self, _event: UncleanLeaderElectionEnable) -> None:
        core = self.core
        if not core.is_active:
            return
        core.log.info("Unclean leader election has been enabled by default")
        await self._trigger_online_partition_state_change(None)

    async def process_topic_unclean_leader_election_enable(self, event: TopicUncleanLeaderElectionEnable) -> None:
        core = self.core
        if not core.is_active:
            return
        core.log.info(f"Unclean leader election has been enabled for topic {event.topic}")
        await self._trigger_online_partition_state_change(event.topic)

    async def _trigger_online_partition_state_change(self, topic: str | None) -> None:
        """Elect the offline partitions (of ``topic``, or all) and warn about each unclean election."""
        core = self.core
        partitions = (core.context.partitions_for_topic(topic) if topic is not None
                      else core.context.all_partitions)
        before = {tp: core.context.partition_leader_and_isr(tp) for tp in partitions}
        # The state machine counts the whole batch before any line is logged: each line counts itself on from the
        # count before it (every line said the batch's total).
        so_far = core.context.stats.unclean_leader_elections
        results = await core.partition_state_machine.trigger_online_partition_state_change(topic)
        for tp, result in sorted(results.items(), key=lambda item: (item[0].topic, item[0].partition)):
            old = before.get(tp)
            if isinstance(result, LeaderAndIsr) and old is not None and result.leader not in old.isr:
                so_far += 1
                self.log.warn(f"Unclean leader election for partition {tp}: new leader {result.leader} was not in "
                              f"the ISR [{','.join(map(str, old.isr))}]; records only the old ISR had are lost "
                              f"(unclean leader elections so far: {so_far})")
