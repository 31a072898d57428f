#!/usr/bin/env bash
# Fuzzes every reader: runs each cargo-fuzz (libFuzzer) target in fuzz/ for at most SECONDS
# (default 600) or RUNS executions (default 1000000), whichever comes first, one target at a
# time, then prints a table: target, executions, seconds, slowest input (s), peak RSS (MB),
# crashes (panics, timeouts over 10 s, allocations over 1 GB, RSS over 2 GB).
#
#   scripts/fuzz.sh [SECONDS] [RUNS] [TARGET...]
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). The checked-in seeds
# (fuzz/corpus/<target>/, see fuzz/corpus/NOTICE) are read-only; inputs the fuzzer finds go to
# fuzz/corpus-work/<target>/ and crash reproducers to fuzz/artifacts/<target>/ (both ignored
# by git). Builds without a sanitizer (safe Rust; panics and overflow checks are what is
# caught) and with debug assertions, so integer overflow panics too.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
SECONDS_PER_TARGET=${1:-600}
RUNS=${2:-1000000}
shift $(( $# > 2 ? 2 : $# ))
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    mapfile -t TARGETS < <(cargo +nightly fuzz list)
fi
FLAGS=(-a -s none)
cargo +nightly fuzz build "${FLAGS[@]}" >/dev/null
mkdir -p logs
declare -a ROWS
status=0
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus-work/$t" "artifacts/$t"
    before=$(find "artifacts/$t" -type f | wc -l)
    log="logs/$t.log"
    start=$(date +%s)
    set +e
    cargo +nightly fuzz run "${FLAGS[@]}" "$t" "corpus-work/$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -runs="$RUNS" -timeout=10 -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -print_final_stats=1 -dict=dict/"$t".dict >"$log" 2>&1
    rc=$?
    set -e
    secs=$(( $(date +%s) - start ))
    stat() { grep -o "stat::$1: *[0-9.]*" "$log" | grep -o '[0-9.]*$' | tail -1; }
    execs=$(stat number_of_executed_units)
    slowest=$(stat slowest_unit_time_sec)
    rss=$(stat peak_rss_mb)
    after=$(find "artifacts/$t" -type f | wc -l)
    crashes=$(( after - before ))
    if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes="error (exit $rc, see fuzz/$log)"; fi
    [ "$rc" -ne 0 ] && status=1
    ROWS+=("$(printf '%-22s %12s %8s %12s %12s  %s' "$t" "${execs:-?}" "$secs" "${slowest:-?}" "${rss:-?}" "$crashes")")
    echo "${ROWS[-1]}"
done
echo
printf '%-22s %12s %8s %12s %12s  %s\n' target executions seconds slowest_s peak_rss_mb crashes
printf '%s\n' "${ROWS[@]}"
exit $status
