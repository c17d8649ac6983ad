"""``zkcontroller leader-election``: Kafka's ``kafka-leader-election.sh``, with ``--bootstrap-server`` or with
``--zookeeper`` (the ZooKeeper path of the older ``kafka-preferred-replica-election.sh``).

With ``--bootstrap-server`` the elections, preferred or unclean, go to the controller's ElectLeaders API through
a broker's listener (`elect_through_broker`), printing what Kafka's tool prints. With ``--zookeeper`` a preferred
election is requested the way Kafka's ZooKeeper-mode tool does it: the partitions that exist are written to
``/admin/preferred_replica_election`` and the controller elects and deletes the znode. An unclean election has
no ZooKeeper path in Kafka (it needs the ElectLeaders API), so with ``--zookeeper`` it is refused with that
reason, pointing to ``--bootstrap-server`` and the in-process cluster prompt's ``elect --unclean``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import click

from zkcontroller.admin.admin_client import AdminClient, exception_string
from zkcontroller.admin.bootstrap_topics import run_with_admin
from zkcontroller.admin.cli import exactly_one_server, run_with_client
from zkcontroller.admin.deprecation import ZOOKEEPER_DEPRECATED
from zkcontroller.admin.errors import AdminError
from zkcontroller.admin.java_numbers import is_json_int
from zkcontroller.admin.repeats import repeated
from zkcontroller.admin.usage import JAVA_INT, KafkaCommand
from zkcontroller.admin.user_files import read_user_file
from zkcontroller.coordination.errors import NodeExistsError
from zkcontroller.java_hash import scala_immutable_hash_set_order, topic_partition_hash
from zkcontroller.model import TopicPartition, sorted_partitions
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient


class ElectionInProgressError(AdminError):
    pass


@dataclass(frozen=True)
class PreferredElectionStarted:
    requested: list[TopicPartition]
    skipped: list[TopicPartition]
    """Asked for but not in the cluster (their topics do not exist)."""


def parse_partitions_json(text: str, where: str) -> list[TopicPartition]:
    """``{"partitions": [{"topic": "t", "partition": 0}, ...]}``, Kafka's election JSON file.

    As Kafka's ``to[String]``/``to[Int]`` decoding, a topic must be a JSON string and a partition a JSON
    integer: ``0.7``, ``true`` or ``"1"`` are refused rather than coerced into some other partition."""
    def invalid(reason: str) -> AdminError:
        return AdminError(f"Invalid election JSON in {where}: expected "
                          f'{{"partitions": [{{"topic": ..., "partition": ...}}]}} ({reason})')

    try:
        data = json.loads(text)
    except ValueError as e:
        raise invalid(str(e)) from None
    entries = data.get("partitions") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise invalid('no "partitions" list')
    partitions: list[TopicPartition] = []
    for i, entry in enumerate(entries):
        topic = entry.get("topic") if isinstance(entry, dict) else None
        partition = entry.get("partition") if isinstance(entry, dict) else None
        if not isinstance(topic, str) or not topic:
            raise invalid(f'partitions[{i}]: "topic" must be a non-empty string')
        if not is_json_int(partition):  # to[Int]: an IntNode
            raise invalid(f'partitions[{i}]: "partition" must be a 32-bit integer')
        partitions.append(TopicPartition(topic, partition))
    duplicates = sorted(str(tp) for tp in repeated(partitions))
    if duplicates:
        raise AdminError(f"Replica election data contains duplicate partitions: {','.join(duplicates)}")
    return partitions


async def all_partitions(zk: KafkaZkClient, topics: Iterable[str] | None = None, *, strict: bool = False
                         ) -> list[TopicPartition]:
    """The partitions of ``topics`` (default: every topic) as their topic znodes list them.

    A topic znode that cannot be read is left out, or with ``strict`` raises its `ZnodeDecodeError` (before the
    caller writes anything): Kafka's ``PreferredReplicaLeaderElectionCommand`` reads the same znodes with
    ``getPartitionsForTopics``, which throws for the wrong shape or no data ("Admin command failed"); for data that
    is not JSON it reads no partitions and says the partitions asked for "don't exist", which hides the
    corruption, so strict fails there too."""
    names = await zk.get_all_topics_in_cluster() if topics is None else set(topics)
    read = await zk.get_partitions_for_topics(names)
    if strict and read.malformed:
        raise read.malformed[min(read.malformed)]
    return sorted_partitions(TopicPartition(t, p) for t, ps in read.values.items() for p in ps)


async def start_preferred_election(zk: KafkaZkClient, partitions: Iterable[TopicPartition] | None
                                   ) -> PreferredElectionStarted:
    """Write the election request for the partitions that exist (all of them when ``partitions`` is None); only
    the topics named are read when partitions are given, as Kafka reads them. With none that exist (an empty
    list, only unknown partitions, no topics) the request is written all the same, empty, as Kafka's ZooKeeper
    path writes it (the controller deletes it), and refused the same way while another is pending."""
    if partitions is not None:
        partitions = list(partitions)
    topics = None if partitions is None else {tp.topic for tp in partitions}
    existing = set(await all_partitions(zk, topics, strict=True))
    wanted = existing if partitions is None else set(partitions)
    valid = sorted_partitions(wanted & existing)
    skipped = sorted_partitions(wanted - existing)
    try:
        await zk.create_preferred_replica_election(valid)
    except NodeExistsError:
        try:  # Kafka reads it leniently (not JSON: no partitions) and throws on the wrong shape
            current = await zk.get_preferred_replica_election() or frozenset()
            pending = ','.join(str(tp) for tp in sorted_partitions(current))
        except ZnodeDecodeError as e:
            pending = f"partitions it cannot tell ({e})"
        raise ElectionInProgressError(
            f"Preferred replica leader election currently in progress for {pending}. Aborting operation"
        ) from None
    return PreferredElectionStarted(valid, skipped)


def requested_partitions(topic: str | None, partition: int | None, all_topic_partitions: bool,
                         path_to_json_file: Path | None) -> list[TopicPartition] | None:
    """The one partition source kafka-leader-election accepts; None means every partition."""
    chosen = sum([topic is not None or partition is not None, all_topic_partitions, path_to_json_file is not None])
    if chosen != 1:
        raise click.UsageError("One and only one of the following options is required: --all-topic-partitions, "
                               "--topic, --path-to-json-file")
    if all_topic_partitions:
        return None
    if path_to_json_file is not None:
        text = read_user_file(path_to_json_file, "--path-to-json-file")
        return parse_partitions_json(text, str(path_to_json_file))
    if topic is None or partition is None:
        raise click.UsageError("--topic and --partition must be given together")
    return [TopicPartition(topic, partition)]


@click.command("leader-election", cls=KafkaCommand, short_help="Elect leaders, as kafka-leader-election.")
@click.option("--bootstrap-server", metavar="HOST:PORT[,...]",
              help="A broker's listener: elect through the controller's ElectLeaders API (preferred or unclean).")
@click.option("--admin.config", "admin_config", metavar="FILE",
              help="Admin client properties (default.api.timeout.ms, request.timeout.ms, ...); "
                   "with --bootstrap-server only.")
@click.option("--zookeeper", envvar="ZKCONTROLLER_ZOOKEEPER", metavar="HOST[:PORT][,...][/CHROOT]",
              help="ZooKeeper connect string: a preferred election through /admin/preferred_replica_election "
                   "(or set ZKCONTROLLER_ZOOKEEPER).")
@click.option("--election-type", required=True, type=click.Choice(["preferred", "unclean"], case_sensitive=False),
              help="Type of election to attempt.")
@click.option("--topic", help="Name of the topic (with --partition).")
@click.option("--partition", type=JAVA_INT, help="Partition number (with --topic).")
@click.option("--all-topic-partitions", is_flag=True, help="Elect leaders for every partition.")
@click.option("--path-to-json-file", type=click.Path(path_type=Path),  # read by read_user_file: its one error line
              help='JSON file: {"partitions": [{"topic": "t", "partition": 0}]}.')
def leader_election(bootstrap_server: str | None, admin_config: str | None, zookeeper: str | None,
                    election_type: str, topic: str | None, partition: int | None, all_topic_partitions: bool,
                    path_to_json_file: Path | None) -> None:
    """Ask the controller to elect leaders (as kafka-leader-election / kafka-preferred-replica-election)."""
    zookeeper = exactly_one_server(zookeeper, bootstrap_server)
    try:
        partitions = requested_partitions(topic, partition, all_topic_partitions, path_to_json_file)
    except AdminError as e:
        raise click.ClickException(str(e)) from None
    if zookeeper is None:
        assert bootstrap_server is not None
        for line in elect_through_broker(bootstrap_server, admin_config, election_type.upper(), partitions):
            click.echo(line)
        return
    if election_type.lower() == "unclean":
        raise click.ClickException("Unclean leader election needs the controller's ElectLeaders API, which has no "
                                   "ZooKeeper path; use --bootstrap-server (a broker's listener) or `elect "
                                   "--unclean` at the in-process `zkcontroller cluster` prompt")
    click.echo(ZOOKEEPER_DEPRECATED)  # kafka-preferred-replica-election's, once the partitions are read
    started = run_with_client(zookeeper, lambda zk: start_preferred_election(zk, partitions))
    # ZkCommand's lines, whatever was requested: an empty list is "... path with " and "... partitions Set()"
    # (this printed nothing at all for one); kafka-leader-election --bootstrap-server prints nothing for it.
    kind, valid, invalid = kafka_election_sets(partitions, started)
    click.echo(f"Created preferred replica election path with {','.join(map(str, valid))}")
    click.echo(f"Successfully started preferred replica election for partitions {kind}({', '.join(map(str, valid))})")
    for tp in invalid:  # Kafka's line, after the others: the topic may exist without this partition
        click.echo(f"Skipping preferred replica leader election for partition {tp} since it doesn't exist.")


def kafka_election_sets(partitions: list[TopicPartition] | None, started: PreferredElectionStarted
                        ) -> tuple[str, list[TopicPartition], list[TopicPartition]]:
    """The class and order ``ZkCommand.electPreferredLeaders`` prints its partitions in, and the skipped ones':
    the file's partitions become a Scala ``Set`` (``Buffer.toSet``), which ``partition`` splits into the valid and
    the invalid. Up to four partitions that is a Set1–Set4, iterated in insertion order (the file's), and so are
    its parts (``Set(t-1, t-0)``); more make a ``HashSet``, whose parts are ``HashSet``s too, however small, in
    the trie's order (`scala_immutable_hash_set_order`). Without a file every partition is valid
    (``getAllPartitions``): a ``HashSet`` past four, else a small ``Set`` in ZooKeeper's child order, which is not
    reproduced here (sorted)."""
    source = partitions if partitions is not None else started.requested
    valid_set, invalid_set = set(started.requested), set(started.skipped)
    valid = [tp for tp in source if tp in valid_set]
    invalid = [tp for tp in source if tp in invalid_set]
    if len(source) <= 4:
        return "Set", valid, invalid
    return "HashSet", _hash_set_order(valid), _hash_set_order(invalid)


def _hash_set_order(partitions: list[TopicPartition]) -> list[TopicPartition]:
    return scala_immutable_hash_set_order(partitions, lambda tp: topic_partition_hash(tp.topic, tp.partition))


ELECTION_TYPES = {"PREFERRED": 0, "UNCLEAN": 1}
ELECTION_NOT_NEEDED = 84
ELECTION_TIMEOUT_MS = 30_000
"""LeaderElectionCommand.main: ``run(args, 30.second)``, default.api.timeout.ms 30 s, request.timeout.ms half."""


def elect_through_broker(bootstrap_server: str, admin_config: str | None, election_type: str,
                         partitions: list[TopicPartition] | None) -> list[str]:
    """LeaderElectionCommand.electLeaders over ElectLeaders: its lines, then (when some failed) the error
    ``<n> replica(s) could not be elected``, exit 1. Partitions are listed sorted where Kafka iterates hash sets,
    and the "already elected" line names those partitions (Kafka 2.8.2 prints the elected set there, a slip
    later versions fixed)."""
    async def elect(admin: AdminClient) -> dict[tuple[str, int], tuple[int, str | None]]:
        if admin_config is None:  # Kafka's own timeouts for this tool unless a file sets them
            admin.default_api_timeout_ms, admin.request_timeout_ms = ELECTION_TIMEOUT_MS, ELECTION_TIMEOUT_MS // 2
        wanted = None if partitions is None else [(tp.topic, tp.partition) for tp in partitions]
        return await admin.elect_leaders(ELECTION_TYPES[election_type], wanted)

    results = run_with_admin(bootstrap_server, admin_config, elect)
    order = sorted_partitions(TopicPartition(t, p) for t, p in results)
    succeeded = [tp for tp in order if results[(tp.topic, tp.partition)][0] == 0]
    noop = [tp for tp in order if results[(tp.topic, tp.partition)][0] == ELECTION_NOT_NEEDED]
    failed = [tp for tp in order if results[(tp.topic, tp.partition)][0] not in (0, ELECTION_NOT_NEEDED)]
    lines = []
    if succeeded:
        lines.append(f"Successfully completed leader election ({election_type}) for partitions "
                     f"{', '.join(map(str, succeeded))}")
    if noop:
        lines.append(f"Valid replica already elected for partitions {', '.join(map(str, noop))}")
    for tp in failed:
        code, message = results[(tp.topic, tp.partition)]
        lines.append(f"Error completing leader election ({election_type}) for partition: {tp}: "
                     f"{exception_string(code, message)}")
    if failed:
        for line in lines:
            click.echo(line)
        raise click.ClickException(f"{len(failed)} replica(s) could not be elected")
    return lines
