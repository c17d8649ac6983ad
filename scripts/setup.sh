#!/usr/bin/env bash
# Everything a fresh Debian 12 machine needs: uv, the locked Python environment, and (with --test)
# Java 17, a real ZooKeeper server for the contract suite and PySpark, Chromium for report screenshots, and kcat
# and tshark for the wire tests.
# Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
if [[ "${1:-}" == "--test" ]]; then
  # Java 17 or newer (PySpark 4 and ZooKeeper 3.8 need it): install it when java is missing or older.
  java_major=$(java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}' || true)
  if [[ -z "${java_major}" || "${java_major}" -lt 17 ]] || ! command -v javac >/dev/null 2>&1; then
    need_apt+=(openjdk-17-jdk-headless)  # a JDK: javac builds the analytics JVM parser on first use
  fi
  [[ -f /usr/share/java/zookeeper.jar ]] || need_apt+=(zookeeper)
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)  # analytics report screenshots (headless)
  command -v kcat >/dev/null 2>&1 || need_apt+=(kcat)          # wire-protocol end-to-end tests
  command -v tshark >/dev/null 2>&1 || need_apt+=(tshark)      # decode of captured control traffic
fi
if ((${#need_apt[@]})); then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if [[ "${1:-}" == "--test" ]] && ! java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'; then
  # An older default java stays first on PATH after the install: point the alternative at 17.
  $SUDO update-alternatives --set java "$(ls -d /usr/lib/jvm/java-17-openjdk-*/bin/java | head -n 1)"
fi

if ! command -v uv >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check uv
fi
uv sync --frozen --quiet
