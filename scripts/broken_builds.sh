#!/usr/bin/env bash
# Extended check (not part of scripts/test.sh): breaks the build on purpose and shows that the
# tests which guard each part fail. Each mutation replaces one exact line of the library, runs
# the named tests in release mode, expects them to FAIL, and puts the file back (also on Ctrl-C
# or an error). Prints one row per mutation; exits non-zero if any broken build passed its tests.
#
#   scripts/broken_builds.sh            # every mutation (each rebuilds the core: ~2 min each)
#   scripts/broken_builds.sh pc2        # the mutations whose name contains `pc2`
#   scripts/broken_builds.sh moments    # the C/C++ host tests against a fast subspace not rig-orthogonal
set -euo pipefail
cd "$(dirname "$0")/.."

# name | file | exact text (must occur once) | replacement | cargo test arguments, or `sh:` and
# a command (the C/C++ host tests: their binds run on the fixed coarse lattices they set)
MUTATIONS=(
  "rig-orthogonality projection, wrong sign|rust/overtone/src/solve/constrained_solve.rs|        matmul(um.as_mut(), Accum::Add, self.z, tm.as_ref(), -1.0, Par::Seq);|        matmul(um.as_mut(), Accum::Add, self.z, tm.as_ref(), 1.0, Par::Seq);|-p overtone --test physics -- full_order::constraint_holds_on_every_beam_resolution full_order::constraint_holds_on_reference_scenes"
  "modal damping term dropped|rust/overtone/src/dynamics/modal_damping.rs|            let s = (1.0 - (-c * length).exp()) * q;|            let s = 0.0 * (1.0 - (-c * length).exp()) * q;|-p overtone --test physics -- time_integration::damping_ratio_of_the_lowest_mode_is_what_was_asked character_damping::a_character_rings_down_at_the_asked_ratio"
  "fast subspace, translation moments dropped from the rig-orthogonality rows|rust/overtone/src/dynamics/fast/weight_space_constraint.rs|                let xh = if j < dim { rest[v * dim + j] } else { 1.0 };|                let xh = if j < dim { rest[v * dim + j] } else { 0.0 };|sh:bash scripts/test_cpp.sh"
  "pc2 header, start frame and sample rate swapped|rust/overtone/src/io/pc2.rs|        header.extend_from_slice(&start_frame.to_le_bytes());|        header.extend_from_slice(&sample_rate.to_le_bytes());|-p overtone --lib -- io::pc2::tests"
  "pc2 and mdd frames written in reverse order|rust/overtone/src/io/frame_stream.rs|        for &x in frame {|        for &x in frame.iter().rev() {|-p overtone --lib -- io::pc2::tests io::mdd::tests"
)

ONLY="${1:-}"
BACKUP=""
TARGET=""
restore() {
  if [[ -n "$BACKUP" && -f "$BACKUP" ]]; then
    cp "$BACKUP" "$TARGET"
    rm -f "$BACKUP"
    BACKUP=""
  fi
}
trap restore EXIT INT TERM

ROWS=()
STATUS=0
for m in "${MUTATIONS[@]}"; do
  IFS='|' read -r name file old new args <<<"$m"
  [[ -n "$ONLY" && "$name" != *"$ONLY"* ]] && continue
  TARGET="$file"
  BACKUP="$(mktemp)"
  cp "$file" "$BACKUP"
  python3 - "$file" "$old" "$new" <<'EOF'
import sys
path, old, new = sys.argv[1:4]
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"{path}: the line to break occurs {text.count(old)} times, not once:\n{old}")
text = text.replace(old, new)
open(path, "w").write(text)
EOF
  echo "=== broken: $name ($file)"
  # A broken build that does not compile proves nothing: build first, then run.
  if [[ "$args" == sh:* ]]; then
    if ! cargo build --release -q --workspace; then
      ROWS+=("DID NOT COMPILE (no proof): $name")
      STATUS=1
    elif bash -c "${args#sh:}"; then
      ROWS+=("PASSED (not caught): $name")
      STATUS=1
    else
      ROWS+=("failed as it must: $name  [${args#sh:}]")
    fi
    restore
    continue
  fi
  # shellcheck disable=SC2086
  if ! cargo test --release -q --no-run ${args%% -- *}; then
    ROWS+=("DID NOT COMPILE (no proof): $name")
    STATUS=1
  # shellcheck disable=SC2086
  elif cargo test --release -q $args; then
    ROWS+=("PASSED (not caught): $name")
    STATUS=1
  else
    ROWS+=("failed as it must: $name  [cargo test --release $args]")
  fi
  restore
done
echo "broken builds:"
printf '  %s\n' "${ROWS[@]}"
exit $STATUS
