"""`torchwise` as a user runs it: a subprocess, real files, every format and exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LEGACY = "import torch\n\nx = torch.Tensor(3, 4)  # scratch\ny = torch.LongTensor([1, 2])\n"
CLEAN = "import torch\n\nx = torch.zeros(3, 4)\n"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "legacy.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN, encoding="utf-8")
    return tmp_path


def test_text_output_and_exit_code_1_on_findings(project):
    result = run("check", "pkg", cwd=project)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "pkg/legacy.py:3:5: TW101 [*] `torch.Tensor(...)` with a size returns uninitialized memory" in lines[0]
    assert lines[1].startswith("pkg/legacy.py:4:5: TW102 [*]")
    assert "Found 2 findings in 2 files." in lines
    assert "[*] 2 fixable with `torchwise check --fix`." in lines


def test_clean_exit_0(project):
    result = run("check", "pkg/clean.py", cwd=project)
    assert result.returncode == 0
    assert "All checks passed (1 file)." in result.stdout


def test_select_and_ignore(project):
    assert run("check", "pkg", "--select", "TW102", cwd=project).stdout.count("TW10") == 1
    result = run("check", "pkg", "--ignore", "TW101,TW102", cwd=project)
    assert result.returncode == 0, result.stdout


def test_json_format(project):
    result = run("check", "pkg", "--format", "json", cwd=project)
    assert result.returncode == 1
    items = json.loads(result.stdout)
    assert [(i["code"], i["location"]["row"], i["location"]["column"]) for i in items] == [
        ("TW101", 3, 5), ("TW102", 4, 5)]
    first = items[0]
    assert first["severity"] == "warning" and first["filename"].endswith("legacy.py")
    assert first["fixes"][0]["edits"][0]["content"] == "torch.empty(3, 4)"


def test_sarif_format(project):
    result = run("check", "pkg", "--format", "sarif", cwd=project)
    doc = json.loads(result.stdout)
    assert doc["version"] == "2.1.0"
    [sarif_run] = doc["runs"]
    assert {r["id"] for r in sarif_run["tool"]["driver"]["rules"]} >= {"TW101", "TW102", "TW105", "TW106"}
    results = sarif_run["results"]
    assert [r["ruleId"] for r in results] == ["TW101", "TW102"]
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (3, 5)
    assert results[0]["level"] == "warning"


def test_fix_rewrites_in_place_and_keeps_comments(project):
    result = run("check", "pkg", "--fix", cwd=project)
    assert result.returncode == 0, result.stdout
    assert "Fixed 2 findings." in result.stdout
    assert (project / "pkg" / "legacy.py").read_text(encoding="utf-8") == (
        "import torch\n\nx = torch.empty(3, 4)  # scratch\ny = torch.tensor([1, 2], dtype=torch.int64)\n")
    assert (project / "pkg" / "clean.py").read_text(encoding="utf-8") == CLEAN


def test_fix_keeps_crlf_line_endings(tmp_path):
    path = tmp_path / "win.py"
    path.write_bytes(b"import torch\r\nx = torch.Tensor(2)\r\n")
    run("check", "win.py", "--fix", cwd=tmp_path)
    assert path.read_bytes() == b"import torch\r\nx = torch.empty(2)\r\n"


def test_unparsable_file_is_reported_and_the_rest_still_checked(project):
    (project / "pkg" / "broken.py").write_text("def f(:\n    pass\n", encoding="utf-8")
    result = run("check", "pkg", cwd=project)
    assert result.returncode == 2
    assert "pkg/broken.py:1:7: error: cannot parse: invalid syntax" in result.stdout
    assert "TW101" in result.stdout and "TW102" in result.stdout
    assert "1 file could not be checked." in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_missing_path_is_exit_2_with_a_clear_message(project):
    result = run("check", "nope.py", cwd=project)
    assert result.returncode == 2
    assert "no such file or folder: nope.py" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_pyproject_is_exit_2_with_a_clear_message(project):
    (project / "pyproject.toml").write_text('[tool.torchwise]\nseverity = {TW101 = "loud"}\n', encoding="utf-8")
    result = run("check", "pkg", cwd=project)
    assert result.returncode == 2
    assert "severity of TW101: unknown severity 'loud'" in result.stderr
    assert "Traceback" not in result.stderr


def test_pyproject_config_and_cli_flags_layer(project):
    (project / "pyproject.toml").write_text('[tool.torchwise]\nignore = ["TW101"]\n', encoding="utf-8")
    assert [l.split()[1] for l in run("check", "pkg", cwd=project).stdout.splitlines() if ": TW" in l] == ["TW102"]
    # The command line's select replaces the project's (nothing selected there); ignores add up.
    result = run("check", "pkg", "--select", "TW1", "--ignore", "TW102", cwd=project)
    assert result.returncode == 0, result.stdout


def test_folders_skip_venvs_build_dirs_and_gitignored_paths(project):
    for folder in (".venv/lib", "build", "node_modules/x", "generated", "pkg/__pycache__"):
        (project / folder).mkdir(parents=True)
        (project / folder / "m.py").write_text(LEGACY, encoding="utf-8")
    (project / ".gitignore").write_text("generated/\n", encoding="utf-8")
    result = run("check", ".", "--format", "json", cwd=project)
    files = {Path(item["filename"]).as_posix() for item in json.loads(result.stdout)}
    assert files == {"pkg/legacy.py"}
    # Named explicitly, an excluded file is still checked.
    assert run("check", "build/m.py", cwd=project).returncode == 1


def test_exclude_option(project):
    result = run("check", ".", "--exclude", "pkg/legacy.py", cwd=project)
    assert result.returncode == 0, result.stdout


def test_rules_catalogue():
    listing = run("rules", cwd=Path.cwd())
    assert listing.returncode == 0
    for code in ("TW101", "TW102", "TW105", "TW106"):
        assert code in listing.stdout
    doc = run("rules", "tw101", cwd=Path.cwd())
    assert doc.returncode == 0
    for heading in ("## What it does", "## Why is this bad?", "## Example", "Use instead:", "## Fix"):
        assert heading in doc.stdout
    assert "torch.empty(3, 4)" in doc.stdout
    missing = run("rules", "TW999", cwd=Path.cwd())
    assert missing.returncode == 2 and "no rule 'TW999'" in missing.stderr


def test_version_and_help():
    assert run("--version", cwd=Path.cwd()).stdout.startswith("torchwise ")
    assert run(cwd=Path.cwd()).returncode == 2


def test_no_torch_in_the_server_process():
    code = ("import sys, torchwise.lsp.server, torchwise.cli, torchwise.engine as e;"
            "e.analyze(open(sys.argv[1]).read());"
            "print('torch' in sys.modules)")
    examples = Path(__file__).parent.parent / "examples" / "legacy_constructors.py"
    out = subprocess.run([sys.executable, "-c", code, str(examples)], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Exploring\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["%matplotlib inline\n", "import torch\n", "x = torch.randn(3, 4)\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["h = torch.randn(3)\n", "y = x + h\n", "w = torch.Tensor(2, 2)"]},
    ],
    "metadata": {"kernelspec": {"language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5,
}


def test_notebooks_report_cell_line_col_and_fix_in_place(tmp_path):
    path = tmp_path / "explore.ipynb"
    path.write_text(json.dumps(NOTEBOOK, indent=1), encoding="utf-8")
    result = run("check", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "explore.ipynb:cell 3:2:5: TW501" in result.stdout
    assert "explore.ipynb:cell 3:3:5: TW101" in result.stdout
    items = json.loads(run("check", "explore.ipynb", "--format", "json", cwd=tmp_path).stdout)
    assert [(i["code"], i["cell"], i["location"]["row"]) for i in items] == [("TW501", 3, 2), ("TW101", 3, 3)]
    assert run("check", "explore.ipynb", "--fix", cwd=tmp_path).returncode == 0
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert cells[1]["source"][0] == "%matplotlib inline\n"  # IPython syntax kept as written
    assert cells[2]["source"] == ["h = torch.randn(3)\n", "y = x + h.unsqueeze(1)\n", "w = torch.empty(2, 2)"]


def test_examples_show_their_pitfalls_and_the_clean_model_is_clean():
    examples = Path(__file__).parent.parent / "examples"
    result = run("check", str(examples), "--format", "json", cwd=examples)
    items = json.loads(result.stdout)
    by_file = {}
    for item in items:
        by_file.setdefault(Path(item["filename"]).name, set()).add(item["code"])
    assert "clean_model.py" not in by_file, by_file.get("clean_model.py")
    assert {"TW101", "TW102", "TW105", "TW106"} <= by_file["legacy_constructors.py"]
    assert {"TW104", "TW301", "TW601"} <= by_file["training_loop.py"]
    assert {"TW401", "TW402", "TW403", "TW404", "TW405", "TW406", "TW407"} <= by_file["vectorize_me.py"]


def test_the_server_advertises_the_benchmark_command_by_its_spec_name():
    from torchwise.bench.service import COMMAND
    from torchwise.lsp.server import BENCHMARK_COMMAND

    assert BENCHMARK_COMMAND == COMMAND == "torchwise.benchmarkLoop"
