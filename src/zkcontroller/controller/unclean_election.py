"""Unclean leader election enabled at runtime (spec §9.15): Kafka's ``TopicUncleanLeaderElectionEnable``.

``kafka-configs --alter --entity-type topics`` writes ``/config/topics/<t>`` and a sequential
``/config/changes/config_change_<n>``. The controller watches those notifications (in Kafka the broker's config
manager does and calls the controller); a topic whose ``unclean.leader.election.enable`` is now true gets its
offline partitions elected again. The strategy stays ``OfflinePartitionLeaderElectionStrategy(false)``: the
permission comes from re-reading the topic's config (§5.7). Notifications are left in place (Kafka's config
manager purges them after 15 minutes); this family remembers the last one it read.

Each unclean election is counted (``context.stats.unclean_leader_elections``) and logged; the offsets it
loses are not known to the controller (they are the difference between the old and new leaders' log ends).
"""

from __future__ import annotations

from collections.abc import Mapping

from zkcontroller.controller.events import ConfigChangeNotification, ControllerEvent, TopicUncleanLeaderElectionEnable
from zkcontroller.controller.families import EventFamily, Handler
from zkcontroller.coordination.errors import NoNodeError
from zkcontroller.model import LeaderAndIsr
from zkcontroller.zk import paths
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.znodes.config import ConfigEntityChangeNotificationSequenceZNode as ConfigChangeZNode

TOPIC_ENTITY_PREFIX = f"{paths.ConfigType.TOPIC}/"


class UncleanElectionEvents(EventFamily):
    last_sequence_number = ""
    """The newest config-change notification already read (sequence numbers sort as strings)."""

    def handlers(self) -> Mapping[type[ControllerEvent], Handler]:
        return {
            ConfigChangeNotification: self.process_config_change_notification,
            TopicUncleanLeaderElectionEnable: self.process_topic_unclean_leader_election_enable,
        }

    async def register_watches(self) -> None:
        """Watch the notifications; those already there were written before this tenure (the failover's
        election reads every topic's current config anyway)."""
        self.core.watches.register_child_handler(paths.CONFIG_CHANGES, ConfigChangeNotification)
        try:
            existing = await self.core.zk.get_notification_sequence_numbers(ConfigChangeZNode, self.core.on_watch)
        except NoNodeError:  # brokers create it at start-up; a store without it has no notifications either
            existing = []
        self.last_sequence_number = max(existing, default="")

    def on_resignation(self) -> None:
        self.core.watches.unregister_child_handler(paths.CONFIG_CHANGES)

    async def process_config_change_notification(self, _event: ConfigChangeNotification) -> None:
        core = self.core
        if not core.is_active:
            return
        try:
            sequence_numbers = await core.zk.get_notification_sequence_numbers(ConfigChangeZNode, core.on_watch)
        except NoNodeError:
            return
        new = sorted(n for n in sequence_numbers if n > self.last_sequence_number)
        if not new:
            return
        self.last_sequence_number = new[-1]
        read = await core.zk.read_notifications(ConfigChangeZNode, new)
        for path, error in sorted(read.malformed.items()):
            core.log.error(f"Ignoring malformed config change notification {path}: {error.reason}")
        topics = sorted({entity[len(TOPIC_ENTITY_PREFIX):] for entity in read.values.values()
                         if entity.startswith(TOPIC_ENTITY_PREFIX)})
        for topic in topics:
            if await self._unclean_enabled(topic):
                core.events.put(TopicUncleanLeaderElectionEnable(topic=topic))

    async def _unclean_enabled(self, topic: str) -> bool:
        try:
            return bool(await self.core.zk.get_unclean_leader_election_override(topic))
        except ZnodeDecodeError as e:
            self.core.log.error(f"Ignoring the config of topic {topic}: {e}")
            return False

    async def process_topic_unclean_leader_election_enable(self, event: TopicUncleanLeaderElectionEnable) -> None:
        core = self.core
        if not core.is_active:
            return
        core.log.info(f"Unclean leader election has been enabled for topic {event.topic}")
        before = {tp: core.context.partition_leader_and_isr(tp) for tp in core.context.partitions_for_topic(
            event.topic)}
        results = await core.partition_state_machine.trigger_online_partition_state_change(event.topic)
        for tp, result in sorted(results.items(), key=lambda item: item[0].partition):
            old = before.get(tp)
            if isinstance(result, LeaderAndIsr) and old is not None and result.leader not in old.isr:
                core.log.warn(f"Unclean leader election for partition {tp}: new leader {result.leader} was not in "
                              f"the ISR [{','.join(map(str, old.isr))}]; records only the old ISR had are lost "
                              f"(unclean leader elections so far: {core.context.stats.unclean_leader_elections})")
