"""The torchwise language server (pygls). Each feature is one small handler."""

from __future__ import annotations

import asyncio
import os
import sys
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from torchwise import __version__
from torchwise.config import ConfigError, RuleConfig, project_config
from torchwise.engine import TOO_DEEP, analyze
from torchwise.explain import Explainer
from torchwise.rules import ALL_RULES
from torchwise.findings import Finding, Position, Span
from torchwise.lsp import documents
from torchwise.lsp.convert import from_lsp_position, to_diagnostic, to_lsp_range
from torchwise.lsp.documents import Checked
from torchwise.lsp.protocol import TorchwiseProtocol, start_io
from torchwise.lsp.settings import EditorSettings, parse_settings
from torchwise.lsp.unchanged import statement_ends

BENCHMARK_COMMAND = "torchwise.benchmarkLoop"  # the spec's name (torchwise.bench.service.COMMAND)
RULE_DOCS_COMMAND = "torchwise.showRuleDocs"  # [code]: opens the rule's page in the editor
# Typing pauses shorter than this are not worth an analysis. TORCHWISE_DEBOUNCE_MS overrides it
# (benchmarks set 0 to measure analysis latency alone).
DEBOUNCE_S = float(os.environ.get("TORCHWISE_DEBOUNCE_MS", "100")) / 1000
# Documents whose analysis (tree, facts, fixes) stays in memory; the others keep their diagnostics, and are
# analysed again when a request needs them (50 open 1,000-line files would hold 150+ MB otherwise).
ANALYSES_KEPT = 8
# A request that reads the analysis (hover, actions, lenses) waits this long for the check in flight (the
# first one after didOpen, or the one after an edit), then answers from what there is.
ANALYSIS_WAIT_S = 5.0
# A request the server sends the client (progress, showDocument) that has no answer by then is given up: a
# client that never answers must not keep the request that asked waiting for ever.
CLIENT_ANSWER_S = 5.0


class TorchwiseServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "torchwise", __version__, protocol_cls=TorchwiseProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(notebook_selector=[
                types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage(language="python")])]))
        self.settings = EditorSettings()
        self.checked: dict[str, Checked] = {}  # last analysis that parsed, per open document
        self.pending: dict[str, asyncio.Task] = {}
        self.broken: dict[str, int | None] = {}  # documents that do not parse right now: the version that does not
        # One worker: analyses run one at a time, off the event loop so messages keep flowing.
        self.analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torchwise-analysis")
        self._config_problems: set[str] = set()
        self.folder_settings: dict[str, EditorSettings] = {}  # multi-root: each folder's own settings
        self.folder_requests: dict[str, asyncio.Future] = {}
        self._bench = None  # the benchmark service, made (and its modules imported) on first use
        self.recent: list[str] = []  # units whose analyses are kept, most recent last
        # Notebook cells: the (version, diagnostics) last published, so that an edit republishes only the cells
        # whose diagnostics or version changed (1,000 notifications per keystroke otherwise).
        self.cell_published: dict[str, tuple] = {}

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
    async def settings_for(self, uri: str) -> EditorSettings:
        """The editor settings of the workspace folder holding ``uri`` (multi-root: per folder)."""
        folder = next((f.uri for f in self.workspace.folders.values() if uri.startswith(f.uri.rstrip("/") + "/")),
                      None)
        capabilities = self.client_capabilities.workspace
        if folder is None or capabilities is None or not capabilities.configuration:
            return self.settings
        if folder in self.folder_settings:
            return self.folder_settings[folder]
        # One request per folder, never cancelled with the check that asked (a late answer to a
        # cancelled request makes pygls report an error to the user).
        request = self.folder_requests.get(folder)
        if request is None:
            request = self.folder_requests[folder] = asyncio.ensure_future(self._fetch_settings(folder))
        try:
            return await asyncio.wait_for(asyncio.shield(request), timeout=2)
        except asyncio.TimeoutError:
            return self.settings  # a client that does not answer: the global settings hold meanwhile

    async def _fetch_settings(self, folder: str) -> EditorSettings:
        try:
            answer = await self.workspace_configuration_async(types.ConfigurationParams(
                items=[types.ConfigurationItem(scope_uri=folder, section="torchwise")]))
        except Exception:
            answer = None
        settings = self.settings
        if answer and isinstance(answer[0], dict) and answer[0]:
            settings, problems = parse_settings({"torchwise": answer[0]})
            for problem in problems:
                self.warn_once(problem)
        self.folder_settings[folder] = settings
        self.folder_requests.pop(folder, None)
        return settings

    def rule_config(self, path: str | None, settings: EditorSettings | None = None) -> RuleConfig:
        config = (settings or self.settings).rules
        if path:
            try:
                config = RuleConfig().layered(config).layered(project_config(Path(path)))
            except ConfigError as err:
                self.warn_once(f"torchwise: {err}; using the editor settings")
        return config

    def schedule(self, uri: str, delay: float) -> None:
        """Check ``uri``'s unit (the notebook, for a cell) after ``delay``, replacing a pending check."""
        unit = documents.unit_of(self.workspace, uri)
        previous = self.pending.pop(unit, None)
        if previous is not None:
            previous.cancel()
        self.pending[unit] = asyncio.ensure_future(self._check(unit, delay))

    async def _check(self, uri: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            snap = documents.snapshot(self.workspace, uri)
            if snap is None:
                return
            config = self.rule_config(snap.path, await self.settings_for(uri))
            loop = asyncio.get_running_loop()
            previous = self.checked.get(uri)
            reuse = _reusable(previous, snap)
            analysis = await loop.run_in_executor(
                self.analysis_pool, analyze, snap.text, snap.path or uri, config, ALL_RULES, reuse)
        except asyncio.CancelledError:
            return
        except RecursionError:  # code nested deeper than the analysis can walk: say so once, show nothing stale
            self.log(f"torchwise: {uri}: {TOO_DEEP}", types.MessageType.Warning)
            if snap.cells is None:
                self.publish(uri, snap.version, [])
            return
        except Exception:  # a bug in a rule must never take the server down
            self.log(f"torchwise: analysis of {uri} failed:\n{traceback.format_exc()}", types.MessageType.Error)
            return
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]
        if documents.current_version(self.workspace, uri) != snap.version:
            return  # the text changed meanwhile: a newer run will publish
        if analysis.parse_error is not None:
            # Half-typed code is normal: keep showing the last good diagnostics.
            if uri not in self.broken:
                error = analysis.parse_error
                self.log(f"{uri}: does not parse yet (line {error.position.line + 1}: {error.message}); "
                         "keeping the previous diagnostics")
            self.broken[uri] = snap.version
            self.parse_status(uri, analysis.parse_error)
            return
        if self.broken.pop(uri, None) is not None:
            self.parse_status(uri, None)
        self.checked[uri] = Checked(snap.version, analysis, snap.text, snap.path, snap.cells, config, snap.left_out,
                                    whole=documents.last_whole(previous, snap.left_out))
        self._keep_recent(uri)
        if snap.cells is None:
            self.publish(uri, snap.version, [to_diagnostic(analysis.source.lines, f, f.span, self.encoding)
                                             for f in analysis.findings])
            return
        by_cell = documents.findings_by_cell(self.checked[uri])  # one pass over the findings, not one per cell
        for cell in snap.cells.cells:
            doc = documents.text_document(self.workspace, cell.key)
            cell_view = documents.view(self.workspace, self.checked[uri], cell.key)
            if doc is None or cell_view is None:
                continue
            diagnostics = [to_diagnostic(cell_view.lines, f, span, self.encoding)
                           for f, span in by_cell.get(cell.key, ())]
            if self.cell_published.get(cell.key) != (doc.version, diagnostics):
                self.cell_published[cell.key] = (doc.version, diagnostics)
                self.publish(cell.key, doc.version, diagnostics)

    def parse_status(self, uri: str, error) -> None:
        """``torchwise/parseStatus``: whether ``uri`` parses now, and where not (the VS Code client shows it in the
        status bar and goes to the line on a click; other editors have the log). Sent when it stops or starts
        parsing, and while it does not, on each check."""
        params = {"uri": uri, "ok": error is None}
        if error is not None:
            lines = documents.text_document(self.workspace, uri)
            where = to_lsp_range(lines.lines if lines is not None else [], Span(error.position, error.position),
                                 self.encoding).start
            params.update(line=where.line, character=where.character, message=error.message)
        self.protocol.notify("torchwise/parseStatus", params)

    @property
    def bench(self):
        """The benchmark service: imported on first use, to keep start-up short; it starts no process."""
        if self._bench is None:
            from torchwise.bench.service import BenchService

            self._bench = BenchService()
            self.configure_bench()
        return self._bench

    def configure_bench(self) -> None:
        if self._bench is not None:
            self._bench.configure(python=self.settings.interpreter, time_limit=self.settings.benchmark_time_limit,
                                  device=self.settings.benchmark_device, sizes=dict(self.settings.benchmark_sizes),
                                  trusted=self.settings.trusted)

    def _keep_recent(self, unit: str) -> None:
        """Keep the analyses of the documents in use only: drop those of the least recently used beyond
        ANALYSES_KEPT (a notebook's last whole analysis, kept while cells do not parse, counts too)."""
        if unit in self.recent:
            self.recent.remove(unit)
        self.recent.append(unit)
        while self._analyses_held() > ANALYSES_KEPT and len(self.recent) > 1:
            old = self.checked.get(self.recent.pop(0))
            if old is not None:
                old.analysis = None
                if old.whole is not None:
                    old.whole.analysis = None

    def _analyses_held(self) -> int:
        """Whole analyses in memory: one per recent unit, two for a notebook that keeps its last whole one."""
        held = [self.checked.get(unit) for unit in self.recent]
        return sum((c.analysis is not None) + (c.whole is not None and c.whole.analysis is not None)
                   for c in held if c is not None)

    async def _checks_done(self, unit: str) -> None:
        """Wait for the check of ``unit`` in flight, and any that replaces it meanwhile (typing goes on),
        for at most ANALYSIS_WAIT_S."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ANALYSIS_WAIT_S
        while True:
            task = self.pending.get(unit)
            left = deadline - loop.time()
            if task is None or task.done() or left <= 0:
                return
            await asyncio.wait({task}, timeout=left)

    async def _in_memory(self, unit: str, checked: Checked) -> None:
        """Mark ``checked`` in use, analysing its text again first if its analysis was dropped to save memory."""
        if checked.analysis is not None:
            self._keep_recent(unit)
            return
        try:  # in the analysis thread: a large file takes a few hundred ms the event loop must not wait
            analysis = await asyncio.get_running_loop().run_in_executor(
                self.analysis_pool, analyze, checked.text, checked.path or unit, checked.config, ALL_RULES)
        except Exception:  # as in _check: a bug of ours is logged, the request gets no answer
            self.log(f"torchwise: analysis of {unit} failed:\n{traceback.format_exc()}", types.MessageType.Error)
            return
        current = self.checked.get(unit)
        if checked.analysis is None and current is not None and checked in (current, current.whole):
            checked.analysis = analysis
            self._keep_recent(unit)

    def publish(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic]) -> None:
        if version is None:  # a closed document's diagnostics cleared: publish a reopened cell's again
            self.cell_published.pop(uri, None)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    async def view(self, uri: str) -> documents.View | None:
        """``uri`` seen through the analysis of exactly the text the editor has now (edits against older
        text would corrupt it), once the check in flight is done."""
        unit = documents.unit_of(self.workspace, uri)
        await self._checks_done(unit)
        checked = self.checked.get(unit)
        if checked is None or checked.version != documents.current_version(self.workspace, unit):
            return None
        await self._in_memory(unit, checked)
        return documents.view(self.workspace, self.checked.get(unit), uri)

    async def reading_view(self, uri: str) -> documents.View | None:
        """For requests that only read facts (hover, lenses): ``view``, else, while ``uri`` does not parse,
        the last analysis whose text did, through the lines unchanged since."""
        found = await self.view(uri)
        if found is not None:
            return found
        unit = documents.unit_of(self.workspace, uri)
        kept = self.last_good(uri)
        if kept is None:
            return None
        await self._in_memory(unit, kept)
        if self.last_good(uri) is not kept:
            return None  # edited meanwhile: a check of the new text is on its way
        return documents.remapped_view(self.workspace, kept, uri)

    def does_not_parse(self, uri: str) -> bool:
        """Whether the current text of ``uri`` is known not to parse: its file's (or notebook's), or its
        notebook cell's, which the notebook's analysis then leaves out."""
        unit = documents.unit_of(self.workspace, uri)
        version = documents.current_version(self.workspace, unit)
        if self.broken.get(unit) == version:
            return True
        checked = self.checked.get(unit)
        return checked is not None and checked.version == version and uri in checked.left_out

    def last_good(self, uri: str) -> Checked | None:
        """While ``uri`` does not parse: the last analysis that had its text parsing, if any."""
        unit = documents.unit_of(self.workspace, uri)
        checked = self.checked.get(unit)
        if checked is None or unit in self.pending or not self.does_not_parse(uri):
            return None  # (a check in flight may build on that analysis, moving its tree's line numbers)
        # A unit that does not parse keeps its last good analysis; a cell left out, the notebook's last whole one.
        return checked if unit in self.broken else checked.whole

    def forget(self, unit: str) -> None:
        task = self.pending.pop(unit, None)
        if task is not None:
            task.cancel()
        self.checked.pop(unit, None)
        self.broken.pop(unit, None)
        if unit in self.recent:
            self.recent.remove(unit)


def _reusable(previous: Checked | None, snap: documents.Snapshot):
    """The analysis the next one may build on (reusing its tree moves its statements' line numbers in
    place): not one a notebook may keep as the last that had the cells now left out."""
    if previous is None or previous.cells_among(snap.left_out):
        return None
    return previous.analysis  # None when dropped to save memory


server = TorchwiseServer()


def _apply_settings(ls: TorchwiseServer, data) -> None:
    ls.settings, problems = parse_settings(data)
    for problem in problems:
        ls.warn_once(problem)
    ls.configure_bench()


@server.feature(types.INITIALIZE)
def initialize(ls: TorchwiseServer, params: types.InitializeParams) -> None:
    """Read the editor settings sent as initializationOptions."""
    _apply_settings(ls, params.initialization_options)


@server.feature(types.SHUTDOWN)
def shutdown(ls: TorchwiseServer, params) -> None:
    """Stop the benchmark worker with the server."""
    if ls._bench is not None:
        ls._bench.shutdown()


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
    if params.text_document.uri in ls.broken:
        ls.parse_status(params.text_document.uri, None)
    ls.forget(params.text_document.uri)
    if ls._bench is not None:
        ls._bench.forget(params.text_document.uri)
    ls.publish(params.text_document.uri, None, [])


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: TorchwiseServer, params: types.DidOpenNotebookDocumentParams) -> None:
    """Check a notebook's code cells, in order, as one module."""
    ls.schedule(params.notebook_document.uri, delay=0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: TorchwiseServer, params: types.DidChangeNotebookDocumentParams) -> None:
    """Check the notebook again once typing pauses (a cell's text, or cells added, moved, removed)."""
    ls.schedule(params.notebook_document.uri, delay=DEBOUNCE_S)
    structure = params.change.cells.structure if params.change.cells else None
    for closed in (structure.did_close or []) if structure else []:
        ls.publish(closed.uri, None, [])


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: TorchwiseServer, params: types.DidCloseNotebookDocumentParams) -> None:
    """Forget a closed notebook and clear its cells' diagnostics."""
    ls.forget(params.notebook_document.uri)
    if ls._bench is not None:
        ls._bench.forget(params.notebook_document.uri)
    for cell in params.cell_text_documents:
        ls.publish(cell.uri, None, [])


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: TorchwiseServer, params: types.DidChangeConfigurationParams) -> None:
    """Take new editor settings and check every open document again. ``settings: null`` (the pull model: "ask me")
    keeps those there are (it used to reset them, rules and trust, to the defaults); folders are asked again."""
    if params.settings is not None:
        _apply_settings(ls, params.settings)
    ls.folder_settings.clear()
    ls.folder_requests.clear()
    for uri in {documents.unit_of(ls.workspace, uri) for uri in ls.workspace.text_documents}:
        ls.schedule(uri, delay=0)
    capabilities = ls.client_capabilities.workspace
    if capabilities and capabilities.inlay_hint and capabilities.inlay_hint.refresh_support:
        ls.workspace_inlay_hint_refresh(None)  # the inlayHints settings may have changed


