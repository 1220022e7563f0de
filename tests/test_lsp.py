"""The language server end to end, over real LSP (pytest-lsp drives `torchwise lsp`)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from conftest import CONFIG, Editor, apply_text_edits, open_notebook, pytest_lsp, start_session, wait_until
from torchwise.rules import ALL_RULES
from pytest_lsp import LanguageClient

LEGACY = "import torch\n\nx = torch.Tensor(3, 4)\n"


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    lsp_client.root = root
    await start_session(lsp_client, root)
    yield
    await lsp_client.shutdown_session()


def editor(client, name: str, text: str) -> Editor:
    return Editor(client, client.root / name, text)


async def quick_fixes(client, doc: Editor, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    return [a for a in actions or [] if isinstance(a, types.CodeAction)]


async def test_open_publishes_diagnostics_with_code_range_and_source(client):
    doc = editor(client, "open.py", LEGACY).open()
    [diag] = await doc.diagnostics()
    assert diag.code == "TW101"
    assert diag.source == "torchwise"
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert diag.range == types.Range(start=types.Position(line=2, character=4),
                                     end=types.Position(line=2, character=22))


async def test_quick_fix_applies_and_reanalysis_is_clean(client):
    doc = editor(client, "fix.py", LEGACY).open()
    [diag] = await doc.diagnostics()
    actions = await quick_fixes(client, doc, diag)
    titles = [a.title for a in actions]
    assert titles[0].startswith("Replace with `torch.empty(...)`")
    preferred = actions[0]
    assert preferred.is_preferred and preferred.kind == types.CodeActionKind.QuickFix
    assert preferred.diagnostics[0].code == "TW101"
    [change] = preferred.edit.document_changes
    assert change.text_document.version == doc.version
    fixed = apply_text_edits(doc.text, change.edits)
    assert fixed == "import torch\n\nx = torch.empty(3, 4)\n"
    doc.replace_all(fixed)
    assert await doc.diagnostics() == []


async def test_second_action_and_suppression_action(client):
    doc = editor(client, "actions.py", LEGACY).open()
    [diag] = await doc.diagnostics()
    actions = await quick_fixes(client, doc, diag)
    by_title = {a.title: a for a in actions}
    zeros = next(a for t, a in by_title.items() if "torch.zeros" in t)
    assert apply_text_edits(doc.text, zeros.edit.document_changes[0].edits) == "import torch\n\nx = torch.zeros(3, 4)\n"
    suppress = by_title["Suppress TW101 on this line"]
    suppressed = apply_text_edits(doc.text, suppress.edit.document_changes[0].edits)
    assert suppressed == "import torch\n\nx = torch.Tensor(3, 4)  # noqa: TW101\n"
    doc.replace_all(suppressed)
    assert await doc.diagnostics() == []


@pytest.mark.parametrize("comment", ["# noqa: TW101", "# torchwise: ignore[TW101]", "# noqa"])
async def test_inline_suppression(client, comment):
    name = f"suppress_{abs(hash(comment))}.py"
    doc = editor(client, name, f"import torch\nx = torch.Tensor(3, 4)  {comment}\ny = torch.Tensor(2)\n").open()
    diags = await doc.diagnostics()
    assert [(d.code, d.range.start.line) for d in diags] == [("TW101", 2)]


async def test_file_level_suppression(client):
    doc = editor(client, "ignore_file.py", "# torchwise: ignore-file\nimport torch\nx = torch.Tensor(3)\n").open()
    assert await doc.diagnostics() == []


async def test_unparsable_code_keeps_last_good_diagnostics(client):
    doc = editor(client, "typing.py", LEGACY).open()
    [diag] = await doc.diagnostics()
    good_version = doc.version
    doc.replace_all(LEGACY + "def broken(:\n")
    # The server logs that it keeps the old diagnostics, and publishes nothing for the broken version.
    await wait_until(lambda: any("does not parse yet" in m.message for m in client.log_messages),
                     what="the log line about unparsable code")
    assert list(client.diagnostics[doc.uri]) == [diag]
    assert [p.version for p in doc.publishes()] == [good_version]
    # No code actions against text the analysis has not seen.
    assert await quick_fixes(client, doc, diag) == []
    doc.replace_all("import torch\nx = torch.LongTensor([1, 2])\n")
    [fresh] = await doc.diagnostics()
    assert fresh.code == "TW102"


async def test_close_clears_diagnostics(client):
    doc = editor(client, "close.py", LEGACY).open()
    assert await doc.diagnostics()
    doc.close()
    await wait_until(lambda: client.diagnostics.get(doc.uri) == (), what="cleared diagnostics")


async def test_rapid_edits_publish_only_the_latest_version(client):
    doc = editor(client, "rapid.py", "import torch\n").open()
    await doc.diagnostics()
    for n in range(1, 8):
        doc.replace_all("import torch\n" + "".join(f"x{i} = torch.Tensor({i})\n" for i in range(n)))
    diags = await doc.diagnostics()
    assert len(diags) == 7
    versions = [p.version for p in doc.publishes()]
    assert versions == sorted(versions), "a publish for an older version arrived after a newer one"
    assert versions[-1] == doc.version


async def test_positions_are_utf16_columns(client):
    # "😀" is one code point but two UTF-16 units; "é" is one of each.
    doc = editor(client, "unicode.py", 'import torch\ns = "é😀"; x = torch.Tensor(2)\n').open()
    [diag] = await doc.diagnostics()
    # Code points: `torch` starts at 14; in UTF-16 units the emoji counts twice.
    assert diag.range.start == types.Position(line=1, character=15)
    assert diag.range.end == types.Position(line=1, character=30)
    [fix, *_] = await quick_fixes(client, doc, diag)
    assert apply_text_edits(doc.text, fix.edit.document_changes[0].edits) == \
        'import torch\ns = "é😀"; x = torch.empty(2)\n'


async def test_pyproject_config_applies_per_folder(client):
    project = client.root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.torchwise]\nignore = ["TW101"]\nseverity = {TW102 = "error"}\n', encoding="utf-8")
    doc = Editor(client, project / "m.py", "import torch\na = torch.Tensor(3)\nb = torch.Tensor([1])\n").open()
    diags = await doc.diagnostics()
    assert [(d.code, d.severity) for d in diags] == [("TW102", types.DiagnosticSeverity.Error)]


async def test_hover_answers_without_error(client):
    doc = editor(client, "hover.py", LEGACY).open()
    await doc.diagnostics()
    await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri), position=types.Position(line=2, character=0)))


HOVER_FILE = (
    "import torch\n"
    "batch_size = 10000\n"
    "data = torch.randn(batch_size, 512)\n"
    "x = torch.randn(3, 4)\n"
    "h = torch.randn(3)\n"
    "bad = x + h\n"
    "y = x.transpose(0, 1).view(12)\n"
)


async def hover_at(client, doc: Editor, line: int, character: int) -> str | None:
    result = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri),
        position=types.Position(line=line, character=character)))
    return result.contents.value if result is not None else None


async def test_hover_shows_dtype_shape_device_and_why(client):
    doc = editor(client, "hover_facts.py", HOVER_FILE).open()
    await doc.diagnostics()
    text = await hover_at(client, doc, 2, 1)
    assert "Tensor[float32, (10000, 512)]" in text and "on cpu" in text and "contiguous" in text
    assert "the default dtype float32" in text


async def test_hover_on_an_operator_shows_the_broadcast(client):
    doc = editor(client, "hover_broadcast.py", HOVER_FILE).open()
    diagnostics = await doc.diagnostics()
    assert "TW501" in [d.code for d in diagnostics]
    text = await hover_at(client, doc, 5, 8)
    assert "cannot broadcast (3, 4) with (3,): dim -1 is 4 vs 3" in text
    assert "x  3 4" in text


async def test_hover_on_view_shows_layout(client):
    doc = editor(client, "hover_view.py", HOVER_FILE).open()
    diagnostics = await doc.diagnostics()
    assert "TW301" in [d.code for d in diagnostics]
    text = await hover_at(client, doc, 6, 24)
    assert ".view" in text and "not contiguous (strides (1, 4))" in text


SEQUENCES = (
    "import torch\n"
    "x = torch.randn(8, 16)\n"
    "rows = [x[i] * 2 for i in range(8)]\n"
    "best = torch.randn(4, 5).max(dim=1)\n"
    "pair = (x, 3)\n"
)


async def test_hover_on_a_list_or_tuple_shows_its_items(client):
    """One line for items alike, one line per item when they differ (named fields by name)."""
    doc = editor(client, "hover_sequences.py", SEQUENCES).open()
    await doc.diagnostics()
    assert await hover_at(client, doc, 2, 1) == "**rows**: `list` of 8 · each `Tensor[float32, (16,)]` on cpu · contiguous"
    best = await hover_at(client, doc, 3, 1)
    assert "- .values: `Tensor[float32, (4,)]`" in best and "- .indices: `Tensor[int64, (4,)]`" in best
    pair = await hover_at(client, doc, 4, 1)
    assert pair.splitlines()[1:] == ["- [0]: `Tensor[float32, (8, 16)]` on cpu · contiguous", "- [1]: `int = 3`"]


async def test_hover_on_nothing_known_is_empty(client):
    doc = editor(client, "hover_none.py", "import os\nx = os.getcwd()\n").open()
    await doc.diagnostics()
    assert await hover_at(client, doc, 1, 0) is None


FIXABLE = [(rule.code, i, ex) for rule in ALL_RULES for i, ex in enumerate(rule.invalid) if ex.fixed]


@pytest.mark.parametrize(("code", "i", "example"), FIXABLE, ids=[f"{c}-{i}" for c, i, _ in FIXABLE])
async def test_every_rule_fix_over_lsp(client, code, i, example):
    """Each rule's own example: diagnostic over LSP, its quick fix applied, re-analysis clean."""
    doc = editor(client, f"rule_{code}_{i}.py", example.code).open()
    diagnostics = [d for d in await doc.diagnostics() if d.code == code]
    assert len(diagnostics) == 1
    actions = await quick_fixes(client, doc, diagnostics[0])
    preferred = [a for a in actions if a.is_preferred and a.diagnostics[0].code == code]
    assert preferred, [a.title for a in actions]
    fixed = apply_text_edits(doc.text, preferred[0].edit.document_changes[0].edits)
    assert fixed == example.fixed
    doc.replace_all(fixed)
    assert code not in [d.code for d in await doc.diagnostics()]


