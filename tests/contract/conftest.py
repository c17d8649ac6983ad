"""Fixtures for the store contract tests: a session on the parametrized ``backend``, closed after."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from zkcontroller.coordination.api import CoordinationSession
from zkcontroller.coordination.backend import CoordinationBackend


@pytest.fixture
async def session(backend: CoordinationBackend) -> AsyncIterator[CoordinationSession]:
    """A new session on ``backend``; closed when the test ends."""
    s = await backend.new_session()
    yield s
    await s.close()
