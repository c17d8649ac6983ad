"""Every named scenario over 100 seeds at CI size: zero violations of any invariant, liveness after heal.

A failure prints each failing seed with its invariant, step and a one-line replay command; such a seed goes
into ``regression_seeds.json`` (see test_regressions)."""

from __future__ import annotations

import pytest
from tests.sim.helpers import describe_failures, run

from zkcontroller.sim.scenarios import SCENARIOS

SEEDS = range(100)
KNOWN_FAILING: dict[str, str] = {}
"""Scenarios that find a known broker bug today (xfail, strict: the day they pass, this says so)."""


@pytest.mark.parametrize("scenario", [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[s])) if s in KNOWN_FAILING else s
    for s in sorted(SCENARIOS)])
def test_scenario_holds_every_invariant_over_100_seeds(scenario: str) -> None:
    results = [run(scenario, seed) for seed in SEEDS]
    failures = [r for r in results if r.violations]
    assert not failures, describe_failures(failures)
    assert sum(r.faults for r in results) >= len(results), "the scenario injected (almost) no faults"


def test_scenarios_inject_the_faults_they_are_named_after() -> None:
    split = run("split-brain", 11)
    assert split.split_brain.window_ms > 0  # two brokers did believe they were controller
    assert split.split_brain.stale_requests_delivered > 0
    assert split.split_brain.stale_writes_landed == 0
    storm = run("session-expiry-storm", 11)
    assert storm.faults >= 3
