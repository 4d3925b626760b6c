#!/usr/bin/env python3
"""Formats a JMH JSON result of Primitives (bench/run Primitives -rf json -rff FILE) as the
Markdown table of BENCHMARKS.md: one row per benchmark, one column per scheduler, and the
ratios of gmp4j under its agent to the JDK's scheduler without and with an agent."""
import json
import sys

COLS = ["Jdk", "JdkAgent", "Agent", "Lib"]


def main(path):
    rows = {}
    for r in json.load(open(path)):
        cls, bench = r["benchmark"].split(".")[-2:]
        p = "1P" if cls.endswith("1P") else "2P"
        col = cls[: -2]
        m = r["primaryMetric"]
        rows.setdefault((bench, p), {})[col] = (m["score"], m.get("scoreError", 0), m["scoreUnit"])
    print("| benchmark | Ps | JDK | JDK + no-op agent | gmp4j agent | gmp4j library | agent / JDK | agent / JDK + agent |")
    print("|---|---|---|---|---|---|---|---|")
    for (bench, p) in sorted(rows):
        c = rows[(bench, p)]
        unit = next(iter(c.values()))[2]

        def cell(k):
            if k not in c:
                return "fails" if k.startswith("Jdk") and bench == "pingPongHog" else "-"
            s, e, _ = c[k]
            return f"{s:,.0f} ± {e:,.0f}" if s >= 100 else f"{s:,.1f} ± {e:,.1f}"

        def ratio(a, b):
            return f"{c[a][0] / c[b][0]:.2f}x" if a in c and b in c else "-"

        print(f"| {bench} ({unit}) | {p} | " + " | ".join(cell(k) for k in COLS)
              + f" | {ratio('Agent', 'Jdk')} | {ratio('Agent', 'JdkAgent')} |")


if __name__ == "__main__":
    main(sys.argv[1])
