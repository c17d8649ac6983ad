"""What `sim run` prints: the trace hash, the invariants checked, faults, times, the split-brain figures and,
on a violation, the invariant, the step, the seed and a one-line replay command."""

from __future__ import annotations

from zkcontroller.sim.hints import as_typed
from zkcontroller.sim.invariants import INVARIANTS, LIVENESS
from zkcontroller.sim.invariants_admin import ADMIN_INVARIANTS
from zkcontroller.sim.invariants_idempotence import IDEMPOTENCE_INVARIANTS
from zkcontroller.sim.invariants_unclean import UNCLEAN_INVARIANTS
from zkcontroller.sim.world import SimResult

ALL_INVARIANTS = (*INVARIANTS, *ADMIN_INVARIANTS, *UNCLEAN_INVARIANTS, *IDEMPOTENCE_INVARIANTS, LIVENESS)


def format_result(result: SimResult) -> str:
    config = result.config
    lines = [
        f"scenario        {config.scenario}  seed {config.seed}  brokers {config.brokers}  "
        f"partitions {config.partitions}" + (f"  mutations {','.join(config.mutations)}" if config.mutations else ""),
        f"trace hash      {result.trace_hash}",
        f"invariants      {', '.join(ALL_INVARIANTS)}",
        f"checks          {result.checks} loop steps, {result.steps} trace records",
        f"faults          {result.faults}",
        f"virtual time    {result.virtual_ms / 1000:.3f} s",
        f"wall time       {result.wall_s:.3f} s ({result.virtual_ms / 1000 / max(result.wall_s, 1e-9):.0f}x real time)",
        f"events          {result.events}",
    ]
    if result.unclean_elections:
        lines.append(f"unclean         {result.unclean_elections} leader elections from outside the ISR")
    sb = result.split_brain
    if config.scenario == "split-brain" or sb.window_ms:
        lines.append(f"split brain     two controllers for {sb.window_ms} ms; the deposed one attempted "
                     f"{sb.stale_writes_attempted} writes, {sb.stale_writes_landed} landed; brokers refused "
                     f"{sb.stale_requests_refused} of its {sb.stale_requests_delivered} requests")
    if result.ok:
        lines.append("result          OK: no invariant violated")
        return "\n".join(lines)
    first = result.violations[0]
    lines += [
        f"result          VIOLATION of {first.invariant} at step {first.step} "
        f"(t={first.time_ms - _start_ms()} ms, seed {config.seed})",
        f"                {first.detail}",
        f"replay          {as_typed(config.replay_command())}",
    ]
    if len(result.violations) > 1:
        lines.append(f"                (and {len(result.violations) - 1} more violations)")
    lines.append("last steps      (virtual ms since start, what)")
    lines += [f"                {line[:160]}" for line in result.last_trace[-12:]]
    return "\n".join(lines)


def _start_ms() -> int:
    from zkcontroller.sim.world import START_MS

    return START_MS
