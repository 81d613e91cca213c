#!/usr/bin/env bash
# hack/seeds-doc.sh [OUT_DIR]: prints docs/seeds.md rendered from the result files of one
# `hack/seeds.sh` run (OUT_DIR/manifest.json and the runs it names; default docs/seeds/results, where `make seeds` copies a full run) and the
# committed claims file examples/seeds/claims/claims.yaml:
#   hack/seeds-doc.sh docs/seeds/results > docs/seeds.md
# Without result files the page says the seeds have not run yet. The same files give the same
# page (the generator is crates/cli/src/bin/seeds-doc.rs). When OUT_DIR-2 (default
# docs/seeds/results-2) holds a second run of the same commit, the page marks every claim whose
# verdict differs between the two runs as unstable (hack/seeds.sh writes it with SEEDS_OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
. hack/lib/target-dir.sh
cargo build --release -q -p kubectl-benchrun --bin seeds-doc >&2
target_dir=$(cargo_target_dir)
first=${1:-docs/seeds/results}
second=()
[ -f "${first%/}-2/manifest.json" ] && second=(--second "${first%/}-2")
exec "$target_dir/release/seeds-doc" "$first" "${second[@]}" --claims examples/seeds/claims/claims.yaml
