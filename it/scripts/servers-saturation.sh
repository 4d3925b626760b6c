#!/usr/bin/env bash
# Closed-loop saturation of each real server's /light (BENCHMARKS.md, "Saturation"): wrk -t2 -c32,
# 3 s of warm-up then 8 s measured, on the JDK's default scheduler and with the agent, alternating,
# two rounds. Needs wrk (Debian: apt-get install wrk) and a built tree (./mvn25 -B verify, or
# package and it's test-compile, which writes it/target/test.classpath).
set -uo pipefail
cd "$(dirname "$0")/../.."
source .mvn/jdk25.sh
J=$(gmp_find_jdk25)/bin/java || exit 1
command -v wrk >/dev/null || { echo "servers-saturation: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
CP=$(cat it/target/test.classpath):it/target/test-classes
for round in 1 2; do
for srv in JdkServer JettyServer HelidonServer TomcatServer; do
  for mode in default gmp4j; do
    if [ $mode = gmp4j ]; then A="-Xverify:all -javaagent:agent/target/gmp4j-agent.jar"; else A=""; fi
    fifo=$(mktemp -u /tmp/satfifo.XXXX); mkfifo $fifo
    out=$(mktemp /tmp/satout.XXXX)
    ( exec 3<>$fifo; exec $J $A -Dservers.cpu.iterations=50000000 -cp $CP example.servers.$srv <&3 >$out 2>&1 ) &
    pid=$!
    for i in $(seq 1 200); do grep -q "^ready" $out && break; sleep 0.1; done
    port=$(sed -n 's/^port=//p' $out)
    wrk -t2 -c32 -d3s http://127.0.0.1:$port/light >/dev/null 2>&1   # warm-up
    r=$(wrk -t2 -c32 -d8s --latency http://127.0.0.1:$port/light 2>&1)
    rps=$(echo "$r" | sed -n 's/^Requests\/sec: *//p'); p99=$(echo "$r" | awk '/ 99%/{print $2}'); p50=$(echo "$r" | awk '/ 50%/{print $2}')
    echo "round=$round $srv $mode rps=$rps p50=$p50 p99=$p99"
    kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f $fifo $out
  done
done
done
