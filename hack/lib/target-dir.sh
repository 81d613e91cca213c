# Sourced by the hack/ scripts: cargo_target_dir prints the workspace's build directory (set
# in .cargo/config.toml, outside the repository), where the release binaries are.
cargo_target_dir() {
  cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}
