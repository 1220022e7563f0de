// torchwise in real VS Code: code-server 4.100.3 (= VS Code 1.100.3) in Debian's Chromium, driven
// with playwright-core through the keyboard, checked on screen and through the VS Code API (the
// probe extension). Screenshots and the probe transcript go to artifacts/editors/vscode/.
//
//   scripts/editors/install.sh && node --test tests/editors/vscode/vscode.test.mjs
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { sandbox, startCodeServer, writeUserSettings } from "./lib/codeServer.mjs";
import { installExtensions } from "./lib/extensions.mjs";
import { advertisedCommands } from "./lib/lsp.mjs";
import { ARTIFACTS, CHROMIUM, FIXTURES, missingPrerequisite, PLAYWRIGHT, PYTHON } from "./lib/paths.mjs";
import { Probe } from "./lib/probe.mjs";
import { ROUND_TRIP_MS, waitFor } from "./lib/wait.mjs";
import { openBrowser, Workbench } from "./lib/workbench.mjs";

const TORCHWISE_ID = "torchwise.torchwise";
const BENCHMARK_COMMAND = "torchwise.benchmarkLoop";
const STEP_TIMEOUT = 4 * ROUND_TRIP_MS;

// legacy.py: line 4 `features = torch.randn(10000, 512)`, line 5 `weight = torch.Tensor(3, 4)`.
const LEGACY = { name: "legacy.py", hoverLine: 4, hoverColumn: 2, fixLine: 5, fixColumn: 10 };
const LEGACY_CALL = "torch.Tensor(3, 4)";
const SHAPE_TEXT = "Tensor[float32, (10000, 512)]";
const PREFERRED_FIX = "Replace with `torch.empty(...)` (TW101)";
// explore.ipynb: cell 1 `import torch` / `x = torch.randn(3, 4)`; cell 2 `h = torch.randn(3)` /
// `y = x + h` (TW501: (3, 4) + (3,) do not broadcast) / `w = torch.Tensor(2, 2)` (TW101).
const NOTEBOOK = { name: "explore.ipynb", broadcastLine: 1, legacyLine: 2, legacyCall: "torch.Tensor(2, 2)", hoverCharacter: 4 };
const NOTEBOOK_SHAPE = "Tensor[float32, (3, 4)]";
// loop.py: a TW401 loop, which the server offers to benchmark with a code lens; line 9 is its `for`.
const LOOP = { name: "loop.py", forLine: 9, forColumn: 5 };
// shapes.py: assignments whose shapes are known, shown as inlay hints (0-based lines).
const SHAPES = { name: "shapes.py", hints: [
  { line: 6, label: ": (B, T, 3*n_embd)" },
  { line: 7, label: ": (B, T, n_head, n_embd // n_head)" },
  { line: 8, label: ": (T,) int64" },
  { line: 9, label: ": (T, T) bool" },
] };
// fixall.py: two TW101 and a TW106, all fixed on save by source.fixAll.torchwise.
const FIXALL = { name: "fixall.py", fixed: ["a = torch.empty(3, 4)", "b = torch.empty(5)  # kept comment",
  "c = torch.stack([a.sum(), b.sum()])"] };

const skip = missingPrerequisite();

