"""`torchwise check` at scale, as a subprocess: --jobs, the content-keyed cache, --format github, --statistics,
--diff, --exit-zero."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LEGACY = "import torch\n\nx = torch.Tensor(3, 4)  # scratch\ny = torch.LongTensor([1, 2])\n"
CLEAN = "import torch\n\nx = torch.zeros(3, 4)\n"
SEEDED = "import torch\nimport numpy as np\ntorch.manual_seed(0)\nc = torch.randn(3, 4).cuda()\nx = np.random.rand(3)\n"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for i in range(4):
        (pkg / f"legacy{i}.py").write_text(LEGACY, encoding="utf-8")
    (pkg / "clean.py").write_text(CLEAN, encoding="utf-8")
    (pkg / "seeded.py").write_text(SEEDED, encoding="utf-8")
    return tmp_path


def test_jobs_give_the_same_output_in_the_same_order(project):
    one = run("check", "pkg", "--jobs", "1", "--no-cache", cwd=project)
    many = run("check", "pkg", "--jobs", "3", "--no-cache", cwd=project)
    assert one.returncode == many.returncode == 1
    assert one.stdout == many.stdout
    assert one.stdout.count("TW101") == 4
    assert not (project / ".torchwise_cache").exists()  # --no-cache writes nothing
    assert run("check", "pkg", "--jobs", "-1", cwd=project).returncode == 2


def test_cache_is_keyed_by_content_and_config_and_gitignored(project):
    cold = run("check", "pkg", cwd=project)
    cache = project / ".torchwise_cache"
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == 6
    # A warm run reads the entries: an entry changed by hand shows (nothing is analysed again).
    entry = next(e for e in entries if "TW101" in e.read_text())
    record = json.loads(entry.read_text())
    record["findings"][0]["message"] = "from the cache"
    entry.write_text(json.dumps(record))
    warm = run("check", "pkg", cwd=project)
    assert warm.returncode == 1 and "TW101 [*] from the cache" in warm.stdout
    assert warm.stdout.replace("from the cache", "") != cold.stdout  # (only that line differs)
    # Other bytes, or another configuration, are another key.
    (project / "pkg" / "legacy0.py").write_text(LEGACY + "\n", encoding="utf-8")
    assert run("check", "pkg/legacy0.py", cwd=project).stdout.count("from the cache") == 0
    ignored = run("check", "pkg", "--ignore", "TW101", cwd=project)
    assert "TW101" not in ignored.stdout and "from the cache" not in ignored.stdout
    (project / "pyproject.toml").write_text('[tool.torchwise]\nignore = ["TW102"]\n', encoding="utf-8")
    assert "TW102" not in run("check", "pkg", cwd=project).stdout
    # --cache-dir puts it elsewhere.
    run("check", "pkg", "--cache-dir", "elsewhere", cwd=project)
    assert (project / "elsewhere" / ".gitignore").exists()


def test_json_after_text_builds_the_edits_the_text_run_did_not_keep(project):
    run("check", "pkg", cwd=project)
    items = json.loads(run("check", "pkg", "--format", "json", cwd=project).stdout)
    tw101 = next(i for i in items if i["code"] == "TW101")
    assert tw101["fixes"][0]["edits"][0]["content"] == "torch.empty(3, 4)"
    again = json.loads(run("check", "pkg", "--format", "json", cwd=project).stdout)  # now from the cache
    assert again == items


def test_fix_then_the_cache_shows_what_is_left(project):
    run("check", "pkg", cwd=project)
    entries = sorted((project / ".torchwise_cache").rglob("*.json"))
    fixed = run("check", "pkg", "--fix", cwd=project)
    assert sorted((project / ".torchwise_cache").rglob("*.json")) == entries  # --fix leaves the cache alone
    assert "Fixed 9 findings." in fixed.stdout, fixed.stdout  # 2 per legacy file, TW601 in seeded.py
    assert (project / "pkg" / "legacy1.py").read_text().startswith("import torch\n\nx = torch.empty(3, 4)")
    after = run("check", "pkg", cwd=project)
    assert after.stdout.count("TW") == 1 and "TW202" in after.stdout  # the move is not a preferred fix


def test_format_github_annotations(project):
    result = run("check", "pkg/legacy0.py", "pkg/seeded.py", "--format", "github", cwd=project)
    lines = result.stdout.splitlines()
    assert result.returncode == 1
    assert lines[0].startswith("::warning file=pkg/legacy0.py,line=3,col=5,endLine=3,endColumn=23,"
                               "title=torchwise TW101::TW101 `torch.Tensor(...)`")
    assert any(line.startswith("::notice file=pkg/seeded.py,line=3,") for line in lines)  # TW601 is info
    assert all(line.startswith("::") for line in lines)


def test_statistics(project):
    result = run("check", "pkg", "--statistics", cwd=project)
    lines = result.stdout.splitlines()
    assert result.returncode == 1
    assert lines[0].split("\t") == ["4", "TW101", "[*] legacy-constructor-with-size"]
    assert lines[1].split("\t")[:2] == ["4", "TW102"]
    [tw202] = [line.split("\t") for line in lines if "\tTW202\t" in line]
    assert tw202[0] == "1" and not tw202[2].startswith("[*]")  # its only fix is not preferred
    assert lines[-1] == "Found 10 findings in 6 files."


def test_diff_prints_the_fixes_and_writes_nothing(project):
    before = (project / "pkg" / "legacy0.py").read_text()
    result = run("check", "pkg/legacy0.py", "--diff", cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines()[:2] == ["--- pkg/legacy0.py", "+++ pkg/legacy0.py"]
    assert "-x = torch.Tensor(3, 4)  # scratch\n" in result.stdout and "+x = torch.empty(3, 4)  # scratch\n" in result.stdout
    assert result.stdout.endswith("Would fix 2 findings in 1 file.\n")
    assert (project / "pkg" / "legacy0.py").read_text() == before
    clean = run("check", "pkg/clean.py", "--diff", cwd=project)
    assert (clean.returncode, clean.stdout) == (0, "No fixes to apply.\n")
    assert run("check", "pkg", "--diff", "--fix", cwd=project).returncode == 2


def test_diff_of_a_notebook_names_the_cell(tmp_path):
    book = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                       "source": ["import torch\n"]},
                      {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                       "source": ["x = torch.Tensor(2, 2)\n"]}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "book.ipynb").write_text(json.dumps(book), encoding="utf-8")
    result = run("check", "book.ipynb", "--diff", cwd=tmp_path)
    assert "--- book.ipynb:cell 2\n" in result.stdout and "+x = torch.empty(2, 2)\n" in result.stdout
    assert json.loads((tmp_path / "book.ipynb").read_text()) == book


def test_exit_zero(project):
    assert run("check", "pkg", "--exit-zero", cwd=project).returncode == 0
    (project / "pkg" / "broken.py").write_text("def (:\n", encoding="utf-8")
    assert run("check", "pkg", "--exit-zero", cwd=project).returncode == 2  # could not check: still 2
