# shellcheck shell=bash
# Shared JDK 25 discovery for ./mvn25 and ./demo (sourced, not executed).
# Defines gmp_find_jdk25: prints the JAVA_HOME of a JDK whose major version is
# >= 25, or prints one error line to stderr and returns 1.

# Major version of the JDK at $1 (empty if unknown). Reads the `release` file's
# JAVA_VERSION, falling back to `bin/java -version`. "1.8.0_x" -> 8, "25.0.3" -> 25.
gmp_jdk_major() {
  local v=""
  if [[ -f "$1/release" ]]; then
    v=$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$1/release" 2>/dev/null | head -n1)
  fi
  if [[ -z "$v" ]]; then
    v=$("$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1) || true
  fi
  v=${v#1.}              # 1.8.0 -> 8.0
  v=${v%%[!0-9]*}        # keep the leading number
  echo "$v"
}

# Does $1 look like a JDK of major version >= 25? (sets GMP_MAJOR as a side effect)
gmp_is_jdk25() {
  [[ -n "${1:-}" && -x "$1/bin/java" ]] || return 1
  GMP_MAJOR=$(gmp_jdk_major "$1")
  [[ -n "$GMP_MAJOR" && "$GMP_MAJOR" -ge 25 ]]
}

gmp_find_jdk25() {
  # 1. an explicit choice wins
  local d
  for d in "${JAVA_HOME:-}" "${JAVA25_HOME:-}"; do
    if gmp_is_jdk25 "$d"; then echo "$d"; return 0; fi
  done
  # 2. scan the usual install locations: exactly 25 preferred, else the highest >= 25
  local best="" best_major=0 roots=(/usr/lib/jvm /usr/java /opt/java /opt "$HOME/.sdkman/candidates/java" "$HOME/.jdks")
  for d in /usr/lib/jvm/* /usr/java/* /opt/java/* /opt/*jdk* "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/*; do
    gmp_is_jdk25 "$d" || continue
    if [[ "$GMP_MAJOR" -eq 25 ]]; then echo "$d"; return 0; fi
    if [[ "$GMP_MAJOR" -gt "$best_major" ]]; then best=$d best_major=$GMP_MAJOR; fi
  done
  if [[ -n "$best" ]]; then echo "$best"; return 0; fi
  echo "mvn25: no JDK 25 or newer found (looked in \$JAVA_HOME, \$JAVA25_HOME, ${roots[*]}); install one or set JAVA_HOME" >&2
  return 1
}
