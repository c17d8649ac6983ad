"""What one simulation run is given (`SimConfig`) and what it returns (`SimResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from zkcontroller.sim.invariants import SplitBrainStats, Violation
from zkcontroller.sim.zookeeper import StoreLatency

START_MS = 1_767_225_600_000
"""Virtual time starts at 2026-01-01T00:00:00Z, so the logs carry plausible dates."""

MUTATIONS = (
    "no-controller-epoch-check", "no-broker-epoch-check", "no-isr-expansion", "reassign-drops-origin-early",
    "unclean-read-as-enabled")
"""Safety checks a run can switch off at its seams, to prove the invariants catch their absence."""


@dataclass(frozen=True)
class SimConfig:
    scenario: str
    seed: int
    brokers: int = 3
    partitions: int = 20
    duration_ms: int = 60_000
    fault_interval_ms: int = 10_000
    session_timeout_ms: int = 6_000
    liveness_bound_ms: int = 60_000
    replication_factor: int = 3
    mutations: tuple[str, ...] = ()
    log_dir: Path | None = None
    store_latency: StoreLatency = field(default_factory=StoreLatency)

    def replay_command(self) -> str:
        """The ``sim run`` command that repeats this run; shown to a user through ``hints.as_typed``."""
        cmd = (f"zkcontroller sim run --scenario {self.scenario} --seed {self.seed} --brokers {self.brokers} "
               f"--partitions {self.partitions} --duration-ms {self.duration_ms} "
               f"--fault-interval-ms {self.fault_interval_ms} --session-timeout-ms {self.session_timeout_ms}")
        return cmd + "".join(f" --mutation {m}" for m in self.mutations)


@dataclass
class SimResult:
    config: SimConfig
    trace_hash: str
    violations: list[Violation]
    steps: int
    checks: int
    faults: int
    virtual_ms: int
    wall_s: float
    events: int
    split_brain: SplitBrainStats
    last_trace: list[str]
    unclean_elections: int = 0
    """Elections from outside the ISR that landed (see `invariants_unclean`)."""

    @property
    def ok(self) -> bool:
        return not self.violations
