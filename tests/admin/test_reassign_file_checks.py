"""The version and log_dirs checks of Kafka 2.8.2's ReassignPartitionsCommand on a reassignment or topics-to-move
file (parsePartitionReassignmentData, parseTopicsData, executeAssignment/verifyAssignment with a ZooKeeper
client), on both ``--zookeeper`` and ``--bootstrap-server``. Each refusal comes before any connection: nothing
listens at the addresses given."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from zkcontroller.admin import reassign_cli
from zkcontroller.admin.deprecation import REASSIGN_ZOOKEEPER_DEPRECATED
from zkcontroller.admin.reassign import (
    ReassignmentInputError,
    parse_reassignment_file,
    parse_topics_to_move_json,
)
from zkcontroller.cli import main
from zkcontroller.model import TopicPartition

pytestmark = [pytest.mark.usefixtures("restored_logging"), pytest.mark.timeout(60)]

SERVERS = [["--zookeeper", "127.0.0.1:1"], ["--bootstrap-server", "127.0.0.1:1"]]


def _partitions(**extra: object) -> list[dict[str, object]]:
    return [{"topic": "good", "partition": 2, "replicas": [1, 3], **extra}]


@pytest.mark.parametrize(("document", "message"), [
    ({"version": 2, "partitions": _partitions()}, "Not supported version field value 2"),
    ({"version": 0, "partitions": _partitions()}, "Not supported version field value 0"),
    ({"version": "abc", "partitions": _partitions()},
     'f.json: "version": Expected `Int` value, received "abc"'),
    ({"version": 1.0, "partitions": _partitions()}, 'f.json: "version": Expected `Int` value, received 1.0'),
    ({"version": None, "partitions": _partitions()}, 'f.json: "version": Expected `Int` value, received null'),
    ({"version": 1, "partitions": _partitions(log_dirs=["any"])},
     "Size of replicas list List(1, 3) is different from size of log dirs list List(any) for partition good-2"),
    ({"partitions": _partitions(log_dirs=[])},
     "Size of replicas list List(1, 3) is different from size of log dirs list List() for partition good-2"),
    ({"partitions": _partitions(log_dirs="any")}, 'f.json: partitions[0]: "log_dirs" must be a list of strings'),
    ({"partitions": _partitions(log_dirs=["any", 3])}, 'f.json: partitions[0]: "log_dirs" must be a list of strings'),
])
def test_a_reassignment_file_kafka_refuses_is_refused(document: dict[str, object], message: str) -> None:
    with pytest.raises(ReassignmentInputError) as raised:
        parse_reassignment_file(json.dumps(document), "f.json")
    assert str(raised.value) == message


def test_log_dirs_are_read_and_any_is_no_move() -> None:
    targets, log_dirs = parse_reassignment_file(json.dumps({"version": 1, "partitions": [
        *_partitions(log_dirs=["any", "/data/b"]),
        {"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["any"]},
        {"topic": "u", "partition": 0, "replicas": [2]}]}), "f.json")
    assert targets == {TopicPartition("good", 2): (1, 3), TopicPartition("t", 0): (1,), TopicPartition("u", 0): (2,)}
    assert log_dirs == {(TopicPartition("good", 2), 3): "/data/b"}


@pytest.mark.parametrize(("document", "message"), [
    ({"version": 2, "topics": [{"topic": "a"}]}, "Not supported version field value 2"),
    ({"version": "1", "topics": [{"topic": "a"}]}, 't.json: "version": Expected `Int` value, received "1"'),
])
def test_a_topics_to_move_file_with_another_version_is_refused(document: dict[str, object], message: str) -> None:
    with pytest.raises(ReassignmentInputError) as raised:
        parse_topics_to_move_json(json.dumps(document), "t.json")
    assert str(raised.value) == message
    assert parse_topics_to_move_json(json.dumps({"topics": [{"topic": "a"}]}), "t.json") == ["a"]


def _run(argv: list[str]) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["reassign", *argv], env={"ZKCONTROLLER_ZOOKEEPER": None})
    return result.exit_code, result.output.splitlines()


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("action", ["--execute", "--verify"])
def test_both_paths_refuse_a_version_2_file(tmp_path: Path, server: list[str], action: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"version": 2, "partitions": _partitions()}))
    code, lines = _run([action, "--reassignment-json-file", str(path), *server])
    assert (code, lines[-1]) == (1, "Error: Not supported version field value 2")


@pytest.mark.parametrize("server", SERVERS)
def test_generate_refuses_a_version_2_topics_file(tmp_path: Path, server: list[str]) -> None:
    path = tmp_path / "topics.json"
    path.write_text(json.dumps({"version": 2, "topics": [{"topic": "a"}]}))
    code, lines = _run(["--generate", "--topics-to-move-json-file", str(path), "--broker-list", "1,2", *server])
    assert (code, lines[-1]) == (1, "Error: Not supported version field value 2")


@pytest.mark.parametrize("action", ["--execute", "--verify", "--cancel"])
def test_zookeeper_path_refuses_a_log_dir_move_with_kafkas_words(tmp_path: Path, action: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"version": 1, "partitions": _partitions(log_dirs=["any", "/data/b"])}))
    code, lines = _run([action, "--reassignment-json-file", str(path), "--zookeeper", "127.0.0.1:1"])
    assert (code, lines) == (1, [REASSIGN_ZOOKEEPER_DEPRECATED,
                                 "Error: bootstrap-server needs to be provided when replica reassignments are "
                                 "present."])


@pytest.mark.parametrize("action", ["--execute", "--verify", "--cancel"])
def test_bootstrap_path_refuses_a_log_dir_move_before_writing(tmp_path: Path, action: str) -> None:
    """Kafka would start the reassignment, then fail on AlterReplicaLogDirs, which these brokers do not serve."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"version": 1, "partitions": _partitions(log_dirs=["any", "/data/b"])}))
    code, lines = _run([action, "--reassignment-json-file", str(path), "--bootstrap-server", "127.0.0.1:1"])
    assert code == 1
    assert lines[-1] == (f"Error: {path}: partition good-2 puts replica 3 in log dir /data/b: these brokers do not "
                         'move replicas between log directories (they serve no AlterReplicaLogDirs); use "any" or '
                         "leave out log_dirs")


def test_any_log_dirs_pass_to_the_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """log_dirs all "any" (as --generate writes them) is a plain reassignment: the command goes on to ZooKeeper."""
    def reached(*_: object) -> None:
        raise click.ClickException("reached ZooKeeper")

    monkeypatch.setattr(reassign_cli, "run_with_client", reached)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"version": 1, "partitions": _partitions(log_dirs=["any", "any"])}))
    code, lines = _run(["--verify", "--reassignment-json-file", str(path), "--zookeeper", "127.0.0.1:1"])
    assert (code, lines[-1]) == (1, "Error: reached ZooKeeper")
