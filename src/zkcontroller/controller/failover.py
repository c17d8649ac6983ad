"""Becoming and ceasing to be the controller: the watches it holds and the context it loads (spec §2.5–§2.6).

Kept apart from `KafkaController` because this is the one place that reads the whole cluster state at once,
which is where failover time goes with 100,000 partitions: every read here is pipelined.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zkcontroller.controller.events import BrokerChange, TopicChange
from zkcontroller.model import sorted_by_partition
from zkcontroller.zk import paths

if TYPE_CHECKING:
    from zkcontroller.controller.kafka_controller import KafkaController


async def register_failover_watches(controller: KafkaController) -> None:
    """Steps 2–5: child handlers (armed by the reads that follow) and stale notifications cleared.

    Topic deletion, reassignment, preferred election, ISR-change and log-dir notifications are handled by
    later parts of the controller; until they exist their paths are not watched, so nothing is half-handled.
    """
    controller.register_child_handler(paths.BROKER_IDS, BrokerChange)
    controller.register_child_handler(paths.TOPICS, TopicChange)
    zk, expected = controller.zk, controller.context.epoch_zk_version
    log_dir_events = await zk.get_all_log_dir_event_notifications()
    if log_dir_events:
        await zk.delete_log_dir_event_notifications(log_dir_events, expected)
    isr_changes = await zk.get_all_isr_change_notifications()
    if isr_changes:
        await zk.delete_isr_change_notifications(isr_changes, expected)


def unregister_failover_watches(controller: KafkaController) -> None:
    controller.unregister_child_handler(paths.BROKER_IDS)
    controller.unregister_child_handler(paths.TOPICS)
    controller.unregister_broker_modifications_handlers(sorted(controller.context.live_or_shutting_down_broker_ids))
    controller.unregister_partition_modifications_handlers(sorted(controller.context.all_topics))


async def initialize_controller_context(controller: KafkaController) -> None:
    """Step 6: load brokers, topics, assignments and partition states into the context, arming watches."""
    context, zk = controller.context, controller.zk
    context.set_live_brokers(await controller.read_live_brokers())
    topics = await zk.get_all_topics_in_cluster(controller._on_watch)
    context.set_all_topics(topics)
    controller.register_partition_modifications_handlers(sorted(topics))
    assignments = await controller.process_topic_ids(await controller.read_topic_assignments(topics))
    for t in assignments:
        for tp, assignment in sorted_by_partition(t.assignment.items()):
            context.update_partition_full_replica_assignment(tp, assignment)
            if assignment.is_being_reassigned:
                context.partitions_being_reassigned.add(tp)
    context.clear_partition_leadership_info()
    context.shutting_down_broker_ids.clear()
    await controller.register_broker_modifications_handlers(sorted(context.live_or_shutting_down_broker_ids))
    await update_leader_and_isr_cache(controller)
    controller.channel_manager.startup(sorted(context.live_or_shutting_down_brokers, key=lambda b: b.id))


async def update_leader_and_isr_cache(controller: KafkaController) -> None:
    """Read every partition's state znode; malformed ones are logged and treated as "no state"."""
    read = await controller.zk.get_topic_partition_states(controller.context.all_partitions)
    for path, error in sorted(read.malformed.items()):
        controller.log.error(f"Ignoring malformed partition state at {path}: {error.reason}")
    for tp, leadership in sorted_by_partition(read.values.items()):
        controller.context.put_partition_leadership_info(tp, leadership)
