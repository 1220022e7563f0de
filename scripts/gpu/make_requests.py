"""Benchmark-worker requests, as the server sends them, for every fixable TW4xx loop of the examples
and of the rules' own examples: the input of scripts/gpu/run.sh, which runs them on a GPU machine.

    .venv/bin/python scripts/gpu/make_requests.py scripts/gpu/requests.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "server"))

from torchwise.bench.prepare import prepare  # noqa: E402
from torchwise.engine import analyze  # noqa: E402
from torchwise.rules import ALL_RULES  # noqa: E402


def sources() -> list[tuple[str, str]]:
    found = [(p.name, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "examples").glob("*.py"))]
    for rule in ALL_RULES:
        if rule.code.startswith("TW4"):
            found += [(f"{rule.code}-{i}", ex.code) for i, ex in enumerate(rule.invalid) if ex.fixed is not None]
    return found


def main(out: Path) -> None:
    requests, refused = [], []
    for name, text in sources():
        analysis = analyze(text, name)
        for finding in analysis.findings:
            if not finding.code.startswith("TW4") or not finding.fixes:
                continue
            job = prepare(text, finding.span.start.line, {"N": 4096, "n": 4096}, analysis=analysis)
            if not job.ok:
                refused.append(f"{name}: {finding.code}: {job.message}")
                continue
            request = job.request(device="auto", budget_s=0.5)
            request.update(type="bench", id=f"{name}:{finding.span.start.line + 1}:{finding.code}")
            requests.append(request)
    out.write_text("".join(json.dumps(r) + "\n" for r in requests) + json.dumps({"type": "shutdown"}) + "\n",
                   encoding="utf-8")
    print(f"{len(requests)} requests written to {out}; {len(refused)} loops not benchmarkable")
    for line in refused:
        print("  " + line)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("requests.jsonl"))
