#!/usr/bin/env bash
# Renders an HTML report in headless Chromium (Debian's package; installed when missing):
# the top of the page to OUTDIR/page.png and, for every ID given, that chart alone
# (REPORT.html#ID, which the report's CSS shows by itself) to OUTDIR/ID.png.
#
# Chromium runs in a network namespace of its own with nothing but a loopback interface, so
# not one packet leaves this machine (no update checks, no fetches), whatever it tries.
#
# Usage: tests/report/chromium.sh REPORT.html OUTDIR [ID...]
set -euo pipefail

report=$(realpath "$1")
out=$2
shift 2
mkdir -p "$out"

if ! command -v chromium >/dev/null; then
  echo "report: installing Debian's chromium for the headless rendering test" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends chromium >/tmp/benchrun-apt-chromium.log 2>&1 || {
    apt-get update -q >>/tmp/benchrun-apt-chromium.log 2>&1
    apt-get install -y -q --no-install-recommends chromium >>/tmp/benchrun-apt-chromium.log 2>&1
  } || { tail -20 /tmp/benchrun-apt-chromium.log >&2; exit 1; }
fi

# Refuse rather than render with the machine's network.
unshare --net true || { echo "report: cannot create a network namespace (needs root)" >&2; exit 1; }

shot() { # URL PNG WIDTH HEIGHT
  local profile
  profile=$(mktemp -d)
  unshare --net -- chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --no-first-run --no-default-browser-check --disable-background-networking \
    --disable-component-update --disable-sync --disable-extensions --mute-audio \
    --user-data-dir="$profile" --window-size="$3,$4" --screenshot="$2" "$1" \
    >"$2.log" 2>&1 || { cat "$2.log" >&2; rm -rf "$profile"; return 1; }
  rm -rf "$profile"
  [ -s "$2" ] || { echo "report: chromium wrote no $2" >&2; cat "$2.log" >&2; return 1; }
}

shot "file://$report" "$out/page.png" 1280 1600
for id in "$@"; do
  shot "file://$report#$id" "$out/$id.png" 1000 720
done
echo "report: $(( $# + 1 )) screenshots in $out" >&2
