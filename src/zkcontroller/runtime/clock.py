"""The real clock, injected where the embedded store and controller code take a ``clock``."""

from __future__ import annotations

import time


def wall_clock_ms() -> int:
    """Milliseconds since the Unix epoch, as ZooKeeper stamps ctime/mtime."""
    return time.time_ns() // 1_000_000
