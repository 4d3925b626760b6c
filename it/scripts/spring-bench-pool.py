#!/usr/bin/env python3
"""Pools the rounds of several SpringBench runs and prints each mode's paired figures against the
JDK's child of the same round (BENCHMARKS.md, 'Where the cold gap sits now').

SpringBench (example.servers.SpringBench) prints one line per child, the modes of a round in turn
and then its table. This reads those lines from each file given, groups them by round (the number
of modes per round is the number of distinct modes in the file), and prints, per mode, over all
rounds pooled: the median of the paired start-up differences and of the paired cold, warm and
beside-CPU ratios, each with its quartiles; the ratio of the pooled medians; and the same paired
medians run by run. A round whose JDK child or whose child of that mode is missing is skipped.
A file may be followed by ':FROM=TO' to pool its mode FROM as TO (and leave out that file's own
TO): the same build run as SpringBench's "baseline agent" beside another, say. Rounds run with
-Dspring.bench.steady=N add a line for the steady phase, over the rounds that have it.

Usage: java -cp <it's test class path> example.servers.SpringBench <agent jar> 12 | tee run1.txt
       it/scripts/spring-bench-pool.py run1.txt run2.txt 'run3.txt:baseline agent=gmp4j agent'
"""
import re
import statistics
import sys

LINE = re.compile(r"^(.*?)\s+start-up\s+(\d+) ms .*?cold\s+(\d+)/s .*?warm\s+(\d+)/s"
                  r" .*?light p99\s+([\d.]+) ms(?:.*?\| steady\s+(\d+)/s)?")
JDK = "JDK default"
KEYS = ("start-up", "cold", "warm", "beside CPU")


def rounds(spec):
    """The rounds of one file, each a dict mode -> figures; see ':FROM=TO' above."""
    path, _, rename = spec.partition(":")
    old, _, new = rename.partition("=")
    rows = []
    try:
        lines = open(path).readlines()
    except OSError as e:
        sys.exit("spring-bench-pool.py: cannot read %s: %s" % (path, e.strerror))
    for line in lines:
        m = LINE.match(line)
        if m:
            rows.append((m.group(1).strip(), [float(x) if x else None for x in m.groups()[1:]]))
    n = len(dict.fromkeys(mode for mode, _ in rows))  # modes per round, before any rename
    if n == 0:
        return []
    out = []
    for r in range(0, len(rows) // n * n, n):
        one = dict(rows[r:r + n])
        if rename:  # FROM's lines stand for TO; the file's own TO, another build, is left out
            one.pop(new, None)
            if old in one:
                one[new] = one.pop(old)
        out.append(one)
    return out


def paired(pairs):
    """Start-up as a difference in ms, the others as ratios, for (mode, JDK) figure pairs."""
    return [[a[0] - b[0]] + [a[i] / b[i] for i in (1, 2, 3)] for a, b in pairs]


def cell(values, i):
    q = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
    if i == 0:
        return "%+.0f ms (%+.0f..%+.0f)" % (statistics.median(values), q[0], q[2])
    return "%.2fx (%.2f-%.2f)" % (statistics.median(values), q[0], q[2])


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: spring-bench-pool.py SPRINGBENCH_OUTPUT...")
    runs = [(path, rounds(path)) for path in sys.argv[1:]]
    modes = list(dict.fromkeys(m for _, rs in runs for r in rs for m in r if m != JDK))
    if not modes:
        sys.exit("spring-bench-pool.py: no SpringBench lines in the input")
    for mode in modes:
        pooled = [(r[mode], r[JDK]) for _, rs in runs for r in rs if mode in r and JDK in r]
        if not pooled:
            continue
        p = paired(pooled)
        print("%s, %d rounds: %s" % (mode, len(p), ", ".join(
            "%s %s" % (KEYS[i], cell([x[i] for x in p], i)) for i in range(4))))
        a = [statistics.median(x[0][i] for x in pooled) for i in range(4)]
        b = [statistics.median(x[1][i] for x in pooled) for i in range(4)]
        print("  ratio of the medians: start-up %+.0f ms, cold %.2fx, warm %.2fx, beside CPU %.2fx"
              % (a[0] - b[0], a[1] / b[1], a[2] / b[2], a[3] / b[3]))
        steady = [(x[0][4], x[1][4]) for x in pooled if x[0][4] and x[1][4]]
        if steady:
            print("  steady phase, %d rounds: paired %s, ratio of the medians %.2fx" % (
                len(steady), cell([m / j for m, j in steady], 1),
                statistics.median(m for m, _ in steady) / statistics.median(j for _, j in steady)))
        for path, rs in runs:
            q = paired([(r[mode], r[JDK]) for r in rs if mode in r and JDK in r])
            if q:
                print("  %s, %d rounds: start-up %+.0f ms, cold %.2fx, warm %.2fx, beside CPU %.2fx"
                      % (path, len(q), *[statistics.median(x[i] for x in q) for i in range(4)]))


if __name__ == "__main__":
    main()
