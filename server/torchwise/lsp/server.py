"""The torchwise language server (pygls). Each feature is one small handler."""

from __future__ import annotations

import asyncio
import os
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from torchwise import __version__
from torchwise.config import ConfigError, RuleConfig, project_config
from torchwise.engine import Analysis, analyze
from torchwise.explain import Explainer
from torchwise.rules import ALL_RULES
from torchwise.findings import Finding, Position, Span
from torchwise.lsp.convert import from_lsp_position, to_diagnostic, to_lsp_range
from torchwise.lsp.settings import EditorSettings, parse_settings

# Typing pauses shorter than this are not worth an analysis. TORCHWISE_DEBOUNCE_MS overrides it
# (benchmarks set 0 to measure analysis latency alone).
DEBOUNCE_S = float(os.environ.get("TORCHWISE_DEBOUNCE_MS", "100")) / 1000


@dataclass
class Checked:
    version: int | None
    analysis: Analysis


class TorchwiseServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("torchwise", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings = EditorSettings()
        self.checked: dict[str, Checked] = {}  # last analysis that parsed, per open document
        self.pending: dict[str, asyncio.Task] = {}
        self.broken: set[str] = set()  # documents that do not parse right now
        # One worker: analyses run one at a time, off the event loop so messages keep flowing.
        self.analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torchwise-analysis")
        self._config_problems: set[str] = set()

    # -- logging ----------------------------------------------------------------------
    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def warn_once(self, message: str) -> None:
        """A problem the user must fix (bad settings): shown once, logged always."""
        self.log(message, types.MessageType.Warning)
        if message not in self._config_problems:
            self._config_problems.add(message)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))

    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    # -- analysis -----------------------------------------------------------------------
    def rule_config(self, path: str | None) -> RuleConfig:
        config = self.settings.rules
        if path:
            try:
                config = RuleConfig().layered(config).layered(project_config(Path(path)))
            except ConfigError as err:
                self.warn_once(f"torchwise: {err}; using the editor settings")
        return config

    def schedule(self, uri: str, delay: float) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.ensure_future(self._check(uri, delay))

    async def _check(self, uri: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            doc = self.workspace.text_documents.get(uri)
            if doc is None:
                return
            version, text = doc.version, doc.source
            config = self.rule_config(doc.path)
            loop = asyncio.get_running_loop()
            previous = self.checked.get(uri)
            analysis = await loop.run_in_executor(
                self.analysis_pool, analyze, text, doc.path or uri, config, ALL_RULES,
                previous.analysis if previous is not None else None)
        except asyncio.CancelledError:
            return
        except Exception:  # a bug in a rule must never take the server down
            self.log(f"torchwise: analysis of {uri} failed:\n{traceback.format_exc()}", types.MessageType.Error)
            return
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]
        current = self.workspace.text_documents.get(uri)
        if current is None or current.version != version:
            return  # the text changed meanwhile: a newer run will publish
        if analysis.parse_error is not None:
            # Half-typed code is normal: keep showing the last good diagnostics.
            if uri not in self.broken:
                self.broken.add(uri)
                error = analysis.parse_error
                self.log(f"{uri}: does not parse yet (line {error.position.line + 1}: {error.message}); "
                         "keeping the previous diagnostics")
            return
        self.broken.discard(uri)
        self.checked[uri] = Checked(version, analysis)
        self.publish(uri, version, [to_diagnostic(analysis.source, f, self.encoding) for f in analysis.findings])

    def publish(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def current(self, uri: str) -> Checked | None:
        """The analysis of exactly the text the editor has now (edits against older text would corrupt it)."""
        checked = self.checked.get(uri)
        doc = self.workspace.text_documents.get(uri)
        if checked is None or doc is None or checked.version != doc.version:
            return None
        return checked


server = TorchwiseServer()


@server.feature(types.INITIALIZE)
def initialize(ls: TorchwiseServer, params: types.InitializeParams) -> None:
    """Read the editor settings sent as initializationOptions."""
    ls.settings, problems = parse_settings(params.initialization_options)
    for problem in problems:
        ls.warn_once(problem)


@server.feature(types.INITIALIZED)
def initialized(ls: TorchwiseServer, params: types.InitializedParams) -> None:
    """Say hello in the log."""
    ls.log(f"torchwise {__version__} ready (pid {os.getpid()})", types.MessageType.Info)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: TorchwiseServer, params: types.DidOpenTextDocumentParams) -> None:
    """Check a document as soon as it opens."""
    ls.schedule(params.text_document.uri, delay=0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: TorchwiseServer, params: types.DidChangeTextDocumentParams) -> None:
    """Check again once typing pauses."""
    ls.schedule(params.text_document.uri, delay=DEBOUNCE_S)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: TorchwiseServer, params: types.DidSaveTextDocumentParams) -> None:
    """A save may have changed a pyproject.toml next to it: check again."""
    ls.schedule(params.text_document.uri, delay=0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: TorchwiseServer, params: types.DidCloseTextDocumentParams) -> None:
    """Forget a closed document and clear its diagnostics."""
    uri = params.text_document.uri
    task = ls.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.checked.pop(uri, None)
    ls.broken.discard(uri)
    ls.publish(uri, None, [])


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: TorchwiseServer, params: types.DidChangeConfigurationParams) -> None:
    """Take new editor settings and check every open document again."""
    ls.settings, problems = parse_settings(params.settings)
    for problem in problems:
        ls.warn_once(problem)
    for uri in list(ls.workspace.text_documents):
        ls.schedule(uri, delay=0)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=False),
)
def code_action(ls: TorchwiseServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Support quick fixes for the findings in the requested range."""
    if params.context.only and not any(k.startswith(types.CodeActionKind.QuickFix) for k in params.context.only):
        return []
    uri = params.text_document.uri
    checked = ls.current(uri)
    if checked is None:
        return []
    lines = checked.analysis.source.lines
    wanted = Span(from_lsp_position(lines, params.range.start, ls.encoding),
                  from_lsp_position(lines, params.range.end, ls.encoding))
    actions: list[types.CodeAction] = []
    for finding in checked.analysis.findings:
        if finding.span.start <= wanted.end and wanted.start <= finding.span.end:
            actions.extend(_fix_actions(ls, uri, checked, finding))
            suppress = _suppress_action(ls, uri, checked, finding)
            if suppress is not None:
                actions.append(suppress)
    return actions


def _workspace_edit(uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits)])


def _fix_actions(ls: TorchwiseServer, uri: str, checked: Checked, finding: Finding) -> list[types.CodeAction]:
    source = checked.analysis.source
    diagnostic = to_diagnostic(source, finding, ls.encoding)
    actions = []
    for fix in finding.fixes:
        try:
            edits = [types.TextEdit(range=to_lsp_range(source.lines, e.span, ls.encoding), new_text=e.new_text)
                     for e in fix.edits]
        except Exception:  # a fix that cannot be built is not offered; the diagnostic stays
            ls.log(f"torchwise: building fix {fix.title!r} failed:\n{traceback.format_exc()}", types.MessageType.Error)
            continue
        actions.append(types.CodeAction(
            title=f"{fix.title} ({finding.code})", kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic], is_preferred=fix.preferred or None,
            edit=_workspace_edit(uri, checked.version, edits)))
    return actions


def _suppress_action(ls: TorchwiseServer, uri: str, checked: Checked, finding: Finding) -> types.CodeAction | None:
    source = checked.analysis.source
    line_no = finding.span.start.line
    line = source.lines[line_no].rstrip("\r\n")
    if "noqa" in line or line.rstrip().endswith("\\"):
        return None  # an existing noqa is the user's to edit; a comment after `\` would break the code
    line_end = Position(line_no, len(line))
    end = to_lsp_range(source.lines, Span(line_end, line_end), ls.encoding)
    edit = types.TextEdit(range=end, new_text=f"  # noqa: {finding.code}")
    return types.CodeAction(
        title=f"Suppress {finding.code} on this line", kind=types.CodeActionKind.QuickFix,
        diagnostics=[to_diagnostic(source, finding, ls.encoding)],
        edit=_workspace_edit(uri, checked.version, [edit]))


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: TorchwiseServer, params: types.HoverParams) -> types.Hover | None:
    """Support Hover: dtype (and why), shape, device, contiguity, broadcasting, view-or-copy."""
    checked = ls.current(params.text_document.uri)
    if checked is None or checked.analysis.facts is None:
        return None
    source = checked.analysis.source
    position = from_lsp_position(source.lines, params.position, ls.encoding)
    try:
        found = Explainer(source, checked.analysis.facts).hover(position)
    except Exception:  # hover must never break the server
        ls.log(f"torchwise: hover failed:\n{traceback.format_exc()}", types.MessageType.Error)
        return None
    if found is None:
        return None
    text, span = found
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                       range=to_lsp_range(source.lines, span, ls.encoding))


def serve() -> None:
    port = os.environ.get("TORCHWISE_DEBUGPY")
    if port:
        try:
            import debugpy

            debugpy.listen(("127.0.0.1", int(port)))
        except (ImportError, ValueError, OSError) as err:
            server.log(f"torchwise: cannot start debugpy on {port!r}: {err}", types.MessageType.Warning)
    server.start_io()
