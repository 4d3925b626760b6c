#!/usr/bin/env bash
# Spring Boot start-up with and without the agent (BENCHMARKS.md, 'Rewrite cache'): ROUNDS rounds
# of seven child JVMs in turn, each one start of example.servers.SpringServer (it exits once ready
# when its standard input is closed): no agent; the agent; the agent with asyncpreemptoff=1 (no
# poll injector at all); the agent with preempt.cache on a directory written by one warm-up start
# (a second start); the agent with preempt.cache on a fresh directory (a first start); the agent
# with preempt.defer=0 (every class rewritten at load, the default before the early polls:
# README, 'Polls after start-up'); the agent with preempt.jit=c2 (README, 'The injector runs on C1': C2 compiles the injector). Prints
# startup.ms (the JVM's uptime when Spring's context is ready), wall and user+sys CPU seconds.
# Needs a built tree (./mvn25 -B verify, or package and it's test-compile, which writes
# it/target/test.classpath).   Usage: it/scripts/spring-startup.sh [rounds, default 5]
set -uo pipefail
cd "$(dirname "$0")/../.."
source .mvn/jdk25.sh
J=$(gmp_find_jdk25)/bin/java || exit 1
rounds=${1:-5}
agent=agent/target/gmp4j-agent.jar
CP=$(tr ':' '\n' <it/target/test.classpath | grep -v gmp4j | paste -sd:):it/target/test-classes
work=$(mktemp -d /tmp/spring-startup.XXXXXX)
trap 'rm -rf "$work"' EXIT
one() { # mode [jvm args...]
  local mode=$1 out=$work/out
  shift
  # java.io.tmpdir in $work: embedded Tomcat makes a tomcat.0.* folder there on every start.
  /usr/bin/time -f "%e %U %S" -o "$out.t" "$J" -Djava.io.tmpdir="$work" -Dservers.cpu.iterations=1000 "$@" -cp "$CP" \
    example.servers.SpringServer </dev/null >"$out" 2>&1
  local w u s
  read -r w u s <"$out.t"
  printf '%-11s startup.ms=%s wall=%s cpu=%s %s\n' "$mode" "$(sed -n 's/^startup.ms=//p' "$out")" \
    "$w" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" \
    "$(grep -o 'preempt.cache [^;]*: [0-9]* rewrites* read, [0-9]* written' "$out" | head -1)"
}
one warm-up -javaagent:$agent=preempt.report=1,preempt.cache=$work/warm >/dev/null
for ((r = 1; r <= rounds; r++)); do
  one none
  one agent -javaagent:$agent=preempt.report=1
  one nopolls -javaagent:$agent=asyncpreemptoff=1
  one cache-warm -javaagent:$agent=preempt.report=1,preempt.cache=$work/warm
  one cache-cold -javaagent:$agent=preempt.report=1,preempt.cache=$work/cold-$r
  one defer0 -javaagent:$agent=preempt.report=1,preempt.defer=0
  one jit-c2 -javaagent:$agent=preempt.report=1,preempt.jit=c2
done
