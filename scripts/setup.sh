#!/usr/bin/env bash
# Everything a fresh Debian 12 machine needs: uv, the locked Python environment, and (with --test)
# Java 17, a real ZooKeeper server for the contract suite and PySpark, kcat and tshark for the wire tests.
# Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
if [[ "${1:-}" == "--test" ]]; then
  command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
  [[ -f /usr/share/java/zookeeper.jar ]] || need_apt+=(zookeeper)
  command -v kcat >/dev/null 2>&1 || need_apt+=(kcat)      # wire-protocol end-to-end tests
  command -v tshark >/dev/null 2>&1 || need_apt+=(tshark)  # decode of captured control traffic
fi
if ((${#need_apt[@]})); then
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! command -v uv >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check uv
fi
uv sync --frozen --quiet
