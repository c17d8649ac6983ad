"""Commands the simulator suggests (replay a seed, analyze a run's logs), spelled as the user can type them."""

from __future__ import annotations

import os

PROGRAM = "zkcontroller"


def as_typed(command: str) -> str:
    """``command`` (written ``zkcontroller ...``, as stored in a sweep's table) as the user should type it.

    Under ``uv run`` (uv sets ``UV``, the path of its binary, in every process it starts) the virtualenv's
    scripts need not be on the shell's PATH, and the README says ``uv run zkcontroller ...``: hints say so too.
    Otherwise (an activated virtualenv, an installed wheel) plain ``zkcontroller`` is what started this one.
    """
    if os.environ.get("UV") and command.startswith(PROGRAM + " "):
        return f"uv run {command}"
    return command
