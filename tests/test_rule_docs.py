"""Rule pages: docs/rules/ matches the rules' own docs; diagnostics link to their page; "Show documentation"."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types

from conftest import CONFIG, Editor, pytest_lsp, start_session, wait_until
from pytest_lsp import LanguageClient
from torchwise.ruledocs import page, pages
from torchwise.rules import ALL_RULES

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules"


def test_docs_rules_are_in_sync_with_the_rules():
    """`python -m torchwise.ruledocs docs/rules` writes them: run it after changing a rule's docs or examples."""
    expected = pages()
    present = {p.name: p.read_text(encoding="utf-8") for p in DOCS.glob("*.md")}
    assert sorted(present) == sorted(expected), "run `python -m torchwise.ruledocs docs/rules`"
    stale = [name for name, text in expected.items() if present[name] != text]
    assert not stale, f"out of date: {stale}; run `python -m torchwise.ruledocs docs/rules`"
    assert len(expected) == len(ALL_RULES) + 1


def test_a_page_has_the_rules_sections():
    text = page("TW301")
    for heading in ("# TW301", "## What it does", "## Why is this bad?", "## Example", "## Fix", "## Not flagged"):
        assert heading in text


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("docs_ws")
    lsp_client.root = root
    await start_session(lsp_client, root)
    yield
    await lsp_client.shutdown_session()


def _path(uri: str) -> Path:
    parsed = urlparse(uri)
    assert parsed.scheme == "file"
    return Path(unquote(parsed.path))


async def test_every_diagnostic_links_to_its_rule_page(client):
    doc = Editor(client, client.root / "linked.py",
                 "import torch\nx = torch.Tensor(3, 4)\nt = torch.ones(3)\ny = torch.tensor([t, t])\n").open()
    diagnostics = await doc.diagnostics()
    assert {d.code for d in diagnostics} == {"TW101", "TW106"}
    for diagnostic in diagnostics:
        target = _path(diagnostic.code_description.href)
        assert target.name == f"{diagnostic.code}.md"
        assert target.read_text(encoding="utf-8") == page(diagnostic.code)  # offline, and of this version


async def test_show_documentation_action_opens_the_page(client):
    doc = Editor(client, client.root / "show.py", "import torch\nx = torch.Tensor(3, 4)\n").open()
    [diagnostic] = await doc.diagnostics()
    found = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    # pytest-lsp's client turns a CodeAction carrying a command into a Command whose `command` is the original
    # Command's repr (VS Code does not); read it back.
    [docs] = [a for a in found if a.title == "Show documentation for TW101"]
    command = docs.command if isinstance(docs, types.CodeAction) else docs
    name, arguments = command.command, command.arguments
    if isinstance(name, str) and name.startswith("{"):
        import ast

        raw = ast.literal_eval(name)
        name, arguments = raw["command"], raw["arguments"]
    assert (name, arguments) == ("torchwise.showRuleDocs", ["TW101"])
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=name, arguments=arguments))
    assert result["uri"] == diagnostic.code_description.href
    shown = await wait_until(lambda: client.shown_documents, what="window/showDocument")
    assert shown[-1].uri == diagnostic.code_description.href and shown[-1].take_focus
    assert "## Why is this bad?" in _path(shown[-1].uri).read_text(encoding="utf-8")
