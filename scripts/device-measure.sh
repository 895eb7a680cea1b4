#!/bin/bash
# One device call (issues 18 and 20): cross-machine pack hashes of the shipped worlds, the default
# world's thread-scaling curve, N local shards against one 16-thread process, and two viewer flights;
# or, with the argument `big`, worlds/big.toml baked as 8 shards of 2 threads (each shard's time and
# peak memory), then assembled.
# Usage on the device machine, from the repo root, with stripped release binaries in BIN (default
# .gl/bin: kiln, kiln-view) and the Vulkan loader .debs in .gl/ (see the device tool's README):
#   bash scripts/device-measure.sh [big]  (results in $OUT: summary.txt, hash-<world>.txt, flight*.json)
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
  local t0=$(date +%s%N)
  "$@" > /tmp/log.$label 2>&1; local rc=$?
  local t1=$(date +%s%N)
  echo "$label rc=$rc wall=$(( (t1 - t0) / 1000000 ))ms $(grep -E '^  total' /tmp/log.$label | sed 's/  */ /g')" | tee -a $S
}
if [ "$1" = big ]; then
  # The shards by hand rather than `--local-shards 8` (which runs the same commands) so that each
  # one's report, with its peak memory, is kept.
  free -g | tee -a $S
  t0=$(date +%s%N)
  for k in 0 1 2 3 4 5 6 7; do
    bake big-shard$k $K bake worlds/big.toml --shard $k/8 --cache /tmp/cbig --jobs 2 &
  done
  wait
  t1=$(date +%s%N)
  echo "big 8 shards wall=$(( (t1 - t0) / 1000000 ))ms" | tee -a $S
  bake big-assemble $K bake worlds/big.toml --assemble --cache /tmp/cbig --out /tmp/big
  echo "big shards+assemble wall=$(( ($(date +%s%N) - t0) / 1000000 ))ms" | tee -a $S
  du -sh /tmp/cbig /tmp/big | tee -a $S
  grep -h "peak memory\|error" /tmp/log.big-* | tee -a $S
  cp /tmp/log.big-shard0 /tmp/log.big-assemble $OUT/ 2>/dev/null
  (cd /tmp/big/big && find . -type f | sort | xargs sha256sum) > $OUT/hash-big.txt
  exit 0
fi
for w in tiny forest coast ice_caves; do
  bake whole-$w $K bake worlds/$w.toml --out /tmp/w --no-cache
  (cd /tmp/w/$w && find . -type f | sort | xargs sha256sum) > $OUT/hash-$w.txt
done
for j in 1 2 4 8 16; do bake jobs$j $K bake worlds/ice_caves.toml --out /tmp/j$j --no-cache --jobs $j; done
bake jobs16-again $K bake worlds/ice_caves.toml --out /tmp/j16b --no-cache --jobs 16
# The default world under --memory-budget 512M (an empty stage cache each): where it fits, and the
# time against the same thread count without a budget.
for j in 16 8 4; do
  bake budget$j $K bake worlds/ice_caves.toml --out /tmp/b$j --cache /tmp/cb$j --jobs $j --memory-budget 512M
  grep -m1 "kiln: error" /tmp/log.budget$j | cut -c1-300 | tee -a $S
  bake nobudget$j $K bake worlds/ice_caves.toml --out /tmp/nb$j --cache /tmp/cnb$j --jobs $j
done
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
