// Where things are. EDITORS_DIR (default .editors/) is what scripts/editors/install.sh fills.
import { existsSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
export const EDITORS_DIR = process.env.EDITORS_DIR ?? path.join(ROOT, ".editors");
export const CODE_SERVER = path.join(EDITORS_DIR, "code-server/node_modules/.bin/code-server");
export const PLAYWRIGHT = path.join(EDITORS_DIR, "playwright/node_modules/playwright-core");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const PYTHON = process.env.TORCHWISE_PYTHON ?? path.join(ROOT, ".venv/bin/python");
export const FIXTURES = path.join(ROOT, "tests/editors/fixtures/workspace");
export const PROBE_EXTENSION = path.join(ROOT, "tests/editors/vscode/probe-extension");
export const ARTIFACTS = path.resolve(ROOT, process.env.EDITORS_ARTIFACTS ?? "artifacts/editors/vscode");

/** Why the suite cannot run here, or undefined when it can. */
export function missingPrerequisite() {
  const needed = [
    [CODE_SERVER, "code-server"],
    [PLAYWRIGHT, "playwright-core"],
    [CHROMIUM, "chromium"],
  ];
  for (const [file, what] of needed) {
    if (!existsSync(file)) return `${what} is not installed at ${file} (run scripts/editors/install.sh)`;
  }
  if (!existsSync(PYTHON)) return `no Python with torchwise at ${PYTHON} (run make setup, or set TORCHWISE_PYTHON)`;
  if (!existsSync(path.join(ROOT, "node_modules"))) return "the extension's npm packages are missing (run npm ci)";
  return undefined;
}
