#!/usr/bin/env bash
# Finds a headless-capable Chromium for TraceToolIT's screenshot of the `gmp4j trace html` page,
# installing Debian's `chromium` package when it is missing and this build may (root, apt-get,
# and -Dchromium.install is not false). Called by it/pom.xml before the ITs; prints one line:
#   chromium=<path>           a browser to use
#   chromium-missing=<why>    none, and why not (TraceToolIT skips its screenshot, naming this)
# and writes the same line to the file given as $1, which the IT reads. Never fails the build:
# a machine without the browser still runs every other test.
set -uo pipefail
out="${1:-/dev/null}"
install="${2:-true}"
say() { echo "$1"; echo "$1" > "$out"; exit 0; }
for c in chromium chromium-browser; do
  if p=$(command -v "$c" 2>/dev/null); then say "chromium=$p"; fi
done
[[ "$install" == "true" ]] || say "chromium-missing=not installed, and -Dchromium.install=false"
command -v apt-get >/dev/null 2>&1 || say "chromium-missing=not installed, and no apt-get here"
[[ "$(id -u)" == "0" ]] || say "chromium-missing=not installed, and the build is not root (run: sudo apt-get install chromium)"
echo "gmp4j: installing Debian's chromium for TraceToolIT (apt-get install chromium, once)" >&2
log=$(mktemp)
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >"$log" 2>&1; then
  # the package lists may be missing or stale: refresh them once and retry
  DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$log" 2>&1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >>"$log" 2>&1
fi
if p=$(command -v chromium 2>/dev/null); then rm -f "$log"; say "chromium=$p"; fi
tail -3 "$log" >&2; rm -f "$log"
say "chromium-missing=apt-get install chromium failed (output above)"
