"""Shared test helpers: a real LSP client talking to a real `torchwise lsp` process."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pygls.protocol import default_converter

SERVER = [sys.executable, "-m", "torchwise", "lsp"]


def _record_diagnostics(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)


def _code_lens_refresh(client: LanguageClient, params) -> None:
    client.lens_refreshes += 1


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # every publishDiagnostics, in order (the versions matter)
    client.lens_refreshes = 0  # pytest-lsp has no handler for workspace/codeLens/refresh
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES,
                                   types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record_diagnostics,
                                   types.WORKSPACE_CODE_LENS_REFRESH: _code_lens_refresh})
    return client


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


async def start_session(client: LanguageClient, root: Path, settings: dict | None = None) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        # A trusted workspace, as an editor that declares it (VS Code sends workspace.isTrusted).
        initialization_options={"settings": {"trusted": True, **(settings or {})}},
    ))


async def wait_until(condition, timeout: float = 10.0, what: str = "condition"):
    """Poll a condition (never a fixed sleep) and fail with a clear message on timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = condition()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.02)


class Editor:
    """A document as an editor holds it: open, edit (incremental), close."""

    def __init__(self, client: LanguageClient, path: Path, text: str):
        self.client, self.path, self.text, self.version = client, path, text, 1
        self.uri = path.as_uri()

    def open(self) -> "Editor":
        self.path.write_text(self.text, encoding="utf-8")
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=self.text)))
        return self

    def replace_all(self, text: str) -> None:
        lines = self.text.split("\n")
        end = types.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)
        self.change(types.Range(start=types.Position(line=0, character=0), end=end), text)
        self.text = text

    def change(self, range_: types.Range, text: str) -> None:
        self.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(version=self.version, uri=self.uri),
            content_changes=[types.TextDocumentContentChangePartial(range=range_, text=text)]))

    def close(self) -> None:
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri)))

    def publishes(self) -> list[types.PublishDiagnosticsParams]:
        return [p for p in self.client.published if p.uri == self.uri]

    async def diagnostics(self, version: int | None = None, timeout: float = 10.0) -> list[types.Diagnostic]:
        """Diagnostics published for ``version`` (default: the current one)."""
        want = self.version if version is None else version
        found = await wait_until(lambda: [p for p in self.publishes() if p.version == want],
                                 timeout, f"diagnostics of {self.path.name} v{want}")
        return list(found[-1].diagnostics)


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to text, last first."""
    lines = text.split("\n")

    def offset(pos: types.Position) -> int:
        line = lines[pos.line]
        units, col = 0, 0
        while col < len(line) and units < pos.character:
            units += len(line[col].encode("utf-16-le")) // 2
            col += 1
        return sum(len(l) + 1 for l in lines[:pos.line]) + col

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


__all__ = ["CONFIG", "Editor", "apply_text_edits", "pytest_lsp", "start_session", "wait_until"]


def open_notebook(client: LanguageClient, path: Path, cells: list[str],
                  cell_uris: list[str] | None = None) -> list[str]:
    """Open a notebook of Python code cells (as VS Code does: one notification for the notebook and its
    cell documents); the cells' URIs, in order."""
    cell_uris = cell_uris or [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(cells))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=path.as_uri(), notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=u) for u in cell_uris]),
        cell_text_documents=[types.TextDocumentItem(uri=u, language_id="python", version=1, text=t)
                             for u, t in zip(cell_uris, cells)]))
    return cell_uris
