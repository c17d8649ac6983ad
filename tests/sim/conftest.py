"""The simulator's suggested commands depend on how the process was started (``sim.hints``): tests see them
as under a plain ``zkcontroller``, whether pytest runs under ``uv run`` or not, unless a test sets ``UV``."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def not_under_uv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UV", raising=False)