FIX_ALL_KIND = "source.fixAll.torchwise"  # editor.codeActionsOnSave: {"source.fixAll": "explicit"} asks for it


def _asks_for(only: list[str] | None, kind: str, by_default: bool) -> bool:
    """Whether a code action request whose ``only`` is ``only`` wants actions of ``kind`` (kinds are dotted
    hierarchies: ``source`` and ``source.fixAll`` both include ``source.fixAll.torchwise``)."""
    if not only:
        return by_default
    return any(kind == k or kind.startswith(k + ".") for k in only)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False),
)
async def code_action(ls: TorchwiseServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Support quick fixes for the findings in the requested range (with "Fix all TWxxx in this file" where a code
    has several preferred fixes), and ``source.fixAll.torchwise``: every preferred fix of the document at once."""
    only = params.context.only
    quick, fix_all = _asks_for(only, types.CodeActionKind.QuickFix, True), _asks_for(only, FIX_ALL_KIND, False)
    if not (quick or fix_all):
        return []
    view = await ls.view(params.text_document.uri)
    if view is None:
        return []
    actions: list[types.CodeAction] = []
    if fix_all:
        action = await _fix_all_action(ls, view, None)
        if action is not None:
            actions.append(action)
    if not quick:
        return actions
    wanted = Span(from_lsp_position(view.lines, params.range.start, ls.encoding),
                  from_lsp_position(view.lines, params.range.end, ls.encoding))
    in_file = view.findings()
    fixable = {}
    for finding, _ in in_file:
        if finding.autofix is not None:
            fixable[finding.code] = fixable.get(finding.code, 0) + 1
    offered: set[str] = set()
    documented: set[str] = set()
    for finding, span in in_file:
        if span.start <= wanted.end and wanted.start <= span.end:
            diagnostic = to_diagnostic(view.lines, finding, span, ls.encoding)
            actions.extend(_fix_actions(ls, view, finding, diagnostic))
            if fixable.get(finding.code, 0) > 1 and finding.code not in offered:
                offered.add(finding.code)
                every = await _fix_all_action(ls, view, finding.code, diagnostic)
                if every is not None:
                    actions.append(every)
            suppress = _suppress_action(ls, view, finding, span, diagnostic)
            if suppress is not None:
                actions.append(suppress)
            if finding.code not in documented:
                documented.add(finding.code)
                actions.append(types.CodeAction(
                    title=f"Show documentation for {finding.code}", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], command=types.Command(
                        title=f"Show documentation for {finding.code}", command=RULE_DOCS_COMMAND,
                        arguments=[finding.code])))
    return actions


async def _fix_all_action(ls: TorchwiseServer, view: documents.View, code: str | None,
                          diagnostic: types.Diagnostic | None = None) -> types.CodeAction | None:
    """Every preferred fix in ``view``'s document (of ``code`` only, when given) as one action; None when there is
    nothing to fix. A file is analysed again between passes, in the analysis thread, as ``torchwise check --fix``
    does; a notebook cell gets one pass."""
    from torchwise.lsp import fixall
    from torchwise.notebook import python_source

    lines = list(view.lines)
    text = "".join(lines)
    checked = view.checked
    wanted = (lambda f: True) if code is None else (lambda f: f.code == code)

    def build() -> str:
        if view.cell is None and view.is_current:
            def reanalyze(new_text: str):
                analysis = analyze(new_text, checked.path or view.unit, checked.config)
                return None if analysis.parse_error is not None else analysis.findings
            return fixall.fixed_file(text, list(checked.analysis.findings), reanalyze, wanted)
        local = []
        for finding, _ in view.findings():
            if wanted(finding) and finding.autofix is not None:
                spans = [(view.to_local(e.span), e.new_text) for e in fixall.preferred_edits([finding])]
                if spans and all(span is not None for span, _ in spans):
                    local.extend(spans)
        return fixall.fixed_cell(text, local, python_source)
    try:
        new_text = await asyncio.get_running_loop().run_in_executor(ls.analysis_pool, build)
    except Exception:  # a fix that cannot be built is not offered
        ls.log(f"torchwise: fix-all failed:\n{traceback.format_exc()}", types.MessageType.Error)
        return None
    region = fixall.changed_region(text, new_text)
    if region is None:
        return None
    start, end, replacement = region
    span = Span(fixall.position_at(lines, start), fixall.position_at(lines, end))
    edit = types.TextEdit(range=to_lsp_range(view.lines, span, ls.encoding), new_text=replacement)
    if code is None:
        return types.CodeAction(title="torchwise: Fix all auto-fixable problems", kind=FIX_ALL_KIND,
                                edit=_workspace_edit(view.uri, view.version, [edit]))
    return types.CodeAction(title=f"Fix all {code} in this file", kind=types.CodeActionKind.QuickFix,
                            diagnostics=[diagnostic] if diagnostic is not None else None,
                            edit=_workspace_edit(view.uri, view.version, [edit]))


def _workspace_edit(uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits)])


def _fix_actions(ls: TorchwiseServer, view: documents.View, finding: Finding,
                 diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    actions = []
    for fix in finding.fixes:
        try:
            local = [(view.to_local(e.span), e.new_text) for e in fix.edits]
        except Exception:  # a fix that cannot be built is not offered; the diagnostic stays
            ls.log(f"torchwise: building fix {fix.title!r} failed:\n{traceback.format_exc()}", types.MessageType.Error)
            continue
        if any(span is None for span, _ in local):
            continue  # it would touch another notebook cell
        edits = [types.TextEdit(range=to_lsp_range(view.lines, span, ls.encoding), new_text=text)
                 for span, text in local]
        actions.append(types.CodeAction(
            title=f"{fix.title} ({finding.code})", kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic], is_preferred=fix.preferred or None,
            edit=_workspace_edit(view.uri, view.version, edits)))
    return actions


def _suppress_action(ls: TorchwiseServer, view: documents.View, finding: Finding, span: Span,
                     diagnostic: types.Diagnostic) -> types.CodeAction | None:
    line_no = span.start.line
    line = view.lines[line_no].rstrip("\r\n")
    if "noqa" in line or line.rstrip().endswith("\\"):
        return None  # an existing noqa is the user's to edit; a comment after `\` would break the code
    line_end = Position(line_no, len(line))
    end = to_lsp_range(view.lines, Span(line_end, line_end), ls.encoding)
    edit = types.TextEdit(range=end, new_text=f"  # noqa: {finding.code}")
    return types.CodeAction(
        title=f"Suppress {finding.code} on this line", kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic], edit=_workspace_edit(view.uri, view.version, [edit]))


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: TorchwiseServer, params: types.HoverParams) -> types.Hover | None:
    """Support Hover: dtype (and why), shape, device, contiguity, broadcasting, view-or-copy. While the file
    does not parse, code unchanged since it last did is explained from that analysis."""
    view = await ls.reading_view(params.text_document.uri)
    if view is None:
        return None
    analysis = view.checked.analysis
    position = view.to_unit(from_lsp_position(view.lines, params.position, ls.encoding))
    if position is None:
        return None  # a line changed since the analysis: nothing is known about it
    try:
        found = Explainer(analysis.source, analysis.facts).hover(position)
    except Exception:  # hover must never break the server
        ls.log(f"torchwise: hover failed:\n{traceback.format_exc()}", types.MessageType.Error)
        return None
    # Nothing measured before the service exists; and results are matched to the text analysed, which, seen
    # from an older one, could be of a loop that changed since (the lens still shows its result).
    measured = ls._bench.hover(view.unit, analysis.source.text, position.line) \
        if ls._bench is not None and view.is_current else None
    local = view.to_local(found[1]) if found is not None else None
    if measured and local is None:
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=measured))
    if local is None:
        return None
    if measured:
        found = (f"{found[0]}\n\n---\n{measured}", found[1])
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=found[0]),
                       range=to_lsp_range(view.lines, local, ls.encoding))


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
async def inlay_hint(ls: TorchwiseServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    """Support inlay hints: after an assignment whose tensor facts are known, its shape in named dims and a dtype
    that is not the default (settings ``torchwise.inlayHints.shapes`` / ``dtypes``); nothing where unknown."""
    from torchwise.lsp.inlay import hints

    uri = params.text_document.uri
    settings = await ls.settings_for(uri)
    if not (settings.inlay_shapes or settings.inlay_dtypes):
        return []
    view = await ls.reading_view(uri)
    if view is None:
        return []
    analysis = view.checked.analysis
    first = view.to_unit(Position(params.range.start.line, 0))
    last = view.to_unit(Position(params.range.end.line, 0))
    # In a notebook cell, or through an older text: lines that do not map fall back to the whole unit (hints
    # outside this document are dropped below).
    first_line = first.line if first is not None else 0
    last_line = last.line if last is not None else len(analysis.source.lines)
    try:
        found = hints(analysis.source, analysis.facts, first_line, last_line, settings.inlay_shapes,
                      settings.inlay_dtypes)
    except Exception:  # hints must never break the server
        ls.log(f"torchwise: inlay hints failed:\n{traceback.format_exc()}", types.MessageType.Error)
        return []
    result = []
    for position, label in found:
        local = view.to_local(Span(position, position))
        if local is not None:
            result.append(types.InlayHint(position=to_lsp_range(view.lines, local, ls.encoding).start, label=label,
                                          kind=types.InlayHintKind.Type, padding_left=False))
    return result


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
async def code_lens(ls: TorchwiseServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    """Support code lenses: "Benchmark loop vs vectorized" on each fixable loop, or its last result. While
    the file does not parse, loops unchanged since it last did keep theirs."""
    view = await ls.reading_view(params.text_document.uri)
    if view is None:
        return []
    analysis = view.checked.analysis
    lenses = []
    found = ls.bench.lenses(view.unit, analysis.source.text, analysis)
    ends = statement_ends(analysis.source.tree, {lens.line for lens in found})
    # Lenses are found on the file, or on the notebook's cells as one module: shown in the cell they are in.
    for lens in found:
        at = view.to_local(Span(Position(lens.line, 0), Position(ends.get(lens.line, lens.line), 0)))
        if at is None:
            continue
        where = types.Position(line=at.start.line, character=0)
        lenses.append(types.CodeLens(range=types.Range(start=where, end=where), command=types.Command(
            title=lens.title, command=lens.command, arguments=[view.uri, at.start.line])))
    return lenses


@server.command(RULE_DOCS_COMMAND)
async def show_rule_docs(ls: TorchwiseServer, code: str) -> dict:
    """Open the page of rule ``code`` in the editor (``window/showDocument``; a file written from the rule's own
    docs, so it opens offline); a client that cannot show documents gets the page's path in a message."""
    from torchwise.ruledocs import page_path

    page = page_path(str(code).upper())
    if page is None:
        return {"uri": None, "message": f"torchwise: no rule {code!r}"}
    uri = page.as_uri()
    window = ls.client_capabilities.window
    if window is not None and window.show_document is not None and window.show_document.support:
        try:
            await asyncio.wait_for(ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True)),
                                   CLIENT_ANSWER_S)
        except Exception:  # noqa: BLE001 - no answer, or an error: the answer below still says where the page is
            pass
    else:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info,
                                                       message=f"torchwise: {code} is documented in {page}"))
    return {"uri": uri, "message": f"torchwise: {code}: {page}"}


