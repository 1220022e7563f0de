// Test-only helper extension for tests/editors/vscode: it answers questions about the running
// editor through the VS Code API (what a screenshot cannot say exactly).
//
// The test writes `<TORCHWISE_PROBE_DIR>/<id>.request.json` ({"action", "args"}); this extension
// answers in `<id>.response.json` ({"ok", "result"} or {"ok": false, "error"}), written atomically.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vscode = require("vscode");

const POLL_MS = 100;

function plainRange(range) {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

/** A file path, or `{uri}` for documents without one (notebook cells). */
function uriOf(file, uri) {
  return uri ? vscode.Uri.parse(uri) : vscode.Uri.file(file);
}

function markdownText(content) {
  if (typeof content === "string") return content;
  return content.value ?? String(content);
}

/** Child processes of this extension host that run `torchwise lsp` (the server of our extension). */
function serverProcesses() {
  const found = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (parent === process.pid && argv.includes("torchwise") && argv.includes("lsp")) {
        found.push({ pid: Number(entry), argv });
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

const actions = {
  async diagnostics({ file, uri }) {
    return vscode.languages.getDiagnostics(uriOf(file, uri)).map((d) => ({
      code: typeof d.code === "object" ? d.code.value : d.code,
      source: d.source,
      message: d.message,
      severity: vscode.DiagnosticSeverity[d.severity],
      range: plainRange(d.range),
      codeDescription: typeof d.code === "object" && d.code.target ? d.code.target.toString() : undefined,
    }));
  },
  async inlayHints({ file, range }) {
    const r = new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
    const found = await vscode.commands.executeCommand("vscode.executeInlayHintProvider", uriOf(file), r);
    return (found ?? []).map((h) => ({
      label: typeof h.label === "string" ? h.label : h.label.map((part) => part.value).join(""),
      line: h.position.line,
      character: h.position.character,
    }));
  },
  /** Runs a command (as a click would) and says which document is active afterwards. */
  async command({ command, args }) {
    const result = await vscode.commands.executeCommand(command, ...(args ?? []));
    return { result: result ?? null, active: vscode.window.activeTextEditor?.document.uri.toString() ?? null };
  },
  async activeEditor() {
    const editor = vscode.window.activeTextEditor;
    return editor ? { uri: editor.document.uri.toString(), text: editor.document.getText() } : null;
  },
  async hover({ file, uri, line, character }) {
    const hovers = await vscode.commands.executeCommand(
      "vscode.executeHoverProvider", uriOf(file, uri), new vscode.Position(line, character));
    return (hovers ?? []).map((h) => h.contents.map(markdownText).join("\n"));
  },
  async codeActions({ file, range }) {
    const r = new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
    const found = await vscode.commands.executeCommand("vscode.executeCodeActionProvider", uriOf(file), r);
    return (found ?? []).map((a) => ({ title: a.title, isPreferred: Boolean(a.isPreferred), kind: a.kind?.value }));
  },
  async codeLenses({ file }) {
    const lenses = await vscode.commands.executeCommand("vscode.executeCodeLensProvider", uriOf(file), 100);
    return (lenses ?? []).map((l) => ({ title: l.command?.title, command: l.command?.command, line: l.range.start.line }));
  },
  /** The cells of an open notebook: their kind, language, text and document URI. */
  async notebookCells({ file }) {
    const notebook = vscode.workspace.notebookDocuments.find((n) => n.uri.fsPath === uriOf(file).fsPath);
    if (!notebook) return null;
    return notebook.getCells().map((cell) => ({
      index: cell.index,
      kind: vscode.NotebookCellKind[cell.kind],
      languageId: cell.document.languageId,
      uri: cell.document.uri.toString(),
      text: cell.document.getText(),
    }));
  },
  async text({ file }) {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === uriOf(file).fsPath);
    const doc = open ?? (await vscode.workspace.openTextDocument(uriOf(file)));
    return { text: doc.getText(), isDirty: doc.isDirty, version: doc.version };
  },
  async extension({ id }) {
    const ext = vscode.extensions.getExtension(id);
    return ext ? { found: true, isActive: ext.isActive, path: ext.extensionPath } : { found: false };
  },
  async serverProcesses() {
    return serverProcesses();
  },
};

async function answer(dir, id) {
  const request = JSON.parse(fs.readFileSync(path.join(dir, `${id}.request.json`), "utf8"));
  let response;
  try {
    const action = actions[request.action];
    if (!action) throw new Error(`unknown action ${request.action}`);
    response = { ok: true, result: await action(request.args ?? {}) };
  } catch (error) {
    response = { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  const target = path.join(dir, `${id}.response.json`);
  fs.writeFileSync(`${target}.tmp`, JSON.stringify(response));
  fs.renameSync(`${target}.tmp`, target);
}

function activate(context) {
  const dir = process.env.TORCHWISE_PROBE_DIR;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  const handled = new Set();
  let busy = false;
  // Polling, not fs.watch: it sees requests written before activation and never misses one.
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      for (const name of fs.readdirSync(dir)) {
        const id = name.endsWith(".request.json") ? name.slice(0, -".request.json".length) : undefined;
        if (id === undefined || handled.has(id)) continue;
        handled.add(id);
        await answer(dir, id);
      }
    } finally {
      busy = false;
    }
  }, POLL_MS);
  context.subscriptions.push({ dispose: () => clearInterval(timer) });
  fs.writeFileSync(path.join(dir, "ready"), String(process.pid));
}

module.exports = { activate, deactivate() {} };
