"""log4j's TRACE (5) is defined once, in `runtime.log_lines` (below every layer that logs at it), and named there:
a module logging at TRACE prints ``TRACE`` whatever else was imported, not Python's ``Level 5``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "zkcontroller"


def test_trace_is_defined_once() -> None:
    defining = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                if re.search(r"^TRACE\s*(?::[^=]*)?=", p.read_text(encoding="utf-8"), re.MULTILINE)}
    assert defining == {"runtime/log_lines.py"}


def test_a_module_logging_at_trace_names_the_level_on_its_own() -> None:
    """The socket server alone (no controller module imported) logs Selector's TRACE line as ``TRACE``."""
    code = ("import logging, sys, zkcontroller.runtime.socket_server as s\n"
            "assert 'zkcontroller.controller.event_log' not in sys.modules\n"
            "print(logging.getLevelName(s.TRACE))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "TRACE"
