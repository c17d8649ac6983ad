"""The cluster prompts' command tables (``zkcontroller cluster``: `IN_PROCESS`; ``cluster --processes``:
`PROCESSES`).

One table gives the ``help`` text, the verb list an unknown command prints and each verb's usage error, so they
cannot drift apart (the process prompt's list was a literal beside its help, and could name a verb the help did
not; each verb wrote its usage out, ``stop BROKER_ID`` beside help's ``stop ID``).
"""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from zkcontroller.admin.errors import AdminError
from zkcontroller.coordination.errors import ZkError
from zkcontroller.zk.errors import ZnodeDecodeError

Handler = Callable[[list[str]], Awaitable[None]]
"""A verb's handler, called with the words after it."""


def prompt_error_text(e: Exception) -> str | None:
    """Both prompts' one line for a verb's failure (None: a bug, raised): a refusal, a timeout or a failed signal
    as it is; the store gone or changed under the verb (a ``describe`` after ``zk-kill`` took the quorum, a corrupt
    znode), said so, with nothing else done and the cluster left running."""
    if isinstance(e, ZkError):
        return (f"ZooKeeper {e.code.name}{f' at {e.path}' if e.path else ''}: {e} "
                "(nothing else was done; try again once ZooKeeper answers)")
    if isinstance(e, (AdminError, ValueError, TimeoutError, OSError, ZnodeDecodeError)):
        return str(e)
    return None


@dataclass(frozen=True)
class Command:
    """One help row: its usage alternatives (each starting with its verb, shown joined by `` | ``) and the
    description's lines (none: the usage says it all)."""

    usages: tuple[str, ...]
    text: tuple[str, ...] = ()

    @property
    def verbs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(usage.split()[0] for usage in self.usages))

    def arguments(self, verb: str) -> list[list[str]]:
        """The argument words of each of ``verb``'s usages (a note in parentheses, ``(or Ctrl-D)``, is not one)."""
        shown = []
        for usage in self.usages:
            words = usage.split()
            if words[0] == verb:
                shown.append(list(itertools.takewhile(lambda word: not word.startswith("("), words[1:])))
        return shown


def command(*usages: str, text: tuple[str, ...] | str = ()) -> Command:
    return Command(usages, (text,) if isinstance(text, str) else text)


@dataclass(frozen=True)
class CommandTable:
    """The rows in help order; ``column``: where descriptions start (a longer usage puts its on the next line)."""

    rows: tuple[Command, ...]
    column: int

    def help(self) -> str:
        lines = ["commands:"]
        indent = " " * (2 + self.column)
        for row in self.rows:
            usage = "  " + " | ".join(row.usages)
            if not row.text:
                lines.append(usage)
                continue
            first, *rest = row.text
            if len(usage) < len(indent):
                lines.append(usage.ljust(len(indent)) + first)
            else:
                lines += [usage, indent + first]
            lines += [indent + line for line in rest]
        return "\n".join(lines)

    def verbs(self) -> tuple[str, ...]:
        """Every verb the help names, in its order, once."""
        return tuple(dict.fromkeys(verb for row in self.rows for verb in row.verbs))

    async def run_line(self, line: str, handlers: Mapping[str, Handler], out: Callable[[str], None],
                       error_text: Callable[[Exception], str | None],
                       elsewhere: Mapping[str, str] | None = None) -> bool:
        """Run one prompt line; False when it asks to quit (``quit``, ``exit``). A line that does not parse, an
        unknown verb, words given to a verb that takes none, and a handler's exception that ``error_text`` turns
        into a message are each one ``error:`` line, and the prompt goes on; an exception it does not know
        (None) is a bug, and is raised. ``elsewhere``: verbs of the other prompt this one lacks, each with how to
        do it instead (it answered them as unknown, though an admin command's error sent the user to them)."""
        try:
            words = shlex.split(line)
        except ValueError as e:
            out(f"error: {e}")
            return True
        if not words:
            return True
        name, args = words[0], words[1:]
        refused = self.extra_words_error("quit" if name == "exit" else name, args)
        if refused is not None:
            out(f"error: {refused}")
            return True
        if name in ("quit", "exit"):
            return False
        handler = handlers.get(name)
        if handler is None and elsewhere and name in elsewhere:
            out(f"error: {name} is not a command of this prompt: {elsewhere[name]}")
            return True
        if handler is None:  # one line, as every other error here; the lines of help buried the mistake typed
            out(f"error: unknown command {name!r}; commands: {', '.join(self.verbs())} (`help` says what each does)")
            return True
        try:
            await handler(args)
        except Exception as e:
            message = error_text(e)
            if message is None:
                raise
            out(f"error: {message}")
        return True

    def usage(self, verb: str) -> str:
        """``usage: `` and ``verb``'s usages as help shows them (without a note in parentheses), joined by
        `` | ``: every usage error of the verb says this. KeyError for a verb help does not name."""
        usages = [" ".join([verb, *arguments]) for row in self.rows for arguments in row.arguments(verb)]
        if not usages:
            raise KeyError(verb)
        return "usage: " + " | ".join(usages)

    def extra_words_error(self, verb: str, args: list[str]) -> str | None:
        """The one-line error for words given to a verb that takes none (None if ``verb`` takes some, or none
        were given): ``status extra`` ran ``status`` and dropped the word without a sign."""
        usages = [arguments for row in self.rows for arguments in row.arguments(verb)]
        if not args or not usages or any(usages):
            return None
        return f"{verb} takes no arguments, got {' '.join(args)!r}; {self.usage(verb)}"


