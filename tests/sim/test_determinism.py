"""Same seed → same trace hash, in processes started with different PYTHONHASHSEED values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.sim.helpers import run

REPO = Path(__file__).resolve().parents[2]
PROGRAM = """
import sys
from tests.sim.helpers import run
for scenario in ("random", "split-brain"):
    print(scenario, run(scenario, int(sys.argv[1])).trace_hash)
"""


def _hashes(seed: int, hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(seed)], env=env, capture_output=True, text=True,
                          timeout=120, check=True, cwd=REPO)
    return done.stdout


@pytest.mark.parametrize("seed", [3, 42])
def test_same_seed_same_trace_hash_across_hash_seeds(seed: int) -> None:
    outputs = {_hashes(seed, hash_seed) for hash_seed in ("0", "1", "12345")}
    assert len(outputs) == 1, outputs
    assert len(next(iter(outputs)).split()) == 4


def test_different_seeds_give_different_traces() -> None:
    assert len({run("random", seed).trace_hash for seed in range(5)}) == 5


def test_writing_logs_does_not_change_the_trace(tmp_path: Path) -> None:
    log_dir = tmp_path
    assert run("kill-leaders", 5).trace_hash == run("kill-leaders", 5, log_dir=log_dir).trace_hash
    assert (log_dir / "events.jsonl").stat().st_size > 0
    assert (log_dir / "state-change.log").read_text().startswith("[2026-01-01 00:00:")
