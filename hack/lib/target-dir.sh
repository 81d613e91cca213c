# Sourced by the hack/ scripts before they run cargo: exports CARGO_TARGET_DIR as chosen by
# hack/target-dir.sh (the shared cache when writable, else ./target), so that the scripts, the
# Makefile and the user's `make` all build into one place; cargo_target_dir prints it.
# shellcheck disable=SC2155 # the chooser's exit status is not needed here
export CARGO_TARGET_DIR=$("$(dirname "${BASH_SOURCE[0]}")/../target-dir.sh")
cargo_target_dir() {
  echo "$CARGO_TARGET_DIR"
}
