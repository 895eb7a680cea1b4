#!/usr/bin/env bash
# Builds Kiln's fuzz targets with libFuzzer on stable Rust and runs each for a bounded time.
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 20 s, every target)
# Coverage comes from LLVM's sanitizer-coverage pass, which stable rustc accepts through -C flags;
# `--cfg fuzzing` is what cargo-fuzz sets too. The committed corpus (fuzz/corpus/T) is copied to a
# scratch corpus so runs never rewrite it; a crash is saved under fuzz/artifacts/T/ and fails the run.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(pack manifest world brushes heightmap)

# libfuzzer-sys compiles libFuzzer (C++).
if ! command -v c++ >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "fuzz: installing g++ (libFuzzer is C++)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq g++
fi

export CARGO_TARGET_DIR="${KILN_FUZZ_TARGET_DIR:-$PWD/target}"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
# An explicit --target keeps these flags off build scripts and proc macros, which must link
# without libFuzzer's runtime.
host=$(rustc -vV | sed -n 's/^host: //p')
start=$(date +%s)
cargo build --release --locked --bins --target "$host"
echo "fuzz: build took $(( $(date +%s) - start )) s"
# Where cargo put them (a cargo wrapper or config may choose another target dir).
target_dir=$(cargo metadata --no-deps --format-version 1 | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')

status=0
for t in "${targets[@]}"; do
    work="corpus-work/$t"
    mkdir -p "$work" "artifacts/$t"
    cp -n corpus/"$t"/* "$work"/ 2>/dev/null || true
    echo "fuzz: $t for ${secs} s"
    # -rss_limit_mb: the Goals' memory bound for refused inputs is far below this; a target that
    # needs more is a bug. -timeout: one input may take at most 10 s.
    if ! "$target_dir/$host/release/$t" "$work" corpus/"$t" -max_total_time="$secs" -rss_limit_mb=2048 \
        -timeout=10 -max_len=262144 -print_final_stats=1 -artifact_prefix="artifacts/$t/" \
        -dict=dict/"$t".dict 2>"artifacts/$t.log"; then
        echo "fuzz: $t FAILED; input and log under fuzz/artifacts/$t/ — last lines:"
        tail -n 30 "artifacts/$t.log"
        status=1
    else
        grep -E "^stat::(number_of_executed_units|new_units_added)|cov:" "artifacts/$t.log" | tail -n 3 || true
    fi
done
exit $status
