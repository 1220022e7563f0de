"""Scale (issue 13) over the real server: a notebook edit republishes only the cells it changed, and what is
published still equals a fresh analysis. Speed itself is measured by benchmarks/bench_scale.py, not here."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import CONFIG, open_notebook, pytest_lsp, start_session, wait_until


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    lsp_client.root = root
    await start_session(lsp_client, root)
    yield
    await lsp_client.shutdown_session()


def _edit_cell(client, notebook_uri: str, version: int, cell_uri: str, cell_version: int, text: str) -> None:
    start = types.Position(line=0, character=0)
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(version=version, uri=notebook_uri),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=cell_uri, version=cell_version),
                changes=[types.TextDocumentContentChangePartial(range=types.Range(start=start, end=start),
                                                                text=text)])]))))


def _published(client, uri: str) -> list:
    return [p for p in client.published if p.uri == uri]


async def test_a_cell_edit_republishes_only_the_cells_it_changed(client):
    path = client.root / "many.ipynb"
    cells = ["import torch\n"] + [f"def f{i}():\n    return torch.zeros({i + 1})\n" for i in range(30)] + \
        ["z = torch.Tensor(2, 3)\n"]
    uris = open_notebook(client, path, cells)
    await wait_until(lambda: all(_published(client, u) for u in uris), what="every cell's first diagnostics")
    assert [d.code for d in client.diagnostics[uris[-1]]] == ["TW101"]
    before = {u: len(_published(client, u)) for u in uris}
    # A pitfall typed into cell 5: that cell is published again, with its new version; the others are not.
    _edit_cell(client, path.as_uri(), 2, uris[5], 2, "    y = torch.Tensor(3, 4)\n".lstrip())
    await wait_until(lambda: any(p.version == 2 for p in _published(client, uris[5])), what="cell 5's diagnostics")
    assert [d.code for d in client.diagnostics[uris[5]]] == ["TW101"]
    # An edit that changes another cell's diagnostics republishes that cell too (the last cell's TW101 stays).
    _edit_cell(client, path.as_uri(), 3, uris[0], 2, "import numpy\n")
    await wait_until(lambda: any(p.version == 2 for p in _published(client, uris[0])), what="cell 0's diagnostics")
    after = {u: len(_published(client, u)) for u in uris}
    assert {u for u in uris if after[u] != before[u]} == {uris[5], uris[0]}
    assert [d.code for d in client.diagnostics[uris[-1]]] == ["TW101"]


async def test_a_cell_whose_diagnostics_change_is_republished(client):
    path = client.root / "shift.ipynb"
    cells = ["import torch\nx = torch.randn(3, 4)\n", "h = torch.randn(3)\ny = x + h\n", "w = 1\n"]
    uris = open_notebook(client, path, cells)
    assert [d.code for d in await wait_until(lambda: client.diagnostics.get(uris[1]), what="the clash")] == ["TW501"]
    await wait_until(lambda: _published(client, uris[2]), what="the last cell's diagnostics")
    last = len(_published(client, uris[2]))
    # A line at the top of cell 1 makes x (4, 3): the clash goes away; cell 2 neither changed nor moved.
    _edit_cell(client, path.as_uri(), 2, uris[1], 2, "x = torch.randn(4, 3)\n")
    await wait_until(lambda: not client.diagnostics.get(uris[1]), what="the clash to go away")
    assert len(_published(client, uris[2])) == last  # the untouched, unchanged cell: not published again
