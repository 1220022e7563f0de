"""torchwise in a real Neovim: diagnostics, hover, quick fix and (when offered) the benchmark.

tests/editors/nvim/e2e.lua drives a headless Neovim against `python -m torchwise lsp` and writes
what the editor saw as JSON; the assertions live here. Every Neovim found runs the scenario:
Debian's (0.7.2) and the one scripts/editors/install.sh puts in .editors/bin (0.11 from PyPI).
The README's set-up (nvim/init.lua) is checked too, on Neovim 0.8+.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
FIXTURES = HERE / "fixtures" / "workspace"
ARTIFACTS = ROOT / "artifacts" / "editors"
E2E_SCRIPT = HERE / "nvim" / "e2e.lua"
README_CONFIG = HERE / "nvim" / "init.lua"
README_CHECK = HERE / "nvim" / "readme_check.lua"

LEGACY_CALL = "torch.Tensor(3, 4)"
HOVERED_NAME = "features"
LOOP_LINE = "for i in range(10000):"
PREFERRED_FIX = "Replace with `torch.empty(...)` (TW101)"
PYTHON = os.environ.get("TORCHWISE_PYTHON", sys.executable)  # the one with torchwise installed


def nvim_version(binary: str) -> tuple[int, ...]:
    first = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n")[0]
    return tuple(int(part) for part in re.search(r"v(\d+)\.(\d+)\.(\d+)", first).groups())


def find_neovims() -> dict[str, str]:
    """Every Neovim to test with, by version: $TORCHWISE_NVIM, `nvim` on PATH, .editors/bin/nvim-*."""
    candidates = [os.environ.get("TORCHWISE_NVIM"), shutil.which("nvim"),
                  *map(str, sorted((ROOT / ".editors" / "bin").glob("nvim-*")))]
    found: dict[str, str] = {}
    for binary in filter(None, candidates):
        if os.access(binary, os.X_OK):
            found.setdefault(".".join(map(str, nvim_version(binary))), binary)
    return found


NEOVIMS = find_neovims()
NO_NEOVIM = pytest.mark.skip(reason="nvim is not installed (scripts/editors/install.sh installs Debian's and 0.11)")

pytestmark = [pytest.mark.editor]


def neovim_params(minimum: tuple[int, ...] = (0, 0, 0)) -> list:
    params = [pytest.param(binary, id=f"nvim-{version}") for version, binary in NEOVIMS.items()
              if tuple(map(int, version.split("."))) >= minimum]
    return params or [pytest.param(None, id="nvim", marks=NO_NEOVIM)]


def position_of(text: str, needle: str, offset: int = 0) -> dict[str, int]:
    """LSP position (0-based line and character) of `offset` characters into the first `needle`.

    The fixtures are ASCII, so code points and UTF-16 units agree.
    """
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    return {"line": line, "character": index - (text.rfind("\n", 0, index) + 1)}


def private_workspace(tmp: Path) -> Path:
    """A copy of the fixture workspace: the editor may change its files."""
    workspace = tmp / "workspace"
    shutil.copytree(FIXTURES, workspace)
    return workspace


def nvim_env(tmp: Path, **extra: str) -> dict[str, str]:
    """Neovim writes its log, shada and state under the XDG folders: keep them out of $HOME."""
    xdg = {f"XDG_{kind}_HOME": str(tmp / kind.lower()) for kind in ("CONFIG", "DATA", "STATE", "CACHE")}
    return {**os.environ, **xdg, **extra}


def run_headless(nvim: str, args: list[str], cwd: Path, env: dict[str, str], out: Path) -> dict:
    command = [nvim, "--headless", "--cmd", "let g:loaded_python3_provider=0", *args]  # else a .py costs ~4 s
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert out.exists(), f"nvim wrote no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    report = json.loads(out.read_text())
    report["exit_code"] = done.returncode
    report["stderr"] = done.stderr
    return report


@pytest.fixture(scope="module", params=neovim_params())
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The e2e.lua scenario, run once per Neovim."""
    nvim = request.param
    tmp = tmp_path_factory.mktemp("nvim")
    workspace = private_workspace(tmp)
    legacy, loop = workspace / "legacy.py", workspace / "loop.py"
    config = {
        "cmd": [PYTHON, "-m", "torchwise", "lsp"],
        "root": str(workspace),
        "out": str(tmp / "report.json"),
        "hover": position_of(legacy.read_text(), HOVERED_NAME, offset=2),
        "bench": {"file": str(loop), "line": position_of(loop.read_text(), LOOP_LINE)["line"]},
        "timeout_ms": 30_000,
    }
    env = nvim_env(tmp, TORCHWISE_E2E=json.dumps(config))
    report = run_headless(nvim, ["--clean", "-u", "NONE", "-c", f"luafile {E2E_SCRIPT}", str(legacy)],
                          workspace, env, Path(config["out"]))
    report["legacy_text"] = legacy.read_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"nvim-{'.'.join(map(str, nvim_version(nvim)))}-report.json").write_text(json.dumps(report, indent=2))
    return report


