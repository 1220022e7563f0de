"""Hover (and the loop lens) in the hard moments, over real LSP: right after opening, before the first
analysis is done; and while the text does not parse, from the last analysis whose text did, for code
unchanged since (never for a changed line)."""

from __future__ import annotations

import ast

from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import CONFIG, Editor, open_notebook, pytest_lsp, start_session, wait_until

MODEL = (
    "import torch\n"                 # 0
    "x = torch.randn(3, 4)\n"        # 1
    "h = torch.randn(3)\n"           # 2
    "big = torch.stack([\n"          # 3
    "    x,\n"                       # 4
    "    x,\n"                       # 5
    "])\n"                           # 6
    "z = torch.zeros(2, 5)\n"        # 7
)

LOOP = (
    "import torch\n"                                   # 0
    "N = 2000\n"                                       # 1
    "data = torch.randn(N, 64)\n"                      # 2
    "weight = torch.randn(64)\n"                       # 3
    "out = torch.empty(N)\n"                           # 4
    "for i in range(N):\n"                             # 5
    "    out[i] = torch.dot(data[i], weight) + 0.5\n"  # 6
)


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("moments_ws")
    lsp_client.root = root
    await start_session(lsp_client, root)
    yield
    await lsp_client.shutdown_session()


def editor(client, name: str, text: str) -> Editor:
    return Editor(client, client.root / name, text)


async def hover(client, uri: str, line: int, character: int) -> types.Hover | None:
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))


def span(line: int, start: int, end: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=start), end=types.Position(line=line, character=end))


def lines_of(found: types.Hover) -> tuple[int, int]:
    return found.range.start.line, found.range.end.line


def replace_line(doc: Editor, line: int, text: str) -> None:
    """Replace line ``line`` (its end of line kept) by ``text``, which may hold newlines."""
    old = doc.text.split("\n")
    doc.change(types.Range(start=types.Position(line=line, character=0),
                           end=types.Position(line=line, character=len(old[line]))), text)
    doc.text = "\n".join(old[:line] + [text] + old[line + 1:])


def does_not_parse(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return True
    return False


async def test_a_hover_right_after_opening_waits_for_the_first_analysis(client):
    doc = editor(client, "fresh.py", MODEL).open()  # no waiting for diagnostics: the analysis is pending
    found = await hover(client, doc.uri, 1, 0)
    assert found is not None and "Tensor[float32, (3, 4)]" in found.contents.value
    assert lines_of(found) == (1, 1)


async def test_while_a_line_does_not_parse_unchanged_lines_above_and_below_still_answer(client):
    doc = editor(client, "broken_line.py", MODEL).open()
    await doc.diagnostics()
    replace_line(doc, 2, "h = torch.randn(3,,)\n")  # broken, and one line more: what follows moves down
    assert does_not_parse(doc.text)
    above = await hover(client, doc.uri, 1, 0)
    assert above is not None and "Tensor[float32, (3, 4)]" in above.contents.value
    assert above.range == span(1, 0, 1)
    below = await hover(client, doc.uri, 8, 0)  # `z`, on line 7 before the edit
    assert below is not None and "Tensor[float32, (2, 5)]" in below.contents.value
    assert below.range == span(8, 0, 1)
    assert await hover(client, doc.uri, 2, 0) is None  # the broken line
    assert await hover(client, doc.uri, 3, 0) is None  # the line the edit added


async def test_an_expression_that_reaches_a_changed_line_gets_no_answer(client):
    doc = editor(client, "broken_call.py", MODEL).open()
    await doc.diagnostics()
    replace_line(doc, 5, "    x,,")  # inside `torch.stack([...])`
    assert does_not_parse(doc.text)
    assert await hover(client, doc.uri, 3, 8) is None  # the call spans the broken line
    inside = await hover(client, doc.uri, 4, 4)  # `x` on an unchanged line of that call
    assert inside is not None and "Tensor[float32, (3, 4)]" in inside.contents.value
    assert lines_of(inside) == (4, 4)
    target = await hover(client, doc.uri, 3, 1)  # `big` itself lies on an unchanged line
    assert target is not None and "(2, 3, 4)" in target.contents.value


async def test_once_the_text_parses_again_the_hover_is_of_the_new_analysis(client):
    doc = editor(client, "fixed.py", MODEL).open()
    await doc.diagnostics()
    replace_line(doc, 2, "h = torch.randn(3,,)\n")
    assert (await hover(client, doc.uri, 8, 0)) is not None
    doc.replace_all(MODEL.replace("torch.zeros(2, 5)", "torch.zeros(7, 5)"))
    found = await hover(client, doc.uri, 7, 0)  # no waiting for diagnostics: the new analysis is pending
    assert found is not None and "Tensor[float32, (7, 5)]" in found.contents.value
    assert lines_of(found) == (7, 7)


async def test_a_broken_file_whose_analysis_was_dropped_to_save_memory_still_answers(client):
    doc = editor(client, "broken_then_left.py", MODEL).open()
    await doc.diagnostics()
    replace_line(doc, 2, "h = torch.randn(3,,)\n")
    assert (await hover(client, doc.uri, 8, 0)) is not None
    for i in range(10):  # more documents than the server keeps analyses for
        other = editor(client, f"other_{i}.py", MODEL).open()
        await other.diagnostics()
        await hover(client, other.uri, 1, 0)
    found = await hover(client, doc.uri, 8, 0)
    assert found is not None and "Tensor[float32, (2, 5)]" in found.contents.value
    assert lines_of(found) == (8, 8)


async def lenses(client, doc: Editor) -> list[types.CodeLens]:
    return await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri))) or []


