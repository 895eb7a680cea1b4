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
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is not installed: install Rust (rustup) first" >&2
  exit 1
fi
