#!/usr/bin/env python3
"""Checks `kandev-recovery bench --json` on stdin: one object with every
key docs/benchmarks.md documents, rates positive and times non-negative numbers
(a timer's lateness is counted in whole milliseconds, so 0 is a fair
figure), each keyed figure keyed by the counts the run measured."""
import json
import math
import sys

report = json.load(sys.stdin)
problems = []


def number(name, value, positive):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        problems.append(f"{name} is {value!r}, not a number")
    elif positive and value <= 0:
        problems.append(f"{name} is {value}, not positive")
    elif value < 0:
        problems.append(f"{name} is {value}, negative")


if report.get("engine") not in ("sqlite", "postgres"):
    problems.append(f"engine is {report.get('engine')!r}")
keyed = {
    "ceiling_commits_per_s": True,
    "decisions_per_s": True,
    "decision_p99_ms": False,
    "timer_lateness_p99_ms": False,
    "reconcile_ms": False,
    "retention_decisions_per_s": True,
    "retention_db_mb": True,
}
for key, positive in keyed.items():
    figures = report.get(key)
    if not isinstance(figures, dict) or not figures:
        problems.append(f"{key} is missing or empty")
        continue
    for count, value in figures.items():
        if not count.isdigit():
            problems.append(f"{key} is keyed by {count!r}, not a count")
        number(f"{key}[{count}]", value, positive)
for clients in ("1", "8", "64"):
    for key in ("ceiling_commits_per_s", "decisions_per_s", "decision_p99_ms"):
        if clients not in report.get(key, {}):
            problems.append(f"{key} has no figure for {clients} clients")
number("classifier_envelopes_per_s", report.get("classifier_envelopes_per_s"), True)
number("sse_p99_ms", report.get("sse_p99_ms"), False)
number("rss_mb", report.get("rss_mb"), True)
for key in ("wasm_bytes", "wasm_gzip_bytes"):
    if report.get(key) != "not built":
        number(key, report.get(key), True)

if problems:
    print("bench --json: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"bench --json ({report['engine']}): every figure present")