async def test_the_loop_lens_stays_while_the_loop_is_unchanged(client):
    doc = editor(client, "lens.py", LOOP).open()
    await doc.diagnostics()
    [lens] = await lenses(client, doc)
    assert lens.range.start.line == 5
    replace_line(doc, 1, "N = (2000\n")  # above the loop: it moves one line down
    assert does_not_parse(doc.text)
    [moved] = await lenses(client, doc)
    assert moved.range.start.line == 6 and moved.command.title == lens.command.title
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=moved.command.command, arguments=moved.command.arguments))
    assert "does not parse" in result["message"]
    replace_line(doc, 7, "    out[i] = torch.dot(data[i], weight) +")  # now the loop's body is broken too
    assert await lenses(client, doc) == []


def change_cell(client, notebook_uri: str, version: int, cell_uri: str, cell_version: int,
                range_: types.Range, text: str) -> None:
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(version=version, uri=notebook_uri),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=cell_uri, version=cell_version),
                changes=[types.TextDocumentContentChangePartial(range=range_, text=text)])]))))


def line_range(line: int, end_character: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=0),
                       end=types.Position(line=line, character=end_character))


async def test_a_notebook_cell_that_does_not_parse_answers_on_its_unchanged_lines(client):
    path = client.root / "moments.ipynb"
    cells = ["%matplotlib inline\nimport torch\nx = torch.randn(3, 4)\n",
             "h = torch.randn(3)\ny = x + h\nw = x.t()\n"]
    cell_uris = open_notebook(client, path, cells)
    first = await hover(client, cell_uris[1], 2, 0)  # right after opening: waits for the first analysis
    assert first is not None and "Tensor[float32, (4, 3)]" in first.contents.value
    # The second cell's first line breaks, and it gains a line: the notebook's analysis leaves the cell out.
    change_cell(client, path.as_uri(), 2, cell_uris[1], 2, line_range(0, 18), "h = torch.randn(3,,)\nq = 1")
    w = await hover(client, cell_uris[1], 3, 0)
    assert w is not None and "Tensor[float32, (4, 3)]" in w.contents.value
    assert w.range == span(3, 0, 1)
    clash = await hover(client, cell_uris[1], 2, 6)  # `+` of `y = x + h`: x comes from the first cell
    assert clash is not None and "cannot broadcast (3, 4) with (3,)" in clash.contents.value
    assert await hover(client, cell_uris[1], 0, 0) is None
    assert await hover(client, cell_uris[1], 1, 0) is None
    x = await hover(client, cell_uris[0], 2, 0)  # the first cell parses: the current analysis answers
    assert x is not None and "Tensor[float32, (3, 4)]" in x.contents.value
    # Fixed, with h now broadcastable: the new analysis answers, no clash.
    change_cell(client, path.as_uri(), 3, cell_uris[1], 3, line_range(0, 20), "h = torch.randn(4,)")
    fixed = await hover(client, cell_uris[1], 2, 6)
    assert fixed is not None and "Tensor[float32, (3, 4)]" in fixed.contents.value
    assert "cannot broadcast" not in fixed.contents.value
    await wait_until(lambda: client.diagnostics.get(cell_uris[1]) == (), what="the cell's clash to go away")
