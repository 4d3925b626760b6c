#!/usr/bin/env bash
# Sleep precision (BENCHMARKS.md, "Timers on the P"): example.apps.SleepBesideHogs, 1 ms sleeps,
# idle (0 hogs) and beside 4 polled CPU hogs, at 2 Ps: gmp4j with its timers on the Ps
# (timers=p, the default), gmp4j with the JDK's timer threads (timers=jdk), and the JDK's own
# scheduler at parallelism 2, alternating in one run. Prints each run's overshoot past 1 ms.
# Needs a built tree (./mvn25 -B -q -pl it -am test-compile, and the agent jar: package).
# Usage: it/scripts/timers-precision.sh [rounds] [sleeps] [sleep-ms] [spawn] [settle-ms]
# (sleep-ms: each sleep, default 1; spawn: a G that spawns and joins Gs beside them; settle-ms:
# how long after start the sleeps begin, default 50)
set -uo pipefail
cd "$(dirname "$0")/../.."
source .mvn/jdk25.sh
J=$(gmp_find_jdk25)/bin/java || exit 1
ROUNDS=${1:-3}; N=${2:-200}; MS=${3:-1}; SPAWN=${4:-none}; SETTLE=${5:-50}
CP=it/target/test-classes
for round in $(seq 1 "$ROUNDS"); do
  for hogs in 0 4; do
    for mode in timers=p timers=jdk jdk-default; do
      if [ $mode = jdk-default ]; then
        [ $hogs -gt 0 ] && continue   # never returns: two carriers, four hogs, no time slicing
        A="-Djdk.virtualThreadScheduler.parallelism=2"
      else
        A="-Xverify:all -javaagent:agent/target/gmp4j-agent.jar=gomaxprocs=2,$mode"
      fi
      r=$($J $A -cp $CP example.apps.SleepBesideHogs $hogs $N - 60000 $SETTLE $MS $SPAWN 2>&1 | tr '\n' ' ')
      echo "round=$round hogs=$hogs $mode $r"
    done
  done
done
