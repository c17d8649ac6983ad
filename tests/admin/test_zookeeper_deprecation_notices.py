"""The "--zookeeper is deprecated" notices of Kafka 2.8.2's tools, word for word, on stdout, where Kafka prints
them: ConfigCommand and PreferredReplicaLeaderElectionCommand two lines, ReassignPartitionsCommand its own line
(and one more for ``--verify``), TopicCommand none; a usage error comes before any of them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.contract.admin.test_admin_cli import Cli, cli  # noqa: F401  (the fixture, on a real ZooKeeper)

from zkcontroller.admin.cli import topics
from zkcontroller.admin.configs import configs
from zkcontroller.admin.leader_election import leader_election
from zkcontroller.admin.reassign_cli import reassign

pytestmark = [pytest.mark.zookeeper, pytest.mark.usefixtures("restored_logging")]

CONFIGS_NOTICE = ["Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.",
                  "Use --bootstrap-server instead to specify a broker to connect to."]
REASSIGN_NOTICE = "Warning: --zookeeper is deprecated, and will be removed in a future version of Kafka."
VERIFY_NOTICE = ("Warning: because you are using the deprecated --zookeeper option, the results may be incomplete.  "
                 "Use --bootstrap-server instead for more accurate results.")


async def test_configs_prints_kafkas_two_lines_first_for_every_entity_type(cli: Cli) -> None:  # noqa: F811
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    for args in (("--describe", "--topic", "t"), ("--describe", "--entity-type", "brokers", "--entity-default"),
                 ("--alter", "--topic", "t", "--add-config", "retention.ms=5")):
        result = await cli(configs, *args)
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[:2] == CONFIGS_NOTICE, args
        assert result.stderr == ""
    refused = await cli(configs, "--alter", "--topic", "t", "--add-config", "retention.ms=x")  # after checkArgs
    assert refused.stdout.splitlines() == CONFIGS_NOTICE and "Error: " in refused.stderr
    usage = await cli(configs, "--alter", "--topic", "t")  # checkArgs refuses it: no notice
    assert (usage.exit_code, usage.stdout) == (1, "")


async def test_reassign_prints_its_line_and_verify_one_more(cli: Cli, tmp_path: Path) -> None:  # noqa: F811
    assert (await cli(topics, "create", "t", "--replica-assignment", "1")).exit_code == 0
    listed = await cli(reassign, "--list")
    assert listed.stdout.splitlines()[0] == REASSIGN_NOTICE
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1]}]}))
    verified = await cli(reassign, "--verify", "--reassignment-json-file", str(plan))
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.splitlines()[:3] == [REASSIGN_NOTICE, VERIFY_NOTICE, "Status of partition reassignment:"]
    usage = await cli(reassign, "--verify")  # checkRequiredArgs refuses it first
    assert (usage.exit_code, usage.stdout) == (1, "")


async def test_leader_election_prints_the_zookeeper_path_notice(cli: Cli) -> None:  # noqa: F811
    assert (await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")).exit_code == 0
    argv = ["--zookeeper", cli.zookeeper, "--election-type", "preferred", "--topic", "t", "--partition", "0"]
    elected = await asyncio.to_thread(CliRunner().invoke, leader_election, argv, catch_exceptions=False)
    assert elected.exit_code == 0, elected.output
    assert elected.stdout.splitlines()[:3] == [*CONFIGS_NOTICE, "Created preferred replica election path with t-0"]


async def test_topics_prints_none(cli: Cli) -> None:  # noqa: F811
    created = await cli(topics, "create", "t", "--partitions", "1", "--replication-factor", "1")
    assert created.output == "Created topic t.\n"
