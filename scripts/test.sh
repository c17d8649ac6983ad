#!/usr/bin/env bash
# Set up (ZooKeeper, Java, the locked environment) and run the whole test suite, lint (ruff, then mypy on src) first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
uv run ruff check src tests bench
uv run mypy
exec uv run pytest -q -p no:cacheprovider --durations=30 "$@"
