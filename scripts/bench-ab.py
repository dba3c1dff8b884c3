#!/usr/bin/env python3
"""A/B of two `aqueduct` binaries over bench rows, run alternately.

usage: scripts/bench-ab.py BEFORE AFTER ROUNDS FILTER [FILTER ...]

Each round runs `BINARY bench --filter F --json` for every filter, the two binaries in
alternating order; prints a Markdown table of each row's median over rounds (ns per
operation), its ratio to `limit/ring_write_release` measured in the same run, and the range.
"""
import json
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    binaries = {"before": sys.argv[1], "after": sys.argv[2]}
    rounds, filters = int(sys.argv[3]), sys.argv[4:]
    rows = {}
    for index in range(rounds):
        order = list(binaries.items())
        if index % 2:
            order.reverse()
        for name, path in order:
            for pattern in filters:
                output = subprocess.run([path, "bench", "--filter", pattern, "--json"], capture_output=True,
                                        text=True, check=True).stdout
                report = json.loads(output)
                limit = report["limit_ns_per_packet"]
                for row in report["results"][1:]:
                    rows.setdefault(row["name"], {}).setdefault(name, []).append((row["median"], row["median"] / limit))
    print("| row | before (x limit) [range] | after (x limit) [range] | after / before |")
    print("| --- | ---: | ---: | ---: |")
    for row, runs in rows.items():
        cells = []
        for name in ("before", "after"):
            medians = [median for median, _ in runs[name]]
            ratio = statistics.median(ratio for _, ratio in runs[name])
            cells.append((statistics.median(medians), ratio, min(medians), max(medians)))
        (b, bl, b0, b1), (a, al, a0, a1) = cells
        print(f"| `{row}` | {b:.0f} ({bl:.1f}x) [{b0:.0f}-{b1:.0f}] | {a:.0f} ({al:.1f}x) [{a0:.0f}-{a1:.0f}] | {a / b:.3f} |")


if __name__ == "__main__":
    main()
