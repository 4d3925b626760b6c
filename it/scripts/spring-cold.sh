#!/usr/bin/env bash
# Cold throughput of Spring Boot with and without the agent (BENCHMARKS.md, 'Where the cold gap
# goes'): ROUNDS rounds of five child JVMs in turn, each run by example.servers.ColdBurst (5,000
# light requests at 16 concurrent from the first one, then 10,000): no agent; a Java agent that
# does nothing (any agent makes HotSpot post virtual-thread mounts to JVMTI); the agent; the agent
# with asyncpreemptoff=1 (no poll injector); the agent with preempt.defer=0 (every class
# rewritten at load, the default before the early polls). Prints one line a child: start-up,
# cold throughput and p99, the cold phase's CPU ticks and voluntary switches by thread group,
# the load client's own CPU ticks and the CPUs' busy share in that phase; then the warm phase's
# throughput, p99 and CPU split (BENCHMARKS.md, 'Where the warm gap goes').
# it/scripts/spring-cold-table.py pairs the lines by round and prints each mode's medians.
# Needs a built tree (./mvn25 -B verify, or package and it's test-compile, which writes
# it/target/test.classpath).
# Usage: it/scripts/spring-cold.sh [rounds, default 3] [mode ...]
#   A mode is one of the five above (none, noop, agent, nopolls, defer0) or NAME=JAR[=OPTIONS]:
#   another build of the agent, for an A/B of a change in the same rounds, e.g.
#   it/scripts/spring-cold.sh 8 none base=/tmp/base-agent.jar agent
set -uo pipefail
cd "$(dirname "$0")/../.."
source .mvn/jdk25.sh
jdk=$(gmp_find_jdk25) || exit 1
rounds=${1:-3}
shift || true
modes=("$@")
if ((${#modes[@]} == 0)); then
  modes=(none noop agent nopolls defer0)
fi
agent=agent/target/gmp4j-agent.jar
CP=$(tr ':' '\n' <it/target/test.classpath | grep -v gmp4j | paste -sd:):it/target/test-classes
work=$(mktemp -d /tmp/spring-cold.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The no-op agent: a premain that does nothing, in a jar of its own.
mkdir -p "$work/noop"
printf 'public class NoopAgent { public static void premain(String a, java.lang.instrument.Instrumentation i) {} }\n' \
  >"$work/NoopAgent.java"
"$jdk/bin/javac" -d "$work/noop" "$work/NoopAgent.java" || exit 1
printf 'Premain-Class: NoopAgent\n' >"$work/manifest"
"$jdk/bin/jar" cfm "$work/noop.jar" "$work/manifest" -C "$work/noop" . || exit 1
for ((r = 1; r <= rounds; r++)); do
  for mode in "${modes[@]}"; do
    case $mode in
      none) spec=none ;;
      noop) spec=$work/noop.jar ;;
      agent) spec=$agent ;;
      nopolls) spec=$agent=asyncpreemptoff=1 ;;
      defer0) spec=$agent=preempt.defer=0 ;;
      *=*) spec=${mode#*=} mode=${mode%%=*} ;;
      *) echo "spring-cold.sh: unknown mode $mode (none, noop, agent, nopolls, defer0 or NAME=JAR[=OPTIONS])" >&2; exit 2 ;;
    esac
    timeout 300 "$jdk/bin/java" -Djava.io.tmpdir="$work" -cp "$CP" example.servers.ColdBurst "$mode" "$spec"
  done
done
