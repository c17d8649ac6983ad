"""Chaos soak of real broker processes and a real ZooKeeper (docs/soak.md).

    uv run python scripts/soak.py --brokers 3 --minutes 10 --seed 1 [--zookeeper-ensemble 3] [--out DIR]

Exits 0 when every check held, 1 on a violation (the cluster directory is kept and named), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from zkcontroller.cluster.soak import DEFAULT_FAULTS, FAULTS, SoakConfig, run_soak


def parse(argv: list[str]) -> SoakConfig:
    parser = argparse.ArgumentParser(description="Seeded chaos soak of broker processes against a real ZooKeeper.")
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--zookeeper-ensemble", type=int, default=None, metavar="N")
    parser.add_argument("--out", type=Path, default=None, help="cluster directory (kept); default a temporary one, "
                        "removed after a passing run")
    parser.add_argument("--session-timeout-ms", type=int, default=30000)
    parser.add_argument("--interval", type=float, nargs=2, default=(5.0, 20.0), metavar=("MIN_S", "MAX_S"),
                        help="seconds between faults, drawn from this range")
    parser.add_argument("--max-faults", type=int, default=None)
    parser.add_argument("--restart-after-expiry", action="store_true",
                        help="start a killed broker again only once its session expired (docs/soak.md, F1)")
    parser.add_argument("--faults", default=",".join(DEFAULT_FAULTS),
                        help=f"comma-separated kinds (of {', '.join(FAULTS)}; default all but term-kill-controller)")
    args = parser.parse_args(argv)
    faults = tuple(f for f in args.faults.split(",") if f)
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown or not faults:
        parser.error(f"unknown fault kinds {unknown}; known: {', '.join(FAULTS)}")
    if args.brokers < 2:
        parser.error("--brokers must be at least 2 (a fault needs another broker to move leadership to)")
    if args.interval[0] < 0 or args.interval[1] < args.interval[0]:
        parser.error("--interval MIN_S MAX_S needs 0 <= MIN_S <= MAX_S")
    return SoakConfig(brokers=args.brokers, duration_s=args.minutes * 60, seed=args.seed,
                      zookeeper_ensemble=args.zookeeper_ensemble, directory=args.out,
                      session_timeout_ms=args.session_timeout_ms, interval_s=tuple(args.interval),
                      max_faults=args.max_faults, faults=faults,
                      restart_after_expiry=args.restart_after_expiry)


def main(argv: list[str] | None = None) -> int:
    logging.getLogger("kazoo").setLevel(logging.ERROR)  # its reconnects are expected here: ZooKeeper is killed
    result, report = run_soak(parse(sys.argv[1:] if argv is None else argv))
    print(report, flush=True)
    return 1 if result.violations else 0


if __name__ == "__main__":
    sys.exit(main())
