"""Checks on the directories a command will write, made before any work starts."""

from __future__ import annotations

from pathlib import Path


def ensure_writable_dir(path: Path) -> None:
    """Create ``path`` and write (then remove) a file in it, so that a directory that cannot be written fails
    now, in one line, and not as a traceback after minutes of work. Raises `OSError`."""
    path.mkdir(parents=True, exist_ok=True)
    probe = path / ".zkcontroller-write-test"
    probe.write_text("")
    probe.unlink()
