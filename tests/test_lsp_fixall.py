"""Fix-all over real LSP: `source.fixAll.torchwise` applies only preferred fixes; "Fix all TWxxx in this file"."""

from __future__ import annotations

from lsprotocol import types

from conftest import CONFIG, Editor, apply_text_edits, open_notebook, pytest_lsp, start_session, wait_until
from pytest_lsp import LanguageClient

SOURCE = """import torch
import numpy as np
torch.manual_seed(0)
a = torch.Tensor(3, 4)
b = torch.Tensor(5)  # keeps this comment
c = torch.randn(3, 4).cuda()
t = torch.ones(3)
u = torch.tensor([t, t])
x = np.random.rand(3)
"""
FIXED = """import torch
import numpy as np
torch.manual_seed(0)
np.random.seed(0)
a = torch.empty(3, 4)
b = torch.empty(5)  # keeps this comment
c = torch.randn(3, 4).cuda()
t = torch.ones(3)
u = torch.stack([t, t])
x = np.random.rand(3)
"""


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("fixall_ws")
    lsp_client.root = root
    await start_session(lsp_client, root)
    yield
    await lsp_client.shutdown_session()


async def actions(client, uri: str, only=None, line: int = 0, diagnostics=()) -> list[types.CodeAction]:
    found = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=200)),
        context=types.CodeActionContext(diagnostics=list(diagnostics), only=only,
                                        trigger_kind=types.CodeActionTriggerKind.Automatic)))
    return [a for a in found or [] if isinstance(a, types.CodeAction)]


def applied(doc: Editor, action: types.CodeAction) -> str:
    [change] = action.edit.document_changes
    assert change.text_document.version == doc.version
    return apply_text_edits(doc.text, change.edits)


async def test_fix_all_on_save_applies_only_preferred_fixes(client):
    doc = Editor(client, client.root / "save.py", SOURCE).open()
    assert {d.code for d in await doc.diagnostics()} == {"TW601", "TW101", "TW202", "TW106"}
    for only in (["source.fixAll"], ["source.fixAll.torchwise"], ["source"]):  # as codeActionsOnSave asks
        [action] = await actions(client, doc.uri, only)
        assert action.kind == "source.fixAll.torchwise"
        assert applied(doc, action) == FIXED  # the TW202 move is not preferred (other random numbers): left
    doc.replace_all(FIXED)
    assert [d.code for d in await doc.diagnostics()] == ["TW202"]
    assert await actions(client, doc.uri, ["source.fixAll"]) == []  # nothing left to fix


async def test_no_fix_all_in_the_lightbulb_and_no_quick_fix_on_save(client):
    doc = Editor(client, client.root / "kinds.py", SOURCE).open()
    diagnostics = await doc.diagnostics()
    at_line_3 = [d for d in diagnostics if d.range.start.line == 3]
    lightbulb = await actions(client, doc.uri, None, 3, at_line_3)
    assert lightbulb and all(a.kind == types.CodeActionKind.QuickFix for a in lightbulb)
    on_save = await actions(client, doc.uri, ["source.fixAll"], 3, at_line_3)
    assert [a.kind for a in on_save] == ["source.fixAll.torchwise"]
    assert await actions(client, doc.uri, ["refactor"], 3, at_line_3) == []


async def test_fix_all_of_one_code_next_to_its_quick_fix(client):
    doc = Editor(client, client.root / "code.py", SOURCE).open()
    diagnostics = await doc.diagnostics()
    tw101 = [d for d in diagnostics if d.code == "TW101"][0]
    found = await actions(client, doc.uri, None, tw101.range.start.line, [tw101])
    titles = [a.title for a in found]
    assert titles.index("Fix all TW101 in this file") == titles.index("Replace with `torch.zeros(...)` (zero-filled) "
                                                                      "(TW101)") + 1
    every = found[titles.index("Fix all TW101 in this file")]
    assert every.kind == types.CodeActionKind.QuickFix and every.diagnostics[0].code == "TW101"
    assert applied(doc, every) == SOURCE.replace("torch.Tensor(", "torch.empty(")
    # A code with one finding gets only its quick fix.
    tw106 = [d for d in diagnostics if d.code == "TW106"][0]
    assert not any(a.title.startswith("Fix all")
                   for a in await actions(client, doc.uri, None, tw106.range.start.line, [tw106]))


async def test_fix_all_in_a_notebook_cell(client):
    path = client.root / "book.ipynb"
    first, second = open_notebook(client, path, ["import torch\n", "a = torch.Tensor(2)\nb = torch.Tensor(3)\n"])
    await wait_until(lambda: client.diagnostics.get(second), what="the notebook cell's diagnostics")
    [action] = await actions(client, second, ["source.fixAll"])
    [change] = action.edit.document_changes
    assert change.text_document.uri == second
    assert apply_text_edits("a = torch.Tensor(2)\nb = torch.Tensor(3)\n", change.edits) == \
        "a = torch.empty(2)\nb = torch.empty(3)\n"
    assert await actions(client, first, ["source.fixAll"]) == []


def test_changed_region_and_positions():
    from torchwise.lsp.fixall import changed_region, position_at

    assert changed_region("abc", "abc") is None
    assert changed_region("a Tensor(1) b", "a empty(1) b") == (2, 8, "empty")
    lines = ["ab\n", "cd\n", ""]
    assert position_at(lines, 3).line == 1 and position_at(lines, 3).col == 0
    assert position_at(lines, 6).line == 2 and position_at(lines, 6).col == 0
