"""The cluster prompts' command tables (``zkcontroller cluster`` and ``cluster --processes``).

One table gives both the ``help`` text and the verb list an unknown command prints, so the two cannot drift
apart (the process prompt's list was a literal beside its help, and could name a verb the help did not).
"""

from __future__ import annotations

import itertools
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

    def extra_words_error(self, verb: str, args: list[str]) -> str | None:
        """The one-line error for words given to a verb that takes none (None if ``verb`` takes some, or none
        were given): ``status extra`` ran ``status`` and dropped the word without a sign."""
        usages = [arguments for row in self.rows for arguments in row.arguments(verb)]
        if not args or not usages or any(usages):
            return None
        return f"{verb} takes no arguments, got {' '.join(args)!r}; usage: {verb}"
