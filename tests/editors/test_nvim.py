"""torchwise in a real Neovim: diagnostics, hover, quick fix and (when offered) the benchmark.

tests/editors/nvim/e2e.lua drives a headless Neovim against `python -m torchwise lsp` and writes
what the editor saw as JSON; the assertions live here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NVIM = shutil.which("nvim")
SCRIPT = Path(__file__).parent / "nvim" / "e2e.lua"
FIXTURES = Path(__file__).parent / "fixtures" / "workspace"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "editors"

pytestmark = [
    pytest.mark.editor,
    pytest.mark.skipif(NVIM is None, reason="nvim is not installed (scripts/editors/install.sh installs it)"),
]

LEGACY_CALL = "torch.Tensor(3, 4)"
HOVERED_NAME = "features"
LOOP_LINE = "for i in range(10000):"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the fixture workspace: editors may change and save its files."""
    root = tmp_path_factory.mktemp("editor-workspace")
    shutil.copytree(FIXTURES, root, dirs_exist_ok=True)
    return root


def position_of(text: str, needle: str, offset: int = 0) -> dict[str, int]:
    """LSP position (0-based line and character) of `offset` characters into the first `needle`.

    The fixtures are ASCII, so code points and UTF-16 units agree.
    """
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    return {"line": line, "character": index - (text.rfind("\n", 0, index) + 1)}


def run_nvim(workspace: Path, tmp: Path) -> dict:
    legacy = workspace / "legacy.py"
    loop = workspace / "loop.py"
    config = {
        "cmd": [sys.executable, "-m", "torchwise", "lsp"],
        "root": str(workspace),
        "out": str(tmp / "report.json"),
        "hover": position_of(legacy.read_text(), HOVERED_NAME, offset=2),
        "bench": {"file": str(loop), "line": position_of(loop.read_text(), LOOP_LINE)["line"]},
        "timeout_ms": 30_000,
    }
    # Neovim writes its log, shada and state under the XDG folders: keep them out of $HOME.
    xdg = {f"XDG_{kind}_HOME": str(tmp / kind.lower()) for kind in ("CONFIG", "DATA", "STATE", "CACHE")}
    env = {**os.environ, **xdg, "TORCHWISE_E2E": json.dumps(config)}
    command = [NVIM, "--headless", "--clean", "-u", "NONE",
               "--cmd", "let g:loaded_python3_provider=0",  # else opening a .py file costs ~4 s
               "-c", f"luafile {SCRIPT}", str(legacy)]
    done = subprocess.run(command, cwd=workspace, env=env, capture_output=True, text=True, timeout=180)
    out = Path(config["out"])
    assert out.exists(), f"nvim wrote no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    report = json.loads(out.read_text())
    report["exit_code"] = done.returncode
    report["config"] = config
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "nvim-report.json").write_text(json.dumps(report, indent=2))
    return report


@pytest.fixture(scope="module")
def report(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_nvim(workspace, tmp_path_factory.mktemp("nvim"))


def reached(report: dict, step: str) -> None:
    assert step in report["steps"], f"nvim stopped before {step!r}: {report.get('error')}"


def test_tw101_diagnostic(report: dict, workspace: Path) -> None:
    reached(report, "diagnostics")
    [diagnostic] = [d for d in report["diagnostics"] if d["code"] == "TW101"]
    start = position_of((workspace / "legacy.py").read_text(), LEGACY_CALL)
    assert diagnostic["source"] == "torchwise"
    assert diagnostic["range"] == {"start": start, "end": {**start, "character": start["character"] + len(LEGACY_CALL)}}
    assert "uninitialized memory" in diagnostic["message"]


def test_hover_shows_dtype_and_shape(report: dict) -> None:
    reached(report, "hover")
    contents = report["hover"]
    assert contents["kind"] == "markdown"
    assert "`Tensor[float32, (10000, 512)]`" in contents["value"]
    assert "cpu" in contents["value"]


def test_quick_fix_offers_empty_zeros_and_suppress(report: dict) -> None:
    reached(report, "quick fix")
    titles = {a["title"]: a["isPreferred"] for a in report["code_actions"]}
    assert titles.get("Replace with `torch.empty(...)` (TW101)") is True, titles
    assert any(t.startswith("Replace with `torch.zeros(...)`") and not p for t, p in titles.items()), titles
    assert "Suppress TW101 on this line" in titles
    assert report["applied"] == "Replace with `torch.empty(...)` (TW101)"


def test_preferred_fix_changes_the_text(report: dict) -> None:
    reached(report, "quick fix")
    assert report["text_changed"]
    assert "weight = torch.empty(3, 4)\n" in report["text_after_fix"] + "\n"
    assert LEGACY_CALL not in report["text_after_fix"]


def test_diagnostics_clear_after_fix(report: dict) -> None:
    reached(report, "diagnostics after fix")
    assert report["diagnostics_after_fix"] == []


def test_benchmark_loop(report: dict) -> None:
    if "torchwise.benchmarkLoop" not in report.get("server_commands", []):
        pytest.skip("the server does not advertise torchwise.benchmarkLoop in executeCommandProvider.commands yet")
    reached(report, "benchmark")
    result = report["benchmark"]
    assert result["match"] is True, result
    assert result["loop_s"] > 0 and result["vectorized_s"] > 0 and result["speedup"] > 0
    assert result["device"] in ("cpu", "cuda", "mps")
    assert "loop" in result["message"] and "vectorized" in result["message"]


def test_server_exits_cleanly(report: dict) -> None:
    assert report.get("error") is None, report.get("error")
    assert report["exit_code"] == 0
