"""Both cluster prompts' ``help`` and their unknown-verb list come from one table each (`prompt_help`); these
check each table against the verbs its shell serves, so neither a served verb without help nor help for a verb
the shell does not know can come back."""

from __future__ import annotations

import random
from pathlib import Path
from typing import cast

import pytest

from zkcontroller.cluster import cluster_shell, process_cluster
from zkcontroller.cluster.cluster_shell import ClusterShell
from zkcontroller.cluster.local_cluster import LocalCluster
from zkcontroller.cluster.process_cluster import ProcessCluster, ProcessClusterShell
from zkcontroller.cluster.prompt_help import CommandTable, command
from zkcontroller.cluster.zookeeper_ensemble import ZooKeeperEnsemble
from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.errors import ConnectionLossError
from zkcontroller.runtime.clock import wall_clock_ms
from zkcontroller.zk.errors import ZnodeDecodeError
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

NO_ADMIN = KafkaZkClient(cast(CoordinationSession, None), wall_clock_ms)
"""Never asked anything: the handlers are looked up here, or refuse their arguments before reading ZooKeeper
(a shell only puts its write recorder under the session, `zk_outage.recorded`)."""


def served(prompt: str, tmp_path: Path) -> set[str]:
    """The verbs the prompt's shell answers: its handlers and ``quit`` (which `run_command` answers itself)."""
    if prompt == "processes":
        shell = ProcessClusterShell(ProcessCluster([1], tmp_path), NO_ADMIN, lambda _line: None)
        return {*shell.handlers(), "quit"}
    in_process = ClusterShell(cast(LocalCluster, None), NO_ADMIN, lambda _line: None, random.Random(0))
    return {*in_process.handlers(), "quit"}


@pytest.mark.parametrize(("prompt", "table"), [("processes", process_cluster.COMMANDS),
                                                ("in-process", cluster_shell.COMMANDS)])
def test_every_verb_has_help_and_every_help_entry_is_a_verb(prompt: str, table: CommandTable,
                                                             tmp_path: Path) -> None:
    verbs = served(prompt, tmp_path)
    helped = set(table.verbs())
    assert verbs - helped == set(), "verbs the shell serves that help does not list"
    assert helped - verbs == set(), "verbs help lists that the shell answers as unknown"
    # each row starts a help line with its usage, and says what it does (help | quit needs no words)
    help_lines = table.help().splitlines()
    for row in table.rows:
        assert any(line.startswith("  " + " | ".join(row.usages)) for line in help_lines), row
        assert row.text or set(row.verbs) <= {"help", "quit"}, f"no description for {row.verbs}"


BAD_LINES = {
    "status": "status extra", "zk-status": "zk-status all", "help": "help me", "quit": "quit now",
    "create": "create orders 2 2 compact", "describe": "describe a b", "elect": "elect a b", "delete": "delete",
    "fail-log-dir": "fail-log-dir 1", "produce": "produce --rate",
    **{verb: f"{verb} x" for verb in ("stop", "start", "kill", "expire", "pause", "resume", "zk-kill", "zk-start")},
}
"""For each verb, a line whose words it refuses before it reaches a broker or ZooKeeper."""


@pytest.mark.parametrize(("prompt", "table"), [("processes", process_cluster.COMMANDS),
                                                ("in-process", cluster_shell.COMMANDS)])
async def test_every_usage_error_is_its_help_rows_usage(prompt: str, table: CommandTable, tmp_path: Path) -> None:
    """Each verb wrote its usage out beside the table, and they had drifted: ``usage: stop BROKER_ID`` against
    help's ``stop ID``, ``create ... [REPLICATION_FACTOR]`` against ``[RF]``."""
    out: list[str] = []
    if prompt == "processes":
        cluster = ProcessCluster([1], tmp_path)
        cluster.ensemble = ZooKeeperEnsemble(tmp_path, 3)  # never started: zk-kill's usage is checked first
        shell: ClusterShell | ProcessClusterShell = ProcessClusterShell(cluster, NO_ADMIN, out.append)
    else:
        shell = ClusterShell(cast(LocalCluster, None), NO_ADMIN, out.append, random.Random(0))
    for verb in table.verbs():
        out.clear()
        assert await shell.run_command(BAD_LINES[verb])
        assert len(out) == 1 and out[0].startswith("error: ") and out[0].endswith(table.usage(verb)), (verb, out)


