#!/usr/bin/env python3
"""The table of a bench/jfr-cost run: for each benchmark and configuration, the median over
rounds of each fork's median iteration, and the median and range over rounds of its ratio to the
first configuration's fork in the same round. A round missing a fork (a failed run) is left out.

Usage: jfr-cost-table.py OUT CONFIG...   (the configurations in bench/jfr-cost's order)"""
import json
import os
import statistics
import sys


def fork_medians(path):
    """{benchmark: median of the fork's iterations} of one JMH JSON file, or {} if unreadable."""
    try:
        with open(path) as f:
            results = json.load(f)
    except (OSError, ValueError):
        return {}
    return {
        r["benchmark"].rsplit(".", 1)[1]: (statistics.median(r["primaryMetric"]["rawData"][0]),
                                            r["primaryMetric"]["scoreUnit"])
        for r in results
    }


def main(out, configs):
    rounds = []  # per round: {config: {benchmark: (median, unit)}}
    r = 1
    while any(os.path.exists(f"{out}/{r}-{c.replace('/', '_')}.json") for c in configs):
        rounds.append({c: fork_medians(f"{out}/{r}-{c.replace('/', '_')}.json") for c in configs})
        r += 1
    base = configs[0]
    benches = sorted({b for rd in rounds for b in rd[base]})
    print(f"| benchmark | configuration | rounds | fork median | ratio to {base}: median (range) |")
    print("|---|---|---|---|---|")
    for b in benches:
        for c in configs:
            pairs = [(rd[base][b][0], rd[c][b][0], rd[c][b][1]) for rd in rounds
                     if b in rd[base] and b in rd[c]]
            if not pairs:
                print(f"| {b} | {c} | 0 | - | - |")
                continue
            med = statistics.median(p[1] for p in pairs)
            ratios = [p[1] / p[0] for p in pairs]
            ratio = "" if c == base else (f"{statistics.median(ratios):.3f}x "
                                          f"({min(ratios):.3f}-{max(ratios):.3f})")
            print(f"| {b} | {c} | {len(pairs)} | {med:,.0f} {pairs[0][2]} | {ratio} |")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
