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

# uv: kept as it is when it is on PATH. Otherwise pip installs it for this user; Debian 12's own Python refuses pip
# installs (PEP 668, EXTERNALLY-MANAGED) and may have no pip at all, so then pipx (Debian's package) installs it.
# Both put it in ~/.local/bin, which goes on PATH for the rest of this script.
install_uv() {
  command -v uv >/dev/null 2>&1 && return 0
  local user_bin="${HOME}/.local/bin"
  export PATH="${user_bin}:${PATH}"
  command -v uv >/dev/null 2>&1 && return 0
  if command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
    local pip=(python3 -m pip install --quiet --disable-pip-version-check)
    # --user outside a virtualenv; plain inside one (pip refuses --user there)
    if "${pip[@]}" --user uv >/dev/null 2>&1 || "${pip[@]}" uv >/dev/null 2>&1; then
      export PATH="$(python3 -m site --user-base 2>/dev/null || echo "${HOME}/.local")/bin:${PATH}"
      command -v uv >/dev/null 2>&1 && return 0
    fi
  fi
  if ! command -v pipx >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq pipx >/dev/null || true
  fi
  if command -v pipx >/dev/null 2>&1 && pipx install uv >/dev/null; then
    command -v uv >/dev/null 2>&1 && return 0
  fi
  echo "setup.sh: could not install uv (pip refused or is missing, and pipx is unavailable or failed);" \
    "install uv (https://docs.astral.sh/uv/getting-started/installation/) and run this again" >&2
  return 1
}
install_uv || exit 1
uv sync --frozen --quiet
