"""Proof that the checker can fail: with a safety check switched off, split-brain reports violations on most
seeds, of the invariant that check protects. (The switches act at the simulator's seams; nothing global.)"""

from __future__ import annotations

import pytest
from tests.sim.helpers import run

SEEDS = range(20)


@pytest.mark.parametrize(
    ("mutation", "invariant"),
    [
        ("no-controller-epoch-check", "no-stale-controller-write"),
        ("no-broker-epoch-check", "broker-applies-no-stale-request"),
    ],
)
def test_split_brain_catches_the_mutation_on_most_seeds(mutation: str, invariant: str) -> None:
    results = [run("split-brain", seed, mutations=(mutation,)) for seed in SEEDS]
    caught = [r for r in results if any(v.invariant == invariant for v in r.violations)]
    assert len(caught) > len(results) * 0.8, f"only {len(caught)}/{len(results)} seeds caught {mutation}"


@pytest.mark.parametrize("mutation", ["no-controller-epoch-check", "no-broker-epoch-check"])
def test_the_same_seeds_are_clean_without_the_mutation(mutation: str) -> None:
    assert all(run("split-brain", seed).ok for seed in range(5))


def test_a_landed_stale_write_is_counted_in_the_split_brain_figures() -> None:
    result = run("split-brain", 0, mutations=("no-controller-epoch-check",))
    assert result.split_brain.stale_writes_landed >= 1
    assert result.violations[0].invariant == "no-stale-controller-write"
