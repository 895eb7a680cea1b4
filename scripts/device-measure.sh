#!/bin/bash
# One device call (issues 18 and 20): cross-machine pack hashes of the shipped worlds, the default
# world's thread-scaling curve, N local shards against one 16-thread process, and two viewer flights.
# Usage on the device machine, from the repo root, with stripped release binaries in BIN (default
# .gl/bin: kiln, kiln-view) and the Vulkan loader .debs in .gl/ (see the device tool's README):
#   bash scripts/device-measure.sh     (results in $OUT: summary.txt, hash-<world>.txt, flight*.json)
# Compare hash-<world>.txt with the same bake here (find . -type f | sort | xargs sha256sum).
cd "$(dirname "$0")/.."
BIN=${BIN:-.gl/bin}
K=$BIN/kiln
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nproc; lscpu | grep -E "Model name|Flags" | cut -c1-200
S=$OUT/summary.txt
bake() { # label args...
  local label=$1; shift
  local t0=$(date +%s.%N)
  "$@" > /tmp/log.$label 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  echo "$label rc=$rc wall=$(echo "$t1 - $t0" | bc) $(grep -E '^  total' /tmp/log.$label | sed 's/  */ /g')" | tee -a $S
}
for w in tiny forest coast ice_caves; do
  bake whole-$w $K bake worlds/$w.toml --out /tmp/w --no-cache
  (cd /tmp/w/$w && find . -type f | sort | xargs sha256sum) > $OUT/hash-$w.txt
done
for j in 1 2 4 8 16; do bake jobs$j $K bake worlds/ice_caves.toml --out /tmp/j$j --no-cache --jobs $j; done
bake jobs16-again $K bake worlds/ice_caves.toml --out /tmp/j16b --no-cache --jobs 16
bake jobs16-cache $K bake worlds/ice_caves.toml --out /tmp/j16c --cache /tmp/c16 --jobs 16
for n in 2 4 8 16; do
  bake local$n $K bake worlds/ice_caves.toml --out /tmp/l$n --cache /tmp/cl$n --local-shards $n
  du -sh /tmp/cl$n | tee -a $S
  (cd /tmp/l$n/ice_caves && find . -type f | sort | xargs sha256sum) | diff -q - $OUT/hash-ice_caves.txt && echo "local$n identical" | tee -a $S
done
bake local8-again $K bake worlds/ice_caves.toml --out /tmp/l8b --cache /tmp/cl8b --local-shards 8
bake jobs16-third $K bake worlds/ice_caves.toml --out /tmp/j16d --no-cache --jobs 16
cp /tmp/log.jobs16 /tmp/log.local8 $OUT/ 2>/dev/null
for i in 1 2; do
  $BIN/kiln-view /tmp/w/ice_caves --headless --fly viewer/paths/ice_caves.csv --size 1920x1080 --stats $OUT/flight$i.json > /tmp/fl$i.log 2>&1
  echo "flight$i rc=$?" | tee -a $S
done
