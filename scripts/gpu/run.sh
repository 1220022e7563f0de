#!/bin/bash
# The benchmark worker on a GPU machine: every request of scripts/gpu/requests.jsonl (make it first
# with scripts/gpu/make_requests.py), device "auto" (CUDA when present). Needs only python and torch
# there: the worker is standalone. Writes results.jsonl and stderr.txt to $OUT (default: this folder).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-$HERE}"
PY=$(command -v python3 || command -v python)
$PY -c "import sys, torch; print(sys.version.split()[0], torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
timeout 420 $PY "$HERE/../../server/torchwise/bench/worker_main.py" < "$HERE/requests.jsonl" > "$OUT/results.jsonl" 2> "$OUT/stderr.txt"
echo "worker exit $?"
$PY - "$OUT/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
hello = next((r for r in rows if r.get("type") == "hello"), {})
print("worker:", {k: hello.get(k) for k in ("ok", "torch", "cuda", "devices")})
results = [r for r in rows if r.get("type") == "result"]
bad = [r for r in results if not r.get("ok") or not r.get("match")]
print(f"{len(results)} results, {len(bad)} failed or not matching")
for r in results:
    print(f"{r['id']:32} {str(r.get('device')):8} match={r.get('match')} speedup={r.get('speedup') or 0:8.1f} "
          f"{r.get('message', '')[:90]}")
sys.exit(1 if bad or not results else 0)
PY
