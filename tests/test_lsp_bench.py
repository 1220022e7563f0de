"""The benchmark over real LSP: code lens → command (progress) → result in the lens and the hover."""

from __future__ import annotations

import asyncio
import sys

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import CONFIG, Editor, open_notebook, pytest_lsp, start_session, wait_until

pytest.importorskip("torch")

LOOP = (
    "import torch\n"
    "N = 2000\n"
    "data = torch.randn(N, 64)\n"
    "weight = torch.randn(64)\n"
    "bias = 0.5\n"
    "out = torch.empty(N)\n"
    "for i in range(N):\n"
    "    out[i] = torch.dot(data[i], weight) + bias\n"
)


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("bench_ws")
    lsp_client.root = root
    await start_session(lsp_client, root, {"interpreter": sys.executable, "benchmark": {"timeLimit": 60}})
    yield
    await lsp_client.shutdown_session()


async def lenses(client, doc: Editor) -> list[types.CodeLens]:
    return await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri))) or []


async def test_lens_command_progress_result_and_hover(client):
    doc = Editor(client, client.root / "loop.py", LOOP).open()
    codes = [d.code for d in await doc.diagnostics()]
    assert "TW401" in codes
    [lens] = await lenses(client, doc)
    assert lens.range.start.line == 6 and "Benchmark loop vs vectorized" in lens.command.title
    assert lens.command.command == "torchwise.benchmarkLoop"

    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=lens.command.command, arguments=lens.command.arguments))
    assert result["match"] is True, result
    assert result["speedup"] > 1 and result["device"] == "cpu"
    assert any(r for r in client.progress_reports.values()), "no progress was reported"
    await wait_until(lambda: client.lens_refreshes > 0, what="a code lens refresh")
    [measured] = await lenses(client, doc)
    assert "loop" in measured.command.title and "results match" in measured.command.title

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri), position=types.Position(line=6, character=0)))
    assert hover is not None and "torch" in hover.contents.value

    # A second run is warm: the worker stays up between runs.
    again = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=lens.command.command, arguments=lens.command.arguments))
    assert again["match"] is True


async def test_the_result_is_stale_once_the_loop_changes(client):
    doc = Editor(client, client.root / "stale.py", LOOP).open()
    await doc.diagnostics()
    [lens] = await lenses(client, doc)
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=lens.command.command, arguments=lens.command.arguments))
    doc.replace_all(LOOP.replace("+ bias", "+ 2 * bias"))
    await doc.diagnostics()
    [changed] = await lenses(client, doc)
    assert "stale" in changed.command.title


SLOW = LOOP.replace("N = 2000", "N = 400000").replace("torch.randn(N, 64)", "torch.randn(N, 8)").replace(
    "torch.randn(64)", "torch.randn(8)")


async def test_cancelling_the_progress_kills_the_run(client):
    doc = Editor(client, client.root / "slow.py", SLOW).open()
    await doc.diagnostics()
    [lens] = await lenses(client, doc)
    before = set(client.progress_reports)
    running = asyncio.ensure_future(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=lens.command.command, arguments=lens.command.arguments)))
    token = await wait_until(lambda: next(iter(set(client.progress_reports) - before), None),
                             what="the benchmark's progress")
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await running
    assert "cancelled" in result["message"]
    # The next run starts a fresh worker and works.
    quick = Editor(client, client.root / "after_cancel.py", LOOP).open()
    await quick.diagnostics()
    [lens] = await lenses(client, quick)
    again = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=lens.command.command, arguments=lens.command.arguments))
    assert again["match"] is True


async def test_a_loop_in_a_notebook_cell_gets_its_lens_and_runs_with_the_earlier_cells_as_setup(client):
    setup, loop = LOOP.split("out = torch.empty(N)\n")
    cells = [setup, "%time\nout = torch.empty(N)\n" + loop]
    cell_uris = open_notebook(client, client.root / "explore.ipynb", cells)
    await wait_until(lambda: client.diagnostics.get(cell_uris[1]), what="the loop cell's diagnostics")

    async def cell_lenses(i):
        return await client.text_document_code_lens_async(types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uris[i]))) or []
    assert await cell_lenses(0) == []
    [lens] = await cell_lenses(1)
    assert lens.range.start.line == 2 and list(lens.command.arguments) == [cell_uris[1], 2]  # the cell's own line
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=lens.command.command, arguments=lens.command.arguments))
    assert result["match"] is True and result["speedup"] > 1, result
    [measured] = await cell_lenses(1)
    assert "results match" in measured.command.title
