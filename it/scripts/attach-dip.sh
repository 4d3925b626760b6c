#!/usr/bin/env bash
# An attach under load (BENCHMARKS.md, 'Class files read back'): starts example.servers.SpringServer
# without the agent, puts it under 16 closed-loop clients of /light (AttachLoad.java, a JVM of its
# own) for 30 s, attaches JAR at 12 s, and prints the retransformation's summary line and the
# requests per second before the attach (8-12 s), during (12-20 s), after (24-30 s) and the worst
# half second after it. Needs a built tree (as spring-startup.sh).
#   Usage: it/scripts/attach-dip.sh [agent jar, default agent/target/gmp4j-agent.jar]
set -uo pipefail
cd "$(dirname "$0")/../.."
source .mvn/jdk25.sh
J=$(gmp_find_jdk25)/bin/java || exit 1
jar=$(realpath "${1:-agent/target/gmp4j-agent.jar}")
CP=$(tr ':' '\n' <it/target/test.classpath | grep -v gmp4j | paste -sd:):$PWD/it/target/test-classes
work=$(mktemp -d /tmp/attach-dip.XXXXXX)
trap 'kill $holder 2>/dev/null; rm -rf "$work"' EXIT
mkfifo "$work/in"
sleep 45 >"$work/in" &
holder=$!
"$J" -Djava.io.tmpdir="$work" -XX:+EnableDynamicAgentLoading -Dservers.cpu.iterations=1000 -cp "$CP" \
  example.servers.SpringServer <"$work/in" >"$work/out" 2>&1 &
server=$!
for _ in $(seq 150); do grep -q '^ready' "$work/out" && break; sleep 0.2; done
port=$(sed -n 's/^port=//p' "$work/out")
"$J" it/scripts/AttachLoad.java "$port" 30 >"$work/load" &
load=$!
sleep 12
"$J" -jar "$jar" attach "$server" >/dev/null 2>&1
wait $load
grep -m1 'gmp4j: retransform: [0-9]* class' "$work/out"
awk '$1 > 8 && $1 <= 12 { b += $2; nb++ } $1 > 12 && $1 <= 20 { d += $2; nd++ }
     $1 > 24 { e += $2; ne++ } $1 > 12 && (min == "" || $2 < min) { min = $2 }
     END { printf "req/s: before %.0f, 12-20 s %.0f, 24-30 s %.0f, worst half second after %d\n",
           b / nb, d / nd, e / ne, min }' "$work/load"
kill $holder 2>/dev/null
wait $server 2>/dev/null