@pytest.mark.parametrize("style", ["plain", "code-server"])
async def test_notebook_cells_share_facts_and_get_their_own_diagnostics(client, style):
    cells = [("%matplotlib inline\nimport torch\nx = torch.randn(3, 4)\n"),
             ("h = torch.randn(3)\ny = x + h\nw = torch.Tensor(2)\n")]
    path = client.root / f"explore_{style}.ipynb"
    # code-server's cell URIs carry a host and a percent-encoded fragment.
    cell_uris = [f"vscode-notebook-cell:{path}#cell{i}" if style == "plain" else
                 f"vscode-notebook-cell://127.0.0.1:44729{path}#W{i}sdnNjb2RlLXJlbW90ZQ%3D%3D" for i in range(2)]
    open_notebook(client, path, cells, cell_uris)
    diagnostics = await wait_until(lambda: client.diagnostics.get(cell_uris[1]), what="the second cell's diagnostics")
    # x comes from the first cell: the broadcast clash is known in the second.
    assert [(d.code, d.range.start.line) for d in diagnostics] == [("TW501", 1), ("TW101", 2)]
    assert client.diagnostics.get(cell_uris[0]) == ()
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=cell_uris[1]), position=types.Position(line=1, character=6)))
    assert "cannot broadcast (3, 4) with (3,)" in hover.contents.value
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=cell_uris[1]), range=diagnostics[1].range,
        context=types.CodeActionContext(diagnostics=[diagnostics[1]])))
    fix = next(a for a in actions if isinstance(a, types.CodeAction) and a.is_preferred)
    [change] = fix.edit.document_changes
    assert change.text_document.uri == cell_uris[1]
    assert apply_text_edits(cells[1], change.edits) == "h = torch.randn(3)\ny = x + h\nw = torch.empty(2)\n"


