// Which Python runs the server, and whether torchwise can be imported there. Free of `vscode`
// so that it can be unit-tested; `pythonExtension.ts` gathers the inputs.

import { execFile } from "node:child_process";
import * as path from "node:path";

export type InterpreterSource = "setting" | "python-extension" | "path";

export interface Interpreter {
  path: string;
  source: InterpreterSource;
}

export interface InterpreterSetting {
  /** `config.get("interpreter")`: the effective value, workspace values included. */
  effective: unknown;
  /** `config.inspect("interpreter")?.globalValue`: the user (or remote machine) value alone. */
  user: unknown;
}

export interface PathContext {
  workspaceFolder?: string;
  home: string;
}

/**
 * The `torchwise.interpreter` value to use, expanded, or undefined when there is none. In an
 * untrusted workspace only the user's own value counts: a workspace setting could otherwise name
 * any executable and have it run as soon as a Python file is opened.
 */
export function configuredInterpreter(
  setting: InterpreterSetting,
  trusted: boolean,
  context: PathContext,
): string | undefined {
  const raw = trusted ? setting.effective : setting.user;
  if (typeof raw !== "string" || raw.trim() === "") {
    return undefined;
  }
  let value = raw.trim().replace(/\$\{userHome\}/g, context.home);
  if (value === "~" || value.startsWith("~/") || value.startsWith("~\\")) {
    value = context.home + value.slice(1);
  }
  if (context.workspaceFolder !== undefined) {
    value = value.replace(/\$\{workspaceFolder\}/g, context.workspaceFolder);
    // A bare name ("python3.11") is looked up on PATH; anything with a separator is a path,
    // and a relative one means the workspace's (".venv/bin/python").
    if (/[\\/]/.test(value) && !path.isAbsolute(value)) {
      value = path.resolve(context.workspaceFolder, value);
    }
  }
  return value;
}

/**
 * The strategy is as follows:
 * 1. the `torchwise.interpreter` setting, if set (see `configuredInterpreter`);
 * 2. the Python extension's active environment for the workspace, because that is where the
 *    user installed torch for this project (trusted workspaces only: it may be the workspace's
 *    own `.venv`);
 * 3. `python3` on PATH, or `python` on Windows, where `python3` is often the Microsoft Store
 *    stub that opens the Store instead of running anything.
 */
export function chooseInterpreter(inputs: {
  configured?: string;
  pythonExtension?: string;
  platform: NodeJS.Platform;
}): Interpreter {
  if (inputs.configured) {
    return { path: inputs.configured, source: "setting" };
  }
  if (inputs.pythonExtension) {
    return { path: inputs.pythonExtension, source: "python-extension" };
  }
  return { path: inputs.platform === "win32" ? "python" : "python3", source: "path" };
}

export type ImportCheck = { ok: true; version: string } | { ok: false; reason: string };

const CHECK_SCRIPT = "import torchwise, sys; print(torchwise.__version__)";

/**
 * Runs the interpreter once to see that torchwise imports, so that a missing install becomes one
 * clear message instead of the language client's crash-and-retry loop. The timeout covers a
 * first import that compiles bytecode for torch on a slow disk, yet not a hung interpreter.
 */
export function checkTorchwise(python: string, timeoutMs = 10_000): Promise<ImportCheck> {
  return new Promise((resolve) => {
    execFile(
      python,
      ["-c", CHECK_SCRIPT],
      { timeout: timeoutMs, windowsHide: true },
      (error, stdout, stderr) => {
        if (!error) {
          resolve({ ok: true, version: stdout.trim() });
        } else if (error.killed) {
          resolve({ ok: false, reason: `${python} did not answer within ${timeoutMs / 1000} s` });
        } else {
          const lastLine = stderr.trim().split(/\r?\n/).pop();
          resolve({ ok: false, reason: lastLine || error.message });
        }
      },
    );
  });
}
