"""A real server's verdicts, normalised for review: clause -> outcome, then its facts.

Reads a report.json and prints lines that change only when a verdict or a fact
changes (no timings, ids or request counts), so lab/summary/*.txt shows in review
exactly what the suite now says about a real server.

    python3 lab/summarise.py lab/reports/infinity/report.json "infinity-emb 0.0.78"
"""

import json
import sys


def main(path, version):
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    print(f"server: {report['label']} ({version})")
    print(f"model: {report.get('model')}")
    print(f"schema {report['schema_version']}, seed {report['seed']}")
    print()
    for result in report["results"]:
        print(f"{result['id']:<9} {result['level']:<6} {result['outcome']}")
    print()
    for name, value in sorted(report["observations"].items()):
        print(f"{name}: {value}")
    if report.get("aborted"):
        print(f"\naborted: {report['aborted']}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "version unknown")
