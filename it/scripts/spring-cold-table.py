#!/usr/bin/env python3
"""Pairs spring-cold.sh's lines by round and prints each mode's medians against the first mode.

Reads the output of it/scripts/spring-cold.sh (one ColdBurst line per child, the modes in the same
order every round; a child's FAILED line keeps its round's place and pairs with nothing) from a
file or standard input. For each mode: start-up, cold and warm
throughput, and the warm phase's server CPU split (carriers or Ms, C2, C1, Tomcat's poller), each
the median over the rounds and, in brackets, the median of the ratios to the first mode's child of
the same round. The warm phase is a fixed 10,000 requests, so its ticks compare per request.

Usage: it/scripts/spring-cold.sh 6 none nopolls agent | tee cold.txt
       it/scripts/spring-cold-table.py cold.txt
"""
import re
import statistics
import sys

LINE = re.compile(
    r"(\S+)\s+startup\.ms=(\d+) cold=(\d+)/s .*?\| warm=(\d+)/s p99=[\d.]+ms cpu=(\d+) \[(.*?)\]")
TICKS = re.compile(r"([^\s=]+(?: [^\s=]+)?)=(\d+)")
GROUPS = {
    "carriers": ("ForkJoinPool", "gmp-m"),
    "C2": ("C2 ",),
    "C1": ("C1 ",),
    "poller": ("http-nio",),
}


def parse(lines):
    rows = []
    for line in lines:
        m = LINE.match(line)
        if not m:
            failed = re.match(r"(\S+) FAILED", line)
            if failed:  # keeps the rounds aligned: a failed child pairs with nothing
                rows.append({"mode": failed.group(1), "failed": True})
            continue
        ticks = {k: int(v) for k, v in TICKS.findall(m.group(6))}
        row = {"mode": m.group(1), "start-up ms": int(m.group(2)), "cold req/s": int(m.group(3)),
               "warm req/s": int(m.group(4)), "warm cpu": int(m.group(5))}
        for name, prefixes in GROUPS.items():
            row[name] = sum(v for k, v in ticks.items() if k.startswith(prefixes))
        rows.append(row)
    return rows


def main():
    rows = parse(open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin)
    if not rows:
        sys.exit("spring-cold-table.py: no ColdBurst lines in the input")
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    by_mode = {m: [r for r in rows if r["mode"] == m] for m in modes}
    base = by_mode[modes[0]]
    keys = ["start-up ms", "cold req/s", "warm req/s", "warm cpu"] + list(GROUPS)
    print("| mode | rounds | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 2) + "|")
    for mode in modes:
        runs = [r for r in by_mode[mode] if "failed" not in r]
        paired = [(r, b) for r, b in zip(by_mode[mode], base)
                  if "failed" not in r and "failed" not in b]
        if not runs:
            print("| %s | 0 | %s |" % (mode, " | ".join("failed" for _ in keys)))
            continue
        cells = []
        for k in keys:
            median = statistics.median(r[k] for r in runs)
            pairs = [(r[k], b[k]) for r, b in paired]
            if k == "start-up ms" and pairs:
                cells.append("%.0f (%+.0f)" % (median, statistics.median(x - y for x, y in pairs)))
            elif pairs and all(y > 0 for _, y in pairs):
                cells.append("%.0f (%.2fx)" % (median, statistics.median(x / y for x, y in pairs)))
            else:
                cells.append("%.0f" % median)
        print("| %s | %d | %s |" % (mode, len(runs), " | ".join(cells)))


if __name__ == "__main__":
    main()