describe("torchwise in VS Code (code-server + Chromium)", { skip }, () => {
  let home, workspace, codeServer, browser, bench, probe, serverCommands;
  const timings = {};
  const notifications = [];

  const file = (name) => path.join(workspace, name);

  /** Runs a step, timing it, with a screenshot of the page if it fails. */
  async function step(name, body) {
    const started = Date.now();
    try {
      return await body();
    } catch (error) {
      await bench?.screenshot(`failure-${name}`).catch(() => undefined);
      throw error;
    } finally {
      timings[name] = Date.now() - started;
    }
  }

  before(async () => {
    await step("setup", async () => {
      rmSync(ARTIFACTS, { recursive: true, force: true });
      mkdirSync(ARTIFACTS, { recursive: true });
      home = mkdtempSync(path.join(tmpdir(), "torchwise-vscode-"));
      workspace = path.join(home, "workspace");
      cpSync(FIXTURES, workspace, { recursive: true });
      const { dirs, env } = sandbox(home, { TORCHWISE_PROBE_DIR: path.join(home, "probe") });
      probe = new Probe(path.join(home, "probe"));
      serverCommands = await advertisedCommands(PYTHON);
      timings.installedAs = installExtensions(dirs.extensions, env);
      writeUserSettings(dirs.userData, {
        "torchwise.interpreter": PYTHON,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "extensions.ignoreRecommendations": true,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "security.workspace.trust.enabled": false,
        "editor.hover.delay": 300,
        "files.autoSave": "off",
        // Fix-all on an explicit save (Ctrl+S): only torchwise's preferred fixes.
        "editor.codeActionsOnSave": { "source.fixAll.torchwise": "explicit" },
        "editor.inlayHints.enabled": "on",
      });
      codeServer = await startCodeServer({ dirs, env, workspace, logFile: path.join(home, "code-server.log") });
      const playwright = createRequire(import.meta.url)(PLAYWRIGHT);
      browser = await openBrowser(playwright, { executablePath: CHROMIUM, profileDir: path.join(home, "chromium") });
      bench = new Workbench(browser.page, ARTIFACTS);
      await bench.open(codeServer.url);
      await probe.ready();
    });
    // Activation (onLanguage:python) comes with the first Python file; it must be installed now.
    assert.equal((await probe.ask("extension", { id: TORCHWISE_ID })).found, true, `${TORCHWISE_ID} is not installed`);
  }, { timeout: 6 * ROUND_TRIP_MS });

  after(async () => {
    const seconds = Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, typeof v === "number" ? v / 1000 : v]));
    console.log(`vscode suite timings (s): ${JSON.stringify(seconds)}`);
    writeFileSync(path.join(ARTIFACTS, "probe-transcript.json"), JSON.stringify(probe?.transcript ?? [], null, 2));
    writeFileSync(path.join(ARTIFACTS, "timings.json"), JSON.stringify(seconds, null, 2));
    await browser?.context.close().catch(() => undefined);
    await codeServer?.stop();
    if (home) {
      for (const [from, to] of [["code-server.log", "code-server.log"], ["user-data/logs", "vscode-logs"]]) {
        if (existsSync(path.join(home, from))) cpSync(path.join(home, from), path.join(ARTIFACTS, to), { recursive: true });
      }
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("underlines the TW101 and lists it in Problems", { timeout: STEP_TIMEOUT }, () => step("diagnostics", async () => {
    await bench.openFile(LEGACY.name);
    await probe.until(`${TORCHWISE_ID} to activate`, "extension", { id: TORCHWISE_ID }, (e) => e.isActive);
    await bench.squiggles("warning").first().waitFor({ timeout: 2 * ROUND_TRIP_MS });
    await bench.screenshot("01-squiggle");

    const [diagnostic, ...others] = await probe.until("the TW101 diagnostic", "diagnostics", { file: file(LEGACY.name) },
      (found) => found.length > 0);
    assert.deepEqual(others, []);
    assert.equal(diagnostic.code, "TW101");
    assert.equal(diagnostic.source, "torchwise");
    assert.equal(diagnostic.severity, "Warning");
    const start = { line: LEGACY.fixLine - 1, character: LEGACY.fixColumn - 1 };
    assert.deepEqual(diagnostic.range, { start, end: { ...start, character: start.character + LEGACY_CALL.length } });

    const rows = await bench.problemsRowsWith("TW101");
    await bench.screenshot("02-problems");
    const row = rows.find((text) => text.includes("TW101"));
    assert.match(row, /uninitialized memory/);
    assert.match(row, /torchwise/);
    await bench.closePanel();
  }));

  it("shows dtype and shape on hover", { timeout: STEP_TIMEOUT }, () => step("hover", async () => {
    await bench.openFile(LEGACY.name);
    notifications.push(...(await bench.takeNotifications())); // kept for the last test; off the picture
    await bench.goTo(LEGACY.hoverLine, LEGACY.hoverColumn);
    const shown = await bench.hoverAtCursor(SHAPE_TEXT);
    // Squiggle and hover together: the pictures for the docs.
    await bench.screenshot("vscode-hover");
    await bench.screenshotEditorTop("vscode-hover-editor");
    assert.match(shown, /on cpu/);

    const hovers = await probe.ask("hover", {
      file: file(LEGACY.name), line: LEGACY.hoverLine - 1, character: LEGACY.hoverColumn - 1,
    });
    assert.ok(hovers.some((text) => text.includes(`\`${SHAPE_TEXT}\``) && text.includes("cpu")), JSON.stringify(hovers));
    await bench.dismissHover();
  }));

  it("applies the preferred quick fix chosen with Ctrl+. and the keyboard", { timeout: STEP_TIMEOUT }, () =>
    step("quick fix", async () => {
      await bench.goTo(LEGACY.fixLine, LEGACY.fixColumn);
      const entries = await bench.openQuickFixMenu([PREFERRED_FIX, "Replace with `torch.zeros(...)`", "Suppress TW101 on this line"]);
      await bench.screenshot("03-quick-fix-menu");

      const at = { line: LEGACY.fixLine - 1, character: LEGACY.fixColumn - 1 };
      const actions = await probe.until("the code actions", "codeActions", { file: file(LEGACY.name), range: { start: at, end: at } },
        (found) => found.length > 0);
      assert.deepEqual(actions.filter((a) => a.isPreferred).map((a) => a.title), [PREFERRED_FIX], JSON.stringify(actions));

      await bench.chooseQuickFix(PREFERRED_FIX);
      // (The line on screen has the inlay hint of its shape: `weight: (3, 4) = ...`.)
      await waitFor("the fixed line on screen", async () =>
        /weight(: \(3, 4\))? = torch\.empty\(3, 4\)/.test(await bench.editorText()));
      // The extension host's copy of the document follows the editor's a moment later: wait for it.
      const { text } = await probe.until("the fixed text in the extension host", "text", { file: file(LEGACY.name) },
        (found) => /^weight = torch\.empty\(3, 4\)$/m.test(found.text));
      assert.match(text, /^weight = torch\.empty\(3, 4\)$/m);
      assert.ok(!text.includes(LEGACY_CALL));

      await probe.until("the diagnostics to clear", "diagnostics", { file: file(LEGACY.name) }, (found) => found.length === 0);
      await bench.squiggles("warning").first().waitFor({ state: "detached", timeout: ROUND_TRIP_MS });
      await bench.screenshot("04-fixed");
    }));

  it("shows shapes and dtypes as inlay hints", { timeout: STEP_TIMEOUT }, () => step("inlay hints", async () => {
    await bench.openFile(SHAPES.name);
    const hints = await probe.until("the inlay hints", "inlayHints",
      { file: file(SHAPES.name), range: { start: { line: 0, character: 0 }, end: { line: 20, character: 0 } } },
      (found) => found.length === SHAPES.hints.length);
    assert.deepEqual(hints.map(({ line, label }) => ({ line, label })), SHAPES.hints, JSON.stringify(hints));
    // Drawn in the editor, between the name and `=`: the picture for the docs.
    await waitFor("the hints on screen", async () => (await bench.editorText()).includes("positions: (T,) int64 ="));
    await bench.screenshotEditorTop("vscode-inlay-hints", 300);
  }));

  it("links each diagnostic to its rule's page and opens it offline", { timeout: STEP_TIMEOUT }, () =>
    step("rule docs", async () => {
      await bench.openFile(FIXALL.name);
      const diagnostics = await probe.until("the fixall.py diagnostics", "diagnostics", { file: file(FIXALL.name) },
        (found) => found.length === 3);
      for (const d of diagnostics) {
        assert.match(d.codeDescription ?? "", new RegExp(`^file://.*/${d.code}\\.md$`), JSON.stringify(d));
      }
      const at = diagnostics.find((d) => d.code === "TW101").range;
      const actions = await probe.ask("codeActions", { file: file(FIXALL.name), range: at });
      const titles = actions.map((a) => a.title);
      assert.ok(titles.includes("Show documentation for TW101"), JSON.stringify(titles));
      assert.ok(titles.includes("Fix all TW101 in this file"), JSON.stringify(titles));
      const shown = await probe.ask("command", { command: "torchwise.showRuleDocs", args: ["TW101"] });
      const page = await probe.until("the TW101 page in the editor", "activeEditor", {},
        (editor) => editor && editor.uri.endsWith("/TW101.md"));
      assert.match(page.text, /## Why is this bad\?/);
      assert.equal(shown.result.uri, page.uri);
      await bench.screenshot("vscode-rule-docs");
    }));

  it("applies the preferred fixes on save (source.fixAll.torchwise)", { timeout: STEP_TIMEOUT }, () =>
    step("fix all on save", async () => {
      await bench.openFile(FIXALL.name);
      await probe.until("the fixall.py diagnostics", "diagnostics", { file: file(FIXALL.name) }, (found) => found.length === 3);
      await bench.page.keyboard.press("Control+S");
      const { text } = await probe.until("the fixes applied on save", "text", { file: file(FIXALL.name) },
        (found) => FIXALL.fixed.every((line) => found.text.includes(line)) && !found.isDirty);
      assert.ok(!text.includes("torch.Tensor("), text);
      await probe.until("the diagnostics to clear", "diagnostics", { file: file(FIXALL.name) }, (found) => found.length === 0);
      await bench.screenshotEditorTop("vscode-fix-all-on-save", 200);
    }));

  it("restarts the server from the command palette", { timeout: STEP_TIMEOUT }, () => step("restart", async () => {
    const [before] = await probe.until("the running server", "serverProcesses", {}, (found) => found.length === 1);
    await bench.runCommand("torchwise: Restart Server");
    const [now] = await probe.until("a new server process", "serverProcesses", {},
      (found) => found.length === 1 && found[0].pid !== before.pid);
    assert.notEqual(now.pid, before.pid);
    // The new server knows the (edited, unsaved) document: its hover answers again.
    await probe.until("a hover from the new server", "hover",
      { file: file(LEGACY.name), line: LEGACY.hoverLine - 1, character: LEGACY.hoverColumn - 1 },
      (hovers) => hovers.some((text) => text.includes(SHAPE_TEXT)));
    await bench.screenshot("05-restarted");
  }));

  it("checks a notebook's cells with cell-local ranges", { timeout: 2 * STEP_TIMEOUT }, () => step("notebook", async () => {
    await bench.openNotebook(NOTEBOOK.name);
    const cells = await probe.until("the notebook's two Python cells", "notebookCells", { file: file(NOTEBOOK.name) },
      (found) => Array.isArray(found) && found.length === 2);
    assert.deepEqual(cells.map((c) => [c.kind, c.languageId]), [["Code", "python"], ["Code", "python"]], JSON.stringify(cells));
    const [first, second] = cells;
    assert.match(second.uri, /^vscode-notebook-cell:/);

    const diagnostics = await probe.until("TW501 and TW101 in cell 2", "diagnostics", { uri: second.uri },
      (found) => ["TW501", "TW101"].every((code) => found.some((d) => d.code === code)));
    const byCode = (code) => diagnostics.find((d) => d.code === code);
    assert.equal(byCode("TW501").range.start.line, NOTEBOOK.broadcastLine, JSON.stringify(diagnostics));
    const legacy = byCode("TW101");
    assert.equal(legacy.source, "torchwise");
    const column = second.text.split("\n")[NOTEBOOK.legacyLine].indexOf(NOTEBOOK.legacyCall);
    assert.deepEqual(legacy.range, {
      start: { line: NOTEBOOK.legacyLine, character: column },
      end: { line: NOTEBOOK.legacyLine, character: column + NOTEBOOK.legacyCall.length },
    });
    const inFirst = await probe.ask("diagnostics", { uri: first.uri });
    assert.deepEqual(inFirst.filter((d) => ["TW501", "TW101"].includes(d.code)), [], JSON.stringify(inFirst));

    // `x` in cell 2 was defined in cell 1: the server reads the cells as one program.
    await probe.until(`a hover with ${NOTEBOOK_SHAPE} on x in cell 2`, "hover",
      { uri: second.uri, line: NOTEBOOK.broadcastLine, character: NOTEBOOK.hoverCharacter },
      (hovers) => hovers.some((text) => text.includes(NOTEBOOK_SHAPE)));
    // The picture with the squiggles drawn in cell 2.
    await bench.page.locator(".notebook-editor .squiggly-warning, .notebook-editor .squiggly-error").first()
      .waitFor({ timeout: ROUND_TRIP_MS });
    await bench.screenshot("08-notebook");
  }));

  it("benchmarks a loop from its code lens", { timeout: 2 * STEP_TIMEOUT }, (t) => step("benchmark", async () => {
    if (!serverCommands.includes(BENCHMARK_COMMAND)) {
      t.skip(`the server does not advertise ${BENCHMARK_COMMAND} in executeCommandProvider.commands yet`);
      return;
    }
    await bench.openFile(LOOP.name);
    const lens = bench.codeLenses("Benchmark loop vs vectorized");
    await lens.first().waitFor({ timeout: 2 * ROUND_TRIP_MS });
    const lenses = await probe.ask("codeLenses", { file: file(LOOP.name) });
    assert.ok(lenses.some((l) => l.command === BENCHMARK_COMMAND), JSON.stringify(lenses));
    await bench.screenshot("06-code-lens");

    await lens.first().locator("a", { hasText: "Benchmark loop vs vectorized" }).click({ timeout: ROUND_TRIP_MS });
    const shown = await waitFor("the benchmark result", async () => {
      const text = await bench.shownText();
      // Both the lens (⏱ ...) and the notification (the whole result) have it.
      return /⏱ loop .*→ vectorized .*results match/.test(text) && /± .*peak memory/.test(text) && text;
    }, { timeout: 3 * ROUND_TRIP_MS });
    await bench.screenshot("07-benchmark");
    // e.g. "⏱ loop 21.3 ms → vectorized 253 µs (84×) at N=2500 of 10000 · cpu · results match"
    assert.match(shown, /⏱ loop .+ → vectorized .+ \(.+×(, within noise)?\)( at [^·]+)? · (cpu|cuda(:\d+)?|mps) · results match/);
    // The notification has the whole result: both medians ± IQR, peak memory, the scaling points.
    assert.match(shown, /loop .+ ± .+ → vectorized .+ ± .+ on (cpu|cuda|mps).*results match; peak memory .+ → .+; N=\d+: /);
    // The hover on the loop: memory and scaling tables.
    await bench.goTo(LOOP.forLine, LOOP.forColumn);
    const hover = await bench.hoverAtCursor("peak memory");
    assert.match(hover, /speedup/);
    await bench.screenshot("vscode-benchmark-hover");
  }));

  // Guards a fixed bug: a check cancelled while the server awaited workspace/configuration made the
  // client's late answer show "Error in server: CANCELLED: <Future ...>" on every start.
  it("shows no error notifications", { timeout: STEP_TIMEOUT },
    () => step("notifications", async () => {
      notifications.push(...(await bench.takeNotifications()));
      writeFileSync(path.join(ARTIFACTS, "notifications.json"), JSON.stringify(notifications, null, 2));
      assert.deepEqual(notifications.filter((n) => n.severity === "error"), []);
    }));
});
