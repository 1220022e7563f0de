"""Small frictions of issue 14, each fixed: the parse status, the hover's dtype line, `torchwise bench` labels and
a relative `--python`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from conftest import CONFIG, Editor, pytest_lsp, start_session, wait_until
from pytest_lsp import LanguageClient

ROOT = Path(__file__).resolve().parents[1]


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("frictions_ws")
    lsp_client.root = root
    lsp_client.parse_statuses = []

    @lsp_client.feature("torchwise/parseStatus")
    def _parse_status(params):
        lsp_client.parse_statuses.append(params)

    await start_session(lsp_client, root)
    yield
    await lsp_client.shutdown_session()


def _field(params, name):
    return params[name] if isinstance(params, dict) else getattr(params, name, None)


async def test_a_file_that_does_not_parse_says_where(client):
    doc = Editor(client, client.root / "broken.py", "import torch\nx = torch.Tensor(3, 4)\n").open()
    await doc.diagnostics()
    doc.replace_all("import torch\nx = torch.Tensor(3, 4)\ny = (1,\n")
    found = await wait_until(lambda: [p for p in client.parse_statuses if _field(p, "uri") == doc.uri],
                             what="torchwise/parseStatus")
    status = found[-1]
    assert _field(status, "ok") is False and _field(status, "line") == 2 and _field(status, "message")
    doc.replace_all("import torch\nx = torch.Tensor(3, 4)\ny = (1,)\n")
    await wait_until(lambda: _field(client.parse_statuses[-1], "ok") is True, what="parses again")
    assert _field(client.parse_statuses[-1], "uri") == doc.uri


async def test_hover_does_not_say_the_dtype_twice(client):
    doc = Editor(client, client.root / "hover.py", "import torch\nx = torch.randn(3, 4)\ni = torch.arange(3)\n").open()
    await doc.diagnostics()
    for line, expected in ((1, "- dtype: the default dtype float32"), (2, "- dtype: arange of Python ints gives int64")):
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri), position=types.Position(line=line, character=0)))
        assert expected in hover.contents.value
        assert "dtype float32: the default dtype float32" not in hover.contents.value


def bench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchwise", "bench", *args], capture_output=True, text=True,
                          timeout=180, cwd=cwd)


def test_bench_labels_the_line_asked_for_and_takes_a_relative_python(tmp_path: Path):
    pytest.importorskip("torch")
    python = os.path.relpath(sys.executable, ROOT)
    assert not os.path.isabs(python) and os.sep in python
    # (The timed region starts on line 20, the output the loop fills; the loop is on line 21.)
    done = bench("examples/vectorize_me.py:21", "--device", "cpu", "--threads", "1", "--budget", "0.2",
                 "--python", python, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("examples/vectorize_me.py:21: "), done.stdout
