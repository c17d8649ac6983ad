"""Usage errors of the Kafka-style admin commands exit 1, as Kafka's tools do.

``kafka-topics``, ``kafka-configs``, ``kafka-reassign-partitions`` and ``kafka-leader-election`` end a usage
error with ``CommandLineUtils.printUsageAndDie`` (or an ``IllegalArgumentException`` caught in ``main``), both
``Exit.exit(1)``; click's `click.UsageError` exits 2. The command classes here keep click's message (on stderr,
with the usage line) and give it Kafka's status, whether the error comes from parsing the command's arguments
(an unknown or missing option, a bad choice, a group's unknown subcommand) or from its callback. Both happen
inside the command's own ``make_context``/``invoke``, so it holds when the command runs under ``zkcontroller``
as well as on its own; the top-level group and the other commands keep click's 2. A connect string ZooKeeper
refuses is no usage error in Kafka's tools, nor here (`bad_connect_string`); a ZooKeeper slow to answer gets one
"Connecting to ZooKeeper" line, from every command that waits for one (`waiting_notice`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from zkcontroller.admin.java_numbers import java_parse_int

KAFKA_USAGE_EXIT_CODE = 1
"""``CommandLineUtils.printUsageAndDie``'s ``Exit.exit(1)``."""


class _KafkaUsageExit(click.Command):
    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as e:
            e.exit_code = KAFKA_USAGE_EXIT_CODE  # type: ignore[misc]  # click types it per class; this one is Kafka's
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as e:
            e.exit_code = KAFKA_USAGE_EXIT_CODE  # type: ignore[misc]  # click types it per class; this one is Kafka's
            raise


class KafkaCommand(_KafkaUsageExit):
    """A `click.Command` whose usage errors exit 1."""


class KafkaGroup(_KafkaUsageExit, click.Group):
    """A `click.Group` whose usage errors, and its subcommands', exit 1."""


class JavaInt(click.ParamType):
    """An option Kafka's tool declares ``ofType(classOf[Integer])``: joptsimple converts it with
    ``Integer.valueOf`` (so ``+3`` and ``03`` pass; `` 3``, ``3_0`` and values past 32 bits do not, though
    click's ``int`` would take them), refusing with joptsimple's ``Cannot parse argument`` message."""

    name = "integer"
    bits = 32

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):  # a default
            return value
        parsed = java_parse_int(str(value), self.bits)
        if parsed is None:
            option = param.opts[0].lstrip("-") if param is not None and param.opts else "?"
            self.fail(f"Cannot parse argument '{value}' of option {option}", param, ctx)
        return parsed


JAVA_INT = JavaInt()


class JavaLong(JavaInt):
    """``ofType(classOf[Long])``: ``Long.valueOf``, 64 bits."""

    name = "long"
    bits = 64


JAVA_LONG = JavaLong()


def bad_connect_string(error: ValueError) -> click.ClickException:
    """A connect string ZooKeeper refuses: one ``Error:`` line naming it with ZooKeeper's reason, exit 1.

    Kafka 2.8's tools build their ZooKeeper client after the options are parsed, so it is no usage error there:
    ``kafka-topics`` dies with the uncaught ``NumberFormatException: For input string: "x"``, ``kafka-configs``
    prints its message, ``kafka-reassign-partitions`` ``Error: <message>`` and a stack trace; all exit 1."""
    return click.ClickException(str(error))


def waiting_notice(zookeeper: str | None) -> Callable[[], None]:
    """The ``on_slow_connect`` hook that says on stderr that a connection to ``zookeeper`` has not come up yet (the
    command's error follows at the connect bound if it never does). One hook for the admin commands, ``demo`` and
    ``cluster``, so they all say it in the same words after the same wait."""
    return lambda: click.echo(f"Connecting to ZooKeeper at {zookeeper} ...", err=True)