IN_PROCESS = CommandTable((
    command("status", text="controller, epoch, brokers and their listeners"),
    command("create TOPIC [PARTITIONS [RF]]", text=("create a topic (Kafka's replica placement; defaults 3 and 2,",
                                                 "1 with one broker registered)")),
    command("describe [TOPIC]", text="kafka-topics --describe"),
    command("stop ID", "start ID", text="orderly broker shutdown / start (a new ID, at most 1000, adds one)"),
    command("kill ID", text=("crash a broker (on the embedded store its session is left to time",
                             "out; a real ZooKeeper's is expired at once)")),
    command("expire ID", text="expire a broker's ZooKeeper session"),
    command("fail-log-dir ID DIR", text=("fail one of a broker's log dirs (its replicas there go offline; waits",
                                         "until the controller has moved their leadership)")),
    command("produce TOPIC RECORDS", "produce TOPIC --rate RATE", "produce --stop [TOPIC]",
            text="append records on the leaders (followers fetch them)"),
    command("elect [--unclean] [TOPIC]", text=("preferred-replica election (all partitions, or one topic's;",
                                               "says which kept another leader, and why); --unclean: unclean",
                                               "election through the controller's ElectLeaders API")),
    command("delete TOPIC", text=("mark the topics TOPIC matches for deletion (a regular expression,",
                                  "as describe and kafka-topics take it; the controller deletes them)")),
    command("help", "quit (or Ctrl-D)"),
), column=40)
"""``zkcontroller cluster``'s prompt (`cluster_shell.ClusterShell.handlers` must serve exactly these verbs)."""

PROCESSES = CommandTable((
    command("status", text="controller, epoch, and each broker process (pid, port, state)"),
    command("create TOPIC [PARTITIONS [RF]]", text=("create a topic through ZooKeeper (defaults 3 and 2,",
                                                 "1 with one broker registered)")),
    command("describe [TOPIC]", text="kafka-topics --describe, from ZooKeeper"),
    command("stop ID", "kill ID", text="SIGTERM (orderly stop) / SIGKILL (hard failure)"),
    command("pause ID", "resume ID", text="SIGSTOP / SIGCONT"),
    command("start ID", text="start a stopped or killed broker again"),
    command("elect [TOPIC]", text=("preferred-replica election through ZooKeeper (all partitions, or one",
                                   "topic's; says which kept another leader, and why)")),
    command("delete TOPIC", text=("mark the topics TOPIC matches for deletion (a regular expression, as",
                                  "describe takes it; the controller deletes them)")),
    command("zk-status", text="each ZooKeeper server: address, pid, leader/follower (--zookeeper-ensemble)"),
    command("zk-kill ID", "zk-start ID", text="SIGKILL one ZooKeeper server / start it again (--zookeeper-ensemble)"),
    command("help", "quit"),
), column=32)
"""``zkcontroller cluster --processes``' prompt (`process_cluster.ProcessClusterShell.handlers` must serve exactly
these verbs)."""
