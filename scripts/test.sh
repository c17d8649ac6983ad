#!/usr/bin/env bash
# Set up (ZooKeeper, Java, the locked environment) and run the whole test suite, lint (ruff, then mypy on src) first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
# setup.sh --test installed every tool the suite uses (ZooKeeper, Java/javac, Chromium, kcat, tshark): from here a
# test that finds one missing fails instead of skipping (tests/helpers.py `tool_missing`), so CI cannot pass
# green on tests it never ran.
export ZKCONTROLLER_REQUIRE_TOOLS=1
uv run ruff check src tests bench
uv run mypy
exec uv run pytest -q -p no:cacheprovider --durations=30 "$@"
