// The VS Code workbench as a user drives it: the keyboard (in VS Code 1.100 an overlay blocks
// mouse clicks on some widgets) and what is drawn on the page.
import { mkdirSync } from "node:fs";
import * as path from "node:path";
import { ROUND_TRIP_MS, waitFor } from "./wait.mjs";

const CHROMIUM_ARGS = [
  "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
];

/** Monaco draws spaces as non-breaking spaces. */
const plain = (text) => text.replaceAll("\u00a0", " ");

export async function openBrowser(playwright, { executablePath, profileDir }) {
  const context = await playwright.chromium.launchPersistentContext(profileDir, {
    executablePath,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 900 },
  });
  return { context, page: context.pages()[0] ?? (await context.newPage()) };
}

export class Workbench {
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
    mkdirSync(artifacts, { recursive: true });
  }

  async open(url) {
    await this.page.goto(url);
    await this.page.locator(".monaco-workbench").waitFor({ timeout: ROUND_TRIP_MS * 2 });
    // The explorer shows the folder once the remote file system answers.
    await this.page.locator(".explorer-folders-view").waitFor({ timeout: ROUND_TRIP_MS * 2 });
  }

  async screenshot(name) {
    const file = path.join(this.artifacts, `${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /** A picture of the top of the editor only (for the docs: no empty space, no side bar). */
  async screenshotEditorTop(name, height = 240) {
    const box = await this.page.locator(".part.editor").boundingBox();
    const file = path.join(this.artifacts, `${name}.png`);
    await this.page.screenshot({ path: file, clip: { x: box.x, y: box.y, width: Math.min(box.width, 900), height } });
    return file;
  }

  /** Quick Open (Ctrl+P), then the file's name. */
  async openFile(name) {
    await this.page.keyboard.press("Control+P");
    await this.typeInQuickInput(name, name);
    await this.activeTab(name).waitFor({ timeout: ROUND_TRIP_MS });
    await this.focusedEditor().waitFor({ timeout: ROUND_TRIP_MS });
  }

  /** Quick Open (Ctrl+P) of a .ipynb: it opens in the notebook editor, which shows its cells. */
  async openNotebook(name) {
    await this.page.keyboard.press("Control+P");
    await this.typeInQuickInput(name, name);
    await this.activeTab(name).waitFor({ timeout: ROUND_TRIP_MS });
    await this.page.locator(".notebook-editor .cell-list-container .code-cell-row").first().waitFor({ timeout: ROUND_TRIP_MS });
  }

  activeTab(name) {
    return this.page.locator(`.tab.active[data-resource-name="${name}"]`);
  }

  focusedEditor() {
    return this.page.locator(".monaco-editor.focused .view-lines");
  }

  /** Types into the open quick input and accepts once the focused entry contains `expected`. */
  async typeInQuickInput(text, expected) {
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor({ timeout: ROUND_TRIP_MS });
    await input.fill(text);
    await this.page.locator(".quick-input-list .monaco-list-row.focused", { hasText: expected })
      .waitFor({ timeout: ROUND_TRIP_MS });
    await this.page.keyboard.press("Enter");
    await this.page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: ROUND_TRIP_MS });
  }

  /** Runs a command from the palette (F1) by its title, as a user would. */
  async runCommand(title) {
    await this.page.keyboard.press("F1");
    await this.typeInQuickInput(`>${title}`, title); // ">" keeps the input in command mode
  }

  /** Puts the cursor at a 1-based line and column (Ctrl+G, "line:column"). */
  async goTo(line, column) {
    await this.page.keyboard.press("Control+G");
    const input = this.page.locator(".quick-input-widget input");
    await input.waitFor({ timeout: ROUND_TRIP_MS });
    await input.fill(`:${line}:${column}`);
    await this.page.keyboard.press("Enter");
    await this.page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: ROUND_TRIP_MS });
    await this.focusedEditor().waitFor({ timeout: ROUND_TRIP_MS });
  }

  /** The text of the visible lines of the focused editor. */
  async editorText() {
    return plain(await this.focusedEditor().innerText());
  }

  squiggles(severity = "warning") {
    return this.page.locator(`.monaco-editor .squiggly-${severity}`);
  }

  /** Opens the Problems panel and returns its rows' text once one contains `needle`. */
  async problemsRowsWith(needle) {
    await this.runCommand("View: Focus Problems (Errors, Warnings, Infos)");
    const row = this.page.locator(".markers-panel .monaco-list-row", { hasText: needle });
    await row.first().waitFor({ timeout: ROUND_TRIP_MS });
    return (await this.page.locator(".markers-panel .monaco-list-row").allInnerTexts()).map(plain);
  }

  async closePanel() {
    await this.runCommand("View: Hide Panel");
    await this.page.locator(".markers-panel").waitFor({ state: "hidden", timeout: ROUND_TRIP_MS });
  }

  /** Shows the hover at the cursor (Ctrl+K Ctrl+I) and returns its text once it contains `needle`. */
  async hoverAtCursor(needle) {
    const hover = this.page.locator(".monaco-editor .monaco-hover:not(.hidden) .monaco-hover-content", { hasText: needle });
    await waitFor(`a hover containing ${needle}`, async () => {
      await this.page.keyboard.press("Control+K");
      await this.page.keyboard.press("Control+I");
      // The server may still be analysing: ask again until the hover holds what we want.
      return hover.first().waitFor({ timeout: 5_000 }).then(() => true, () => false);
    });
    // Let the fade-in finish, or a screenshot shows a half-transparent hover.
    await hover.first().evaluate((element) =>
      Promise.all(element.closest(".monaco-hover").getAnimations({ subtree: true }).map((a) => a.finished)));
    return plain(await hover.first().innerText());
  }

  async dismissHover() {
    await this.page.keyboard.press("Escape");
    await this.page.locator(".monaco-editor .monaco-hover:not(.hidden)").waitFor({ state: "hidden", timeout: ROUND_TRIP_MS })
      .catch(() => undefined); // some hovers only hide on the next cursor move
  }

  /** Ctrl+. at the cursor; returns the menu's entries once it lists every one of `expected`. */
  async openQuickFixMenu(expected) {
    const rows = this.page.locator(".action-widget .monaco-list-row.action");
    const entries = async () => (await rows.allInnerTexts()).map(plain);
    await waitFor(`the quick fix menu with ${expected.join(", ")}`, async () => {
      await this.page.keyboard.press("Control+.");
      const shown = await rows.first().waitFor({ timeout: 5_000 }).then(() => true, () => false);
      // The menu may open before the server's actions are in (or say there are none): ask again.
      if (shown) {
        const list = await entries();
        if (expected.every((e) => list.some((t) => t.includes(e)))) return true;
      }
      await this.page.keyboard.press("Escape");
      return false;
    });
    return entries();
  }

  /** Moves the menu's focus with the arrow keys to the entry containing `title`, then Enter. */
  async chooseQuickFix(title) {
    const focused = this.page.locator(".action-widget .monaco-list-row.action.focused");
    const focusedText = async () => ((await focused.count()) === 1 ? plain(await focused.innerText()) : "");
    const count = await this.page.locator(".action-widget .monaco-list-row.action").count();
    for (let step = 0; step <= count; step++) {
      const now = await focusedText();
      if (now.includes(title)) {
        await this.page.keyboard.press("Enter");
        await this.page.locator(".action-widget").waitFor({ state: "hidden", timeout: ROUND_TRIP_MS });
        return;
      }
      await this.page.keyboard.press("ArrowDown");
      // Read the focus only once it has moved, or a slow render makes us skip past the entry.
      await waitFor("the menu's focus to move", async () => (await focusedText()) !== now, { timeout: 10_000, interval: 50 });
    }
    throw new Error(`no quick fix entry ${title}`);
  }

  /** Every notification so far ({severity, message}), read from the notification center, which is then cleared. */
  async takeNotifications() {
    await this.runCommand("Notifications: Show Notifications");
    const center = this.page.locator(".notifications-center");
    await center.waitFor({ timeout: ROUND_TRIP_MS });
    const found = await center.locator(".notification-list-item").evaluateAll((items) => items.map((item) => ({
      severity: ["error", "warning", "info"].find((s) => item.querySelector(`.codicon-${s}`)) ?? "unknown",
      message: item.querySelector(".notification-list-item-message")?.textContent ?? "",
    })));
    await this.runCommand("Notifications: Clear All Notifications"); // an empty center closes itself
    await waitFor("the notification center to close", async () => {
      if (!(await center.isVisible())) return true;
      await this.page.keyboard.press("Escape");
      return false;
    });
    return found;
  }

  codeLenses(needle) {
    return this.page.locator(".monaco-editor .codelens-decoration", { hasText: needle });
  }

  /** All text a benchmark result may be shown in: code lenses, notifications, inline decorations. */
  async shownText() {
    return plain(await this.page.evaluate(() => {
      const parts = [...document.querySelectorAll(".codelens-decoration, .notification-list-item-message")]
        .map((e) => e.innerText);
      // Text drawn by decorations lives in ::before/::after content, not in the DOM.
      for (const e of document.querySelectorAll(".monaco-editor .view-lines span[class]")) {
        for (const pseudo of ["::before", "::after"]) {
          const content = getComputedStyle(e, pseudo).content;
          if (content && content !== "none" && content !== "normal") parts.push(content);
        }
      }
      return parts.join("\n");
    }));
  }
}