def test_a_verbs_usage_is_each_of_its_usages_in_help() -> None:
    table = CommandTable((
        command("stop ID", "kill ID", text="orderly / hard"),
        command("produce TOPIC RECORDS", "produce --stop [TOPIC]", text="records"),
        command("help", "quit (or Ctrl-D)"),
    ), column=12)
    assert table.usage("kill") == "usage: kill ID"  # not its row's other verb
    assert table.usage("produce") == "usage: produce TOPIC RECORDS | produce --stop [TOPIC]"
    assert table.usage("quit") == "usage: quit"  # help's note is no argument
    with pytest.raises(KeyError):
        table.usage("expire")


def test_the_ensemble_verbs_say_in_help_that_they_need_an_ensemble() -> None:
    """The help is the same with or without --zookeeper-ensemble: each zk-* row names the option it needs (a
    user with --zookeeper tried zk-status from the help and met an error)."""
    from zkcontroller.cluster.prompt_help import PROCESSES

    rows = [line for line in PROCESSES.help().splitlines() if line.strip().startswith("zk-")]
    assert len(rows) == 2
    assert all(row.endswith("(--zookeeper-ensemble)") for row in rows), rows


def test_the_table_lays_out_rows_in_columns() -> None:
    table = CommandTable((
        command("status", text="what runs"),
        command("stop ID", "kill ID", text=("orderly /", "hard")),
        command("produce TOPIC RECORDS", "produce --stop", text="long usage: text below"),
        command("help", "quit"),
    ), column=12)
    assert table.help().splitlines() == [
        "commands:",
        "  status      what runs",
        "  stop ID | kill ID",
        "              orderly /",
        "              hard",
        "  produce TOPIC RECORDS | produce --stop",
        "              long usage: text below",
        "  help | quit",
    ]
    assert table.verbs() == ("status", "stop", "kill", "produce", "help", "quit")


async def test_a_verb_failing_on_zookeeper_is_one_error_line_and_the_prompt_goes_on(tmp_path: Path) -> None:
    """On the process prompt too (it stopped the whole cluster on a ZooKeeper error before both prompts shared
    `prompt_error_text`): a lost quorum or a corrupt znode under ``describe`` is one line; a bug is raised."""
    lines: list[str] = []
    shell = ProcessClusterShell(ProcessCluster([1], tmp_path), NO_ADMIN, lines.append)
    failures: list[Exception] = [ConnectionLossError("/brokers/topics"),
                                 ZnodeDecodeError("/brokers/topics/t", "no JSON value"), RuntimeError("a bug")]

    async def describe(_args: list[str]) -> None:
        raise failures.pop(0)

    shell.handlers = lambda: {"describe": describe}  # type: ignore[method-assign]
    assert await shell.run_command("describe") is True
    assert await shell.run_command("describe t") is True
    assert lines == ["error: ZooKeeper CONNECTION_LOSS at /brokers/topics: CONNECTION_LOSS for /brokers/topics "
                     "(nothing else was done; try again once ZooKeeper answers)",
                     "error: Malformed znode /brokers/topics/t: no JSON value"]
    with pytest.raises(RuntimeError, match="a bug"):
        await shell.run_command("describe")


@pytest.mark.parametrize(("line", "hint"), [
    ("produce t 10", "error: produce is not a command of this prompt: the brokers are processes here: produce with "
                     "a Kafka client against their listeners, e.g. kcat -P -b {bootstrap} -t TOPIC"),
    ("fail-log-dir 1 /tmp/kafka-logs-0", "error: fail-log-dir is not a command of this prompt: a broker process's "
                                         "log dirs cannot be failed from outside it: use the in-process prompt "
                                         "(zkcontroller cluster, without --processes)"),
    ("elect --unclean t", "error: unclean election needs the controller's ElectLeaders API, which has no ZooKeeper "
                          "path; send it to a broker: zkcontroller leader-election --bootstrap-server {bootstrap} "
                          "--election-type unclean --all-topic-partitions (or --topic TOPIC --partition N)"),
])
async def test_the_processes_prompt_says_how_to_do_what_only_the_in_process_one_does(
    tmp_path: Path, line: str, hint: str
) -> None:
    """They were unknown commands there, though leader-election's refusal of --election-type unclean sends the
    user to a prompt's ``elect --unclean``."""
    lines: list[str] = []
    cluster = ProcessCluster([1, 2], tmp_path)
    shell = ProcessClusterShell(cluster, NO_ADMIN, lines.append)
    assert await shell.run_command(line)
    assert lines == [hint.format(bootstrap=cluster.bootstrap)]
