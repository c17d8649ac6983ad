"""Real Kafka lines read at run time from the shared logs (``../shared/kafka-logs``), never copied into the repo.

A test that means "we parse (or produce) a REAL Kafka line" names the sample file and a short key (template words)
and gets the file's first line holding that key. The shared logs are not part of this repository: when the whole
directory is absent the test is skipped, as the other sample-reading tests are; a missing file or a key no line holds
means the shared logs changed, and fails the test naming both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_LOGS = Path(__file__).resolve().parents[1] / ".." / "shared" / "kafka-logs"


def shared_line(name: str, key: str) -> str:
    """The first line of ``samples/<name>`` (under the shared Kafka logs) that contains ``key``."""
    if not SHARED_LOGS.is_dir():
        pytest.skip(f"shared Kafka logs not found at {SHARED_LOGS} (../shared is not checked out)")
    path = SHARED_LOGS / "samples" / name
    if not path.is_file():
        pytest.fail(f"shared Kafka log {path} is missing: the shared logs changed, pick another sample")
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if key in line:
            return line
    pytest.fail(f"no line of shared Kafka log {path} contains {key!r}: the shared logs changed")
