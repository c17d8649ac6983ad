"""The topic verbs both cluster prompts have (``create``, ``describe``, ``delete``), parsed and run once.

``zkcontroller cluster`` and ``cluster --processes`` each had their own copy, and the copies drifted: a different
default replication factor (running brokers at one, every configured broker at the other, so ``create T`` with one
of two broker processes up was refused), different error wording, and a count check at one that let ``--5``
through to Python's "invalid literal for int()". What differs between the prompts stays with them: which brokers
are live for ``describe`` (`LiveBrokers`), the lines the in-process prompt adds (its brokers' offline replicas),
and what ``create`` does after the topic is written (the in-process prompt waits for its leaders).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from zkcontroller.admin.describe import describe_lines, describe_topics, select_topics
from zkcontroller.admin.topic_rules import collision_warning
from zkcontroller.admin.topics import Assignment, TopicAdmin, deletion_lines
from zkcontroller.cluster.preferred_election import LiveBrokers
from zkcontroller.cluster.prompt_help import CommandTable
from zkcontroller.cluster.prompt_lines import created_topic_lines
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

Out = Callable[[str], None]

DEFAULT_PARTITIONS = 3

DEFAULT_REPLICATION_FACTOR = 2
"""``create TOPIC`` without an RF asks for this many replicas, fewer when fewer brokers are registered
(`default_replication_factor`)."""

WHOLE_NUMBER = re.compile(r"-?[0-9]+")
"""A count as typed: digits, one minus sign at most. ``--5`` and ``5x`` are not counts; ``-1`` and ``0`` are, and
Kafka's own checks refuse them in its words ("Number of partitions must be larger than 0."), as kafka-topics does
``--partitions -1``."""


def default_replication_factor(registered: int) -> int:
    """The RF of ``create TOPIC [PARTITIONS]``: two replicas, so that a prompt's ``kill`` of one broker shows a
    failover, bounded by the brokers registered in ZooKeeper, which are the "available brokers" Kafka's replica
    placement counts (``AdminZkClient.createTopic``): a default above them was refused as "Replication factor: 2
    larger than available brokers: 1". At least 1: with none registered, Kafka's "1 larger than available brokers:
    0" says what is wrong, where 0 was refused as "must be larger than 0". Kafka's own ``default.replication.factor``
    (1) is the broker's, for topics created without one through the Admin API; a prompt user trying failover wants
    a replicated topic, which is why the help's default is 2."""
    return max(1, min(DEFAULT_REPLICATION_FACTOR, registered))


def create_arguments(args: list[str], usage: str) -> tuple[str, int, int | None]:
    """``TOPIC [PARTITIONS [RF]]`` as (topic, partitions, RF or None: the default). A count that is not a whole
    number is named, with what was typed (Python's "invalid literal for int() with base 10" named neither)."""
    if not 1 <= len(args) <= 3:  # a fourth word was dropped without a sign
        raise ValueError(usage)
    for what, given in (("PARTITIONS", args[1:2]), ("RF", args[2:3])):
        if given and WHOLE_NUMBER.fullmatch(given[0]) is None:
            raise ValueError(f"{what} must be a whole number, got {given[0]!r}; {usage}")
    partitions = int(args[1]) if len(args) > 1 else DEFAULT_PARTITIONS
    return args[0], partitions, int(args[2]) if len(args) > 2 else None


class TopicVerbs:
    """``create``, ``describe`` and ``delete`` for a prompt: ``commands`` is its table (for the usage errors),
    ``live`` the brokers its ``describe`` counts as live (as its ``elect`` does)."""

    def __init__(self, admin: KafkaZkClient, topics: TopicAdmin, out: Out, commands: CommandTable,
                 live: LiveBrokers) -> None:
        self.admin = admin
        self.topics = topics
        self.out = out
        self.commands = commands
        self.live = live

    async def create(self, args: list[str]) -> tuple[str, Assignment]:
        """Create the topic as kafka-topics does (its collision warning first, whatever comes of it) and print its
        placement; returns the topic and its assignment, for a prompt that then waits for leaders."""
        topic, partitions, rf = create_arguments(args, self.commands.usage("create"))
        if rf is None:
            rf = default_replication_factor(len(await self.admin.get_sorted_broker_list()))
        warning = collision_warning(topic)
        if warning is not None:
            self.out(warning)
        assignment = await self.topics.create_topic(topic, partitions, rf)
        for line in created_topic_lines(topic, assignment):
            self.out(line)
        return topic, assignment

    async def describe(self, args: list[str],
                       more: Callable[[list[str]], list[str]] | None = None) -> None:
        """kafka-topics --describe of one topic (a regular expression) or all; ``more``: lines the prompt adds for
        the topics described."""
        if len(args) > 1:  # `describe a b` described a alone, without a word about b
            raise ValueError(self.commands.usage("describe"))
        topics = await select_topics(self.admin, args[0] if args else None)
        for line in describe_lines(await describe_topics(self.admin, topics), await self.live()):
            self.out(line)
        for line in more(topics) if more is not None else []:
            self.out(line)

    async def delete(self, args: list[str]) -> None:
        """Mark the topics the regular expression matches for deletion, with kafka-topics --delete's lines."""
        if len(args) != 1:
            raise ValueError(self.commands.usage("delete"))
        async for topic, marked_now in self.topics.delete_topics_matching(args[0]):
            for line in deletion_lines(topic, marked_now):  # the note on delete.topic.enable included
                self.out(line)
