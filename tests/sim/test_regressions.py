"""Every seed that ever found a bug (in the code under test, in a scenario, or in the checker), kept with the
outcome it must have now: ``expect`` names the invariant it must violate (mutation seeds) or is null (clean)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.sim.helpers import describe_failures, run

ENTRIES: list[dict[str, Any]] = json.loads((Path(__file__).parent / "regression_seeds.json").read_text())


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e['scenario']}-{e['seed']}-{'+'.join(e['mutations'])}")
def test_regression_seed(entry: dict[str, Any]) -> None:
    overrides = {k: entry[k] for k in ("brokers", "partitions", "duration_ms", "fault_interval_ms") if k in entry}
    result = run(entry["scenario"], entry["seed"], mutations=tuple(entry["mutations"]), **overrides)
    if entry["expect"] is None:
        assert result.ok, describe_failures([result])
    else:
        assert entry["expect"] in {v.invariant for v in result.violations}, entry["why"]
