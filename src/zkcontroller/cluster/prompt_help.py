"""The cluster prompts' command tables (``zkcontroller cluster`` and ``cluster --processes``).

One table gives both the ``help`` text and the verb list an unknown command prints, so the two cannot drift
apart (the process prompt's list was a literal beside its help, and could name a verb the help did not).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One help row: its usage alternatives (each starting with its verb, shown joined by `` | ``) and the
    description's lines (none: the usage says it all)."""

    usages: tuple[str, ...]
    text: tuple[str, ...] = ()

    @property
    def verbs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(usage.split()[0] for usage in self.usages))


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
