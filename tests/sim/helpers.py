"""Shared settings of the simulation tests: small clusters and short runs, so that CI can afford 100 seeds of
every scenario (docs/simulator.md, "Tests and regression seeds": scenarios × seeds, named invariants, a
replay command on failure)."""

from __future__ import annotations

from dataclasses import replace

from zkcontroller.sim.world import SimConfig, SimResult, run_scenario

CI = SimConfig("random", 0, brokers=3, partitions=12, duration_ms=30_000, fault_interval_ms=5_000,
               session_timeout_ms=6_000)
"""The CI size: three brokers, a dozen partitions, 30 s of faults, one every 5 s."""


def ci_config(scenario: str, seed: int, **changes: object) -> SimConfig:
    return replace(CI, scenario=scenario, seed=seed, **changes)  # type: ignore[arg-type]


def run(scenario: str, seed: int, **changes: object) -> SimResult:
    return run_scenario(ci_config(scenario, seed, **changes))


def describe_failures(results: list[SimResult]) -> str:
    """The seed, the first violation and the replay command of each failing run."""
    lines = []
    for r in results:
        first = r.violations[0]
        lines.append(f"seed {r.config.seed}: {first.invariant} at step {first.step}: {first.detail}\n"
                     f"  replay: {r.config.replay_command()}")
    return "\n".join(lines)
