"""`torchwise check` under attack: no lost edits, no truncated files, no hangs, no tracebacks.

Each test drives the CLI as a user does (a subprocess on real files) and reproduces one way the
landed product lost data, hung, crashed or lied; it failed before the hardening and passes after.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

POSIX = os.name == "posix"


def run(*args: str, cwd: Path, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr


LEGACY = "import torch\n\nx = torch.Tensor(3, 4)  # scratch\n"
FIXED = "import torch\n\nx = torch.empty(3, 4)  # scratch\n"


# -- data safety of --fix ------------------------------------------------------------------------------------------
class _Inotify:
    """Linux inotify through libc: tells the moment another process has read a file and closed it."""

    IN_CLOSE_NOWRITE = 0x10

    def __init__(self, path: Path):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.fd = libc.inotify_init1(0)
        if self.fd < 0 or libc.inotify_add_watch(self.fd, str(path).encode(), self.IN_CLOSE_NOWRITE) < 0:
            raise OSError(ctypes.get_errno(), "inotify unavailable")

    def wait_for_read(self) -> None:
        data = os.read(self.fd, 4096)
        assert struct.unpack_from("iIII", data)[1] & self.IN_CLOSE_NOWRITE

    def close(self) -> None:
        os.close(self.fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="watches the read with inotify")
def test_a_line_appended_during_fix_is_not_overwritten(tmp_path: Path):
    # Enough findings that fixing takes seconds: the user's edit lands between the read and the write.
    path = tmp_path / "big.py"
    path.write_text("import torch\n" + "".join(f"x{i} = torch.Tensor({i % 7 + 1}, 3)\n" for i in range(1500)),
                    encoding="utf-8")
    watch = _Inotify(path)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "torchwise", "check", "--fix", "big.py"], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watch.wait_for_read()
        with path.open("a", encoding="utf-8") as handle:
            handle.write("appended_by_the_user = 1\n")
        out, err = proc.communicate(timeout=300)
    finally:
        watch.close()
    text = path.read_text(encoding="utf-8")
    assert "appended_by_the_user = 1" in text  # the user's edit survives
    assert "torch.Tensor(1, 3)" in text  # and torchwise did not write its version over it
    assert "changed on disk while it was being fixed" in out, out + err
    assert "Fixed" not in out  # nothing was written, so nothing was fixed
    assert not [p for p in tmp_path.iterdir() if p.name != "big.py"]  # no temporary file left behind


@pytest.mark.skipif(not POSIX, reason="RLIMIT_FSIZE")
def test_a_write_that_fails_leaves_the_file_whole(tmp_path: Path):
    import resource

    path = tmp_path / "m.py"
    original = LEGACY + "".join(f"# {'padding ' * 8}{i}\n" for i in range(100))
    path.write_text(original, encoding="utf-8")
    limit = len(original.encode()) // 2  # as a full disk: the write stops half-way

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = run("check", "--fix", "m.py", cwd=tmp_path, preexec_fn=small_files)
    no_traceback(result)
    assert path.read_text(encoding="utf-8") == original  # not truncated
    assert result.returncode == 2 and "cannot write fixes" in result.stdout and "unchanged" in result.stdout
    assert "Fixed" not in result.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


@pytest.mark.skipif(not POSIX, reason="POSIX file modes")
def test_fix_keeps_the_files_mode(tmp_path: Path):
    path = tmp_path / "tool.py"
    path.write_text("#!/usr/bin/env python\n" + LEGACY, encoding="utf-8")
    path.chmod(0o751)
    result = run("check", "--fix", "tool.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert path.read_text(encoding="utf-8") == "#!/usr/bin/env python\n" + FIXED
    assert path.stat().st_mode & 0o7777 == 0o751


@pytest.mark.skipif(not POSIX, reason="symlinks")
def test_fix_never_writes_through_a_symlink_that_leaves_the_tree(tmp_path: Path):
    outside = tmp_path / "elsewhere" / "shared.py"
    outside.parent.mkdir()
    outside.write_text(LEGACY, encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "own.py").write_text(LEGACY, encoding="utf-8")
    (project / "linked.py").symlink_to(outside)
    result = run("check", "--fix", ".", cwd=project)
    no_traceback(result)
    assert outside.read_text(encoding="utf-8") == LEGACY  # the file outside is untouched
    assert (project / "linked.py").is_symlink()
    assert (project / "own.py").read_text(encoding="utf-8") == FIXED
    assert "linked.py: warning: not fixed: it is a symlink to" in result.stdout
    assert "Fixed 1 finding." in result.stdout  # only what was written counts
    assert "linked.py:3:5: TW101" in result.stdout  # still checked and reported


@pytest.mark.skipif(not POSIX, reason="symlinks")
def test_a_symlink_inside_the_tree_is_fixed_once_and_stays_a_symlink(tmp_path: Path):
    (tmp_path / "real.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "alias.py").symlink_to("real.py")
    result = run("check", "--fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert (tmp_path / "alias.py").is_symlink()
    assert (tmp_path / "real.py").read_text(encoding="utf-8") == FIXED
    assert "Fixed 1 finding." in result.stdout


# -- positions: only \n, \r\n and \r end a line ----------------------------------------------------------------------
ODD_BREAKS = ("\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


@pytest.mark.parametrize("char", ODD_BREAKS, ids=[f"U+{ord(c):04X}" for c in ODD_BREAKS])
def test_characters_splitlines_breaks_at_do_not_shift_positions(tmp_path: Path, char: str):
    text = f"import torch\n# {char} in a comment\ns = 'a{char}b'  # and in a string\nx = torch.Tensor(3, 4)\n"
    path = tmp_path / "odd.py"
    path.write_text(text, encoding="utf-8")
    result = run("check", "odd.py", "--format", "json", cwd=tmp_path)
    no_traceback(result)
    [item] = json.loads(result.stdout)
    assert (item["code"], item["location"]["row"], item["location"]["column"]) == ("TW101", 4, 5)
    assert item["message"].startswith("`torch.Tensor(...)` with a size")
    assert item["fixes"][0]["edits"][0]["content"] == "torch.empty(3, 4)"
    fixed = run("check", "--fix", "odd.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout
    assert path.read_text(encoding="utf-8") == text.replace("torch.Tensor(3, 4)", "torch.empty(3, 4)")


def test_a_form_feed_file_of_the_stdlib_shape_is_checked_and_fixed(tmp_path: Path):
    # As in 54 files of CPython's standard library: a form feed alone on a line between sections.
    text = "import torch\n\n\x0c\ndef f():\n    return torch.Tensor(2)\n\x0c\ny = torch.Tensor(5)\n"
    (tmp_path / "ff.py").write_text(text, encoding="utf-8")
    result = run("check", "ff.py", cwd=tmp_path)
    where = [line.split(": ")[0] for line in result.stdout.splitlines() if "TW101" in line]
    assert where == ["ff.py:5:12", "ff.py:7:5"]
    assert run("check", "--fix", "ff.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "ff.py").read_text(encoding="utf-8") == text.replace("Tensor(2)", "empty(2)").replace(
        "Tensor(5)", "empty(5)")


# -- crashes and exits ---------------------------------------------------------------------------------------------
TW101_KEYWORDS_ONLY = "import torch\ndev = 'cpu'\nx = torch.Tensor(device=dev)\ny = torch.Tensor(3, 4)\n"


def test_a_fix_that_cannot_be_built_does_not_stop_the_others(tmp_path: Path):
    path = tmp_path / "m.py"
    path.write_text(TW101_KEYWORDS_ONLY, encoding="utf-8")
    for fmt in ("text", "json", "sarif"):
        no_traceback(run("check", "m.py", "--format", fmt, cwd=tmp_path))
    result = run("check", "--fix", "m.py", cwd=tmp_path)
    no_traceback(result)
    assert "internal error" not in result.stdout
    assert "y = torch.empty(3, 4)" in path.read_text(encoding="utf-8")


def test_tw101_fix_of_a_call_with_keywords_only(tmp_path: Path):
    path = tmp_path / "m.py"
    path.write_text(TW101_KEYWORDS_ONLY, encoding="utf-8")
    result = run("check", "--fix", "m.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert path.read_text(encoding="utf-8") == (
        "import torch\ndev = 'cpu'\nx = torch.empty(0, device=dev)\ny = torch.empty(3, 4)\n")


@pytest.mark.skipif(not POSIX, reason="symlinks")
def test_symlink_loops_are_reported_not_a_traceback(tmp_path: Path):
    (tmp_path / "ok.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "self.py").symlink_to("self.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..")  # a folder loop: walked once
    result = run("check", ".", "--format", "json", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2
    items = json.loads(result.stdout)
    assert [(Path(i["filename"]).name, i["code"]) for i in items] == [("ok.py", "TW101"), ("self.py", None)]
    assert "symlink loop" in items[1]["message"]
    named = run("check", "self.py", cwd=tmp_path)
    no_traceback(named)
    assert named.returncode == 2 and "self.py: error: cannot read" in named.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_fifo_named_like_a_python_file_does_not_hang(tmp_path: Path):
    for name in ("x.py", ".gitignore", "pyproject.toml"):  # none of them is ever opened
        os.mkfifo(tmp_path / name)
    (tmp_path / "ok.py").write_text(LEGACY, encoding="utf-8")
    for target in (".", "x.py"):
        result = run("check", target, cwd=tmp_path, timeout=30)
        no_traceback(result)
        assert result.returncode == 2
        assert "x.py: error: not a regular file" in result.stdout
    assert "ok.py:3:5: TW101" in run("check", ".", cwd=tmp_path, timeout=30).stdout


def test_a_bad_pyproject_fails_its_files_and_the_others_are_still_checked(tmp_path: Path):
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "a.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "pyproject.toml").write_text("[tool.torchwise\nselect = [", encoding="utf-8")
    (tmp_path / "bad" / "b.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "bad" / "c.py").write_text(LEGACY, encoding="utf-8")
    result = run("check", ".", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2
    assert "good/a.py:3:5: TW101" in result.stdout
    assert "bad/b.py: error: not checked:" in result.stdout and "bad/c.py: error: not checked:" in result.stdout
    assert result.stderr.count("pyproject.toml: cannot read") == 1  # named once


@pytest.mark.parametrize("table", ["[tool]\ntorchwise = 3\n", "tool = 5\n", 'tool = "x"\n'])
def test_a_pyproject_of_the_wrong_shape_is_a_clear_error(tmp_path: Path, table: str):
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    (tmp_path / "a.py").write_text(LEGACY, encoding="utf-8")
    result = run("check", "a.py", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode in (1, 2)


@pytest.mark.parametrize("source", [5, None, {"a": 1}, ["x = 1\n", 2], [["nested"]]])
def test_a_notebook_whose_cell_source_is_not_text_is_a_clear_error(tmp_path: Path, source):
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": source}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    before = path.read_bytes()
    for args in (("check", "n.ipynb"), ("check", "--fix", "n.ipynb")):
        result = run(*args, cwd=tmp_path)
        no_traceback(result)
        assert result.returncode == 2
        assert "internal error" not in result.stdout
        assert "source of cell 1 is neither a string nor a list of strings" in result.stdout
    assert path.read_bytes() == before


@pytest.mark.parametrize("metadata", [[], "python", {"kernelspec": "python"}, {"kernelspec": None}])
def test_a_notebook_with_odd_metadata_is_checked(tmp_path: Path, metadata):
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": "import torch\nx = torch.Tensor(2)\n"}
    notebook = {"cells": [cell],
                "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "n.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    result = run("check", "n.ipynb", cwd=tmp_path)
    no_traceback(result)
    assert "internal error" not in result.stdout


def test_a_folder_named_like_a_python_file_is_not_all_checks_passed(tmp_path: Path):
    (tmp_path / "foo.py").mkdir()
    result = run("check", "foo.py", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2
    assert "All checks passed" not in result.stdout
    assert "no Python files in foo.py" in result.stderr


def test_a_file_is_read_once_however_many_ways_it_is_named(tmp_path: Path):
    (tmp_path / "a.py").write_text(LEGACY, encoding="utf-8")
    result = run("check", "a.py", "./a.py", ".", cwd=tmp_path)
    assert result.stdout.count("TW101") == 1, result.stdout


def test_the_examples_still_fix_cleanly(tmp_path: Path):
    """The atomic write path end to end on real code: every example fixed, each still parses."""
    examples = Path(__file__).parent.parent / "examples"
    for source in examples.glob("*.py"):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    result = run("check", "--fix", ".", cwd=tmp_path, timeout=300)
    no_traceback(result)
    for fixed in tmp_path.glob("*.py"):
        compile(fixed.read_text(encoding="utf-8"), str(fixed), "exec")
    assert "Fixed" in result.stdout


# -- found by attacking again (stop 26) ----------------------------------------------------------------------------
@pytest.mark.skipif(not POSIX, reason="POSIX file modes")
@pytest.mark.parametrize("name", ["ro.py", "ro.ipynb"])
def test_fix_does_not_replace_a_read_only_file(tmp_path: Path, name: str):
    # The atomic rename needs only the folder's permission: a file the user made read-only was rewritten.
    path = tmp_path / name
    if name.endswith(".ipynb"):
        path.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": LEGACY}],
                                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    else:
        path.write_text(LEGACY, encoding="utf-8")
    before = path.read_bytes()
    path.chmod(0o444)
    result = run("check", "--fix", name, cwd=tmp_path)
    no_traceback(result)
    assert path.read_bytes() == before
    assert path.stat().st_mode & 0o7777 == 0o444
    assert result.returncode == 2 and f"{name}: error: cannot write fixes: it is read-only; the file is unchanged" \
        in result.stdout, result.stdout
    assert "Fixed" not in result.stdout
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.mark.skipif(not Path("/usr/bin/patch").exists(), reason="needs patch(1)")
def test_a_diff_across_a_form_feed_applies_with_patch(tmp_path: Path):
    # The diff split lines at \x0c and \u2028 as str.splitlines does: "\ No newline at end of file" mid-file,
    # and a patch that does not apply.
    text = "import torch\n# \x0c section\nx = torch.Tensor(3, 4)\ny = '\u2028'; z = torch.Tensor(2)\n"
    (tmp_path / "ff.py").write_text(text, encoding="utf-8")
    result = run("check", "--diff", "ff.py", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "No newline" not in result.stdout
    diff = result.stdout[:result.stdout.rindex("Would fix")]
    (tmp_path / "fix.diff").write_text(diff, encoding="utf-8")
    applied = subprocess.run(["patch", "-p0", "-i", "fix.diff"], cwd=tmp_path, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert (tmp_path / "ff.py").read_text(encoding="utf-8") == text.replace("Tensor", "empty")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="watches the read with inotify")
@pytest.mark.parametrize("change", ["replaced by a folder", "deleted"])
def test_a_file_replaced_or_deleted_during_fix_is_left_as_the_user_left_it(tmp_path: Path, change: str):
    path = tmp_path / "big.py"
    path.write_text("import torch\n" + "".join(f"x{i} = torch.Tensor({i % 7 + 1}, 3)\n" for i in range(1500)),
                    encoding="utf-8")
    watch = _Inotify(path)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "torchwise", "check", "--fix", "big.py"], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watch.wait_for_read()
        path.unlink()
        if change == "replaced by a folder":
            path.mkdir()
        out, err = proc.communicate(timeout=300)
    finally:
        watch.close()
    no_traceback(subprocess.CompletedProcess([], proc.returncode, out, err))
    assert proc.returncode == 2 and "big.py: error: cannot write fixes:" in out, out[:500] + err
    assert "Fixed" not in out
    assert path.is_dir() if change == "replaced by a folder" else not path.exists()  # not written back
    assert [p.name for p in tmp_path.iterdir()] == (["big.py"] if path.exists() else [])


def test_a_gitignore_pattern_that_cannot_compile_is_skipped_as_git_skips_it(tmp_path: Path):
    # `[z-a]` matches nothing for git; pathspec raised re.error, a traceback that ended the whole run.
    (tmp_path / ".gitignore").write_text("ign*.py\n**/[z-a]\n", encoding="utf-8")
    (tmp_path / "a.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "ignored.py").write_text(LEGACY, encoding="utf-8")
    result = run("check", ".", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "a.py:3:5: TW101" in result.stdout and "ignored.py" not in result.stdout  # the good pattern holds


@pytest.mark.parametrize("args, said", [
    (("--exclude", "**/[z-a]"), "--exclude '**/[z-a]' is not a gitignore pattern"),
    (("--select", "TW1O1"), "no rule code starts with TW1O1"),  # a typo: it selected nothing, "All checks passed"
    (("--ignore", "TW10,XYZ"), "no rule code starts with XYZ"),
])
def test_bad_command_line_selections_are_an_error_not_a_clean_run(tmp_path: Path, args, said: str):
    (tmp_path / "a.py").write_text(LEGACY, encoding="utf-8")
    result = run("check", "a.py", *args, cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2, result.stdout + result.stderr
    assert said in result.stderr and "All checks passed" not in result.stdout


def test_a_file_that_is_not_utf8_says_where(tmp_path: Path):
    # It said "cannot read: invalid start byte", nothing more, for a file of any length.
    (tmp_path / "bad.py").write_bytes(b"import torch\nx = '\xc3\xa9\xff'\n")
    result = run("check", "bad.py", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2
    assert "bad.py: error: cannot read: not valid utf-8: invalid start byte at line 2, column 7" in result.stdout, \
        result.stdout
    bench = run("bench", "bad.py:2", cwd=tmp_path)
    no_traceback(bench)
    assert bench.returncode == 2 and "not valid utf-8: invalid start byte at line 2, column 7" in bench.stderr, \
        bench.stderr


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["CRLF", "CR"])
def test_fixes_in_a_crlf_file_end_their_lines_as_the_file_does(tmp_path: Path, newline: str):
    # Fixes are written with \n: the examples fixed as CRLF files came back with lines ending in LF alone.
    examples = Path(__file__).parent.parent / "examples"
    (tmp_path / "lf").mkdir()
    (tmp_path / "other").mkdir()
    for source in examples.glob("*.py"):
        text = source.read_bytes().decode("utf-8").replace("\r\n", "\n")
        (tmp_path / "lf" / source.name).write_bytes(text.encode("utf-8"))
        (tmp_path / "other" / source.name).write_bytes(text.replace("\n", newline).encode("utf-8"))
    for folder in ("lf", "other"):
        no_traceback(run("check", "--fix", ".", cwd=tmp_path / folder, timeout=300))
    for fixed in sorted((tmp_path / "lf").glob("*.py")):
        expected = fixed.read_bytes().replace(b"\n", newline.encode())
        assert (tmp_path / "other" / fixed.name).read_bytes() == expected, fixed.name


@pytest.mark.parametrize("entry", ['{"findings": 5, "edits": "x"}', "[]", '{"error": null}', "null", "{garbage"])
def test_a_cache_entry_of_another_shape_is_a_miss_not_a_traceback(tmp_path: Path, entry: str):
    (tmp_path / "a.py").write_text(LEGACY, encoding="utf-8")
    first = run("check", "a.py", "--cache-dir", "cache", cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    entries = [p for p in (tmp_path / "cache").rglob("*.json")]
    assert entries
    for path in entries:
        path.write_text(entry, encoding="utf-8")
    for fmt in ("text", "json"):
        again = run("check", "a.py", "--cache-dir", "cache", "--format", fmt, cwd=tmp_path)
        no_traceback(again)
        assert again.returncode == 1 and "TW101" in again.stdout, again.stdout + again.stderr


DEEP_TOML = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"


def test_a_pyproject_nested_too_deeply_fails_its_files_not_the_run(tmp_path: Path):
    # tomllib recurses per level: a RecursionError traceback ended the whole run.
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "pyproject.toml").write_text(DEEP_TOML, encoding="utf-8")
    (tmp_path / "bad" / "b.py").write_text(LEGACY, encoding="utf-8")
    (tmp_path / "c.py").write_text(LEGACY, encoding="utf-8")
    result = run("check", ".", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2
    assert "bad/b.py: error: not checked:" in result.stdout and "nested too deeply" in result.stdout
    assert "c.py:3:5: TW101" in result.stdout


def test_code_nested_too_deeply_for_python_says_so(tmp_path: Path):
    (tmp_path / "neg.py").write_text("x = " + "-" * 100_000 + "1\n", encoding="utf-8")
    result = run("check", "neg.py", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2 and "cannot parse: nested too deeply for Python" in result.stdout, result.stdout


def test_a_notebook_nested_too_deeply_is_not_a_notebook_not_an_internal_error(tmp_path: Path):
    (tmp_path / "n.ipynb").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = run("check", "n.ipynb", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 2 and "internal error" not in result.stdout
    assert "n.ipynb: error: cannot read: not a notebook: nested too deeply" in result.stdout, result.stdout


def test_code_deeper_than_the_analysis_can_walk_is_one_clear_line(tmp_path: Path):
    # Python parses and runs a chain of 2,000 `x ** x ** ...` (right-deep); the analysis recursed past Python's
    # limit and the file was an "internal error ... please report it", while the other files' results still came.
    (tmp_path / "deep.py").write_text("import torch\nx = torch.randn(3)\ny = " + " ** ".join(["x"] * 2000) + "\n")
    (tmp_path / "legacy.py").write_text(LEGACY)
    result = run("check", ".", cwd=tmp_path)
    no_traceback(result)
    assert "deep.py" in result.stdout and "nested too deeply" in result.stdout, result.stdout
    assert "internal error" not in result.stdout, result.stdout
    assert "legacy.py:3" in result.stdout and "TW101" in result.stdout, result.stdout
    assert result.returncode == 2, result.returncode
