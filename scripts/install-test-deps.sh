#!/usr/bin/env bash
# Installs what `make test` needs on a fresh Debian machine; does nothing when it is all there.
set -euo pipefail

need=()
command -v cc >/dev/null 2>&1 || need+=(gcc)          # zstd-sys builds C
command -v make >/dev/null 2>&1 || need+=(make)
# Headless rendering tests: Vulkan through Mesa's CPU driver (lavapipe), and Xvfb for a real window.
[ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || [ -e /usr/share/vulkan/icd.d/lvp_icd.aarch64.json ] || need+=(mesa-vulkan-drivers)
ldconfig -p 2>/dev/null | grep -q libvulkan.so.1 || need+=(libvulkan1)
command -v xvfb-run >/dev/null 2>&1 || need+=(xvfb)
command -v xauth >/dev/null 2>&1 || need+=(xauth)

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing test dependencies: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
# The S3 backend's tests run against moto's standalone S3-compatible server (Python).
if ! python3 -c "import moto.server, flask" >/dev/null 2>&1; then
  command -v python3 >/dev/null 2>&1 || { echo "python3 is needed for the S3 tests (moto)" >&2; exit 1; }
  python3 -m pip --version >/dev/null 2>&1 || { sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"; $sudo apt-get update -qq; DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-pip; }
  echo "installing test dependencies: moto[server] (pip)"
  python3 -m pip install --quiet 'moto[server]' 2>/dev/null \
    || python3 -m pip install --quiet --user 'moto[server]' 2>/dev/null \
    || python3 -m pip install --quiet --user --break-system-packages 'moto[server]'
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is not installed: install Rust (rustup) first" >&2
  exit 1
fi