def _no_result(message: str) -> dict:
    """The command's answer when nothing was measured."""
    return {"loop_s": None, "vectorized_s": None, "speedup": None, "device": None, "match": None, "message": message}


@server.command(BENCHMARK_COMMAND)
async def benchmark_loop(ls: TorchwiseServer, uri: str, line: int) -> dict:
    """Run the loop on ``line`` (0-based) and its vectorized rewrite in the user's Python; show the timing."""
    view = await ls.view(uri)
    if view is None and ls.does_not_parse(uri):
        return _no_result("torchwise: the code does not parse right now; run the benchmark once it does")
    if view is None:
        return _no_result("torchwise: the file is being analysed; try again in a moment")
    unit = view.unit  # a notebook's cells run as one module, in order
    analysis, version = view.checked.analysis, view.checked.version  # before any await: both may change
    if not 0 <= int(line) < len(view.lines):  # in a notebook cell, a line outside it would be another cell's
        return _no_result(f"torchwise: there is no line {int(line) + 1} in this document")
    line = view.to_unit(Position(int(line), 0)).line
    token = str(uuid.uuid4())
    task = asyncio.current_task()
    progress = None
    window = ls.client_capabilities.window
    try:
        if window is None or not window.work_done_progress:
            raise LookupError("the client shows no progress")  # the spec: create only if the client said it can
        await asyncio.wait_for(ls.work_done_progress.create_async(token), CLIENT_ANSWER_S)
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title="torchwise: benchmarking the loop", cancellable=True, message="starting"))
        progress = token
        cancelled = ls.work_done_progress.tokens.get(token)
        if cancelled is not None and task is not None:
            cancelled.add_done_callback(lambda f: f.cancelled() and task.cancel())
    except Exception:  # a client without progress support still gets its result
        progress = None

    def report(stage: str) -> None:
        if progress is not None:
            ls.work_done_progress.report(progress, types.WorkDoneProgressReport(message=stage))
    try:
        if documents.current_version(ls.workspace, unit) != version:  # edited meanwhile: the lines moved
            result = _no_result("torchwise: the file changed; run the benchmark again")
        else:  # the job is built before the first await below, from this very analysis
            result = await ls.bench.benchmark(unit, analysis.source.text, line, analysis=analysis,
                                              on_progress=report)
    except asyncio.CancelledError:
        result = _no_result("torchwise: benchmark cancelled")
    finally:
        if progress is not None:
            ls.work_done_progress.end(progress, types.WorkDoneProgressEnd())
    capabilities = ls.client_capabilities.workspace
    if capabilities and capabilities.code_lens and capabilities.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)
    if result.get("message"):
        ls.log(result["message"], types.MessageType.Info)
    return result


def serve() -> int:
    """Serve over stdio; the exit status (0 after shutdown, else 1, as the spec says)."""
    port = os.environ.get("TORCHWISE_DEBUGPY")
    if port:
        try:
            import debugpy

            debugpy.listen(("127.0.0.1", int(port)))
        except (ImportError, ValueError, OSError) as err:
            server.log(f"torchwise: cannot start debugpy on {port!r}: {err}", types.MessageType.Warning)
    from torchwise.analysis import modpass

    modpass.RECORD_ON_OPEN = True  # edits follow an open here: the first one replays module code as later ones do
    status = start_io(server)
    if server._bench is not None:  # `exit` without `shutdown`: the worker goes too
        server._bench.shutdown()
    # Now, not when the analysis running in its thread ends: the interpreter's exit would join that thread, and
    # `exit` took 20 s after opening a 45,000-line file (the editor waits, or kills us).
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed by pygls on `exit`
            pass
    os._exit(status)
