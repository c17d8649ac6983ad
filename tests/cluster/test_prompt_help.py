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
from zkcontroller.zk.kafka_zk_client import KafkaZkClient

NO_ADMIN = cast(KafkaZkClient, None)
"""Never used: the handlers are only looked up here, not run."""


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