async def test_hover_and_fixes_after_the_analysis_was_dropped_to_save_memory(client):
    first = editor(client, "memory_0.py", HOVER_FILE + LEGACY).open()
    diagnostic = next(d for d in await first.diagnostics() if d.code == "TW101")
    for i in range(1, 12):  # more documents than the server keeps analyses for
        await editor(client, f"memory_{i}.py", HOVER_FILE).open().diagnostics()
    text = await hover_at(client, first, 2, 1)
    assert "Tensor[float32, (10000, 512)]" in text
    for i in range(1, 12):  # and once more, for the code action
        await hover_at(client, editor(client, f"memory_{i}.py", HOVER_FILE), 2, 1)
    fixes = await quick_fixes(client, first, diagnostic)
    assert any("torch.empty" in fix.title for fix in fixes)


async def test_an_edited_notebook_cell_updates_the_facts_of_later_cells(client):
    """Notebooks are analysed incrementally too: after an edit, a later cell sees the new facts."""
    path = client.root / "edited.ipynb"
    cells = ["import torch\ndef make():\n    return torch.randn(3, 4)\nx = make()\n",
             "h = torch.randn(3)\ny = x + h\n"]
    cell_uris = open_notebook(client, path, cells)
    before = await wait_until(lambda: client.diagnostics.get(cell_uris[1]), what="the clash in the second cell")
    assert [d.code for d in before] == ["TW501"]
    # In the first cell, `(3, 4)` becomes `(4, 3)`: now `x + h` broadcasts.
    edit = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=2, character=23), end=types.Position(line=2, character=27)),
        text="4, 3")
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=path.as_uri()),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=cell_uris[0], version=2), changes=[edit])]))))
    await wait_until(lambda: client.diagnostics.get(cell_uris[1]) == (), what="the clash to go away")
