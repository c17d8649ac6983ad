#!/usr/bin/env bash
# Set up (if needed) and run the main job on the embedded store.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec uv run zkcontroller demo "$@"
