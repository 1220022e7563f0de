#!/usr/bin/env bash
# Runs the real-editor tests: Neovim (pytest, a few seconds) and VS Code (code-server + Chromium,
# about a minute). Needs scripts/editors/install.sh, the venv (make setup) and npm ci.
#
#   scripts/editors/run.sh                 # both suites once
#   scripts/editors/run.sh --repeat 5      # Neovim once, then VS Code 5 times in a row: pass count, durations
#   scripts/editors/run.sh --only vscode   # or --only nvim
#
# Artifacts (screenshots, probe transcript, editor logs) go to artifacts/editors/.
set -uo pipefail
cd "$(dirname "$0")/../.."
repeat=1
only=""
while (($#)); do
  case "$1" in
    --repeat) repeat="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    *) echo "usage: $0 [--repeat N] [--only nvim|vscode]" >&2; exit 2 ;;
  esac
done
PYTHON="${TORCHWISE_PYTHON:-.venv/bin/python}"
ARTIFACTS=artifacts/editors
mkdir -p "$ARTIFACTS"
failed=0

if [ "$only" != "vscode" ]; then
  echo "== Neovim"
  started=$SECONDS
  "$PYTHON" -m pytest -p no:cacheprovider -v tests/editors/test_nvim.py || failed=1
  echo "Neovim suite: $((SECONDS - started)) s"
fi

if [ "$only" != "nvim" ]; then
  passes=0
  durations=()
  for ((run = 1; run <= repeat; run++)); do
    if ((repeat == 1)); then dir="$ARTIFACTS/vscode"; else dir="$ARTIFACTS/vscode-run$run"; fi
    echo "== VS Code, run $run of $repeat (artifacts: $dir)"
    started=$SECONDS
    mkdir -p "$dir"
    EDITORS_ARTIFACTS="$dir" node --test --test-reporter=spec tests/editors/vscode/vscode.test.mjs 2>&1 | tee "$dir.log"
    status=${PIPESTATUS[0]}
    durations+=("$((SECONDS - started))s")
    if ((status == 0)); then passes=$((passes + 1)); else failed=1; fi
  done
  echo "VS Code suite: $passes/$repeat runs passed; durations: ${durations[*]}"
fi

exit "$failed"