def reached(report: dict, step: str) -> None:
    assert step in report["steps"], f"nvim stopped before {step!r}: {report.get('error')}"


def test_tw101_diagnostic(report: dict) -> None:
    reached(report, "diagnostics")
    [diagnostic] = [d for d in report["diagnostics"] if d["code"] == "TW101"]
    start = position_of(report["legacy_text"], LEGACY_CALL)
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
    assert titles.get(PREFERRED_FIX) is True, titles
    assert any(t.startswith("Replace with `torch.zeros(...)`") and not p for t, p in titles.items()), titles
    assert "Suppress TW101 on this line" in titles
    assert report["applied"] == PREFERRED_FIX


def test_preferred_fix_changes_the_text(report: dict) -> None:
    reached(report, "quick fix")
    assert report["text_changed"]
    assert "\nweight = torch.empty(3, 4)\n" in report["text_after_fix"] + "\n"
    assert LEGACY_CALL not in report["text_after_fix"]


def test_diagnostics_clear_after_fix(report: dict) -> None:
    reached(report, "diagnostics after fix")
    assert report["diagnostics_after_fix"] == []


def test_benchmark_loop(report: dict) -> None:
    reached(report, "diagnostics")
    if "torchwise.benchmarkLoop" not in report["server_commands"]:
        pytest.skip("the server does not advertise torchwise.benchmarkLoop in executeCommandProvider.commands yet")
    reached(report, "benchmark")
    result = report["benchmark"]
    # The command's answer (docs/architecture.md): {"loop_s", "vectorized_s", "speedup", "device", "match", "message"}.
    assert result["match"] is True, result
    assert result["loop_s"] > 0 and result["vectorized_s"] > 0 and result["speedup"] > 0, result
    assert re.fullmatch(r"cpu|cuda(:\d+)?|mps", result["device"]), result
    assert isinstance(result["message"], str) and result["message"], result


def test_server_exits_cleanly(report: dict) -> None:
    assert report.get("error") is None, report.get("error")
    assert report["exit_code"] == 0, report["stderr"]


@pytest.mark.parametrize("nvim", neovim_params(minimum=(0, 8, 0)))
def test_readme_setup(nvim: str, tmp_path: Path) -> None:
    """The set-up in tests/editors/README.md (nvim/init.lua, verbatim) works as a user's init.lua."""
    assert README_CONFIG.read_text().strip() in (HERE / "README.md").read_text(), "README.md and nvim/init.lua differ"
    workspace = private_workspace(tmp_path)
    out = tmp_path / "readme.json"
    record_messages = ("lua _G.torchwise_messages = {}; vim.lsp.handlers['window/showMessage'] = "
                       "function(_, result) table.insert(_G.torchwise_messages, result) end")
    env = nvim_env(tmp_path, TORCHWISE_E2E_OUT=str(out),
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # `torchwise` on PATH
    report = run_headless(nvim, ["--cmd", record_messages, "-u", str(README_CONFIG), "-i", "NONE",
                                 "-c", f"luafile {README_CHECK}", "legacy.py"], workspace, env, out)
    assert report.get("error") is None, f"{report.get('error')}\n{report['stderr']}"
    assert {(d["source"], d["code"]) for d in report["diagnostics"]} == {("torchwise", "TW101")}
    assert report["messages"] == []
