// Which Python runs the server, and whether torchwise can be imported there. Free of `vscode`
// so that it can be unit-tested; `pythonExtension.ts` gathers the inputs.

import { execFile } from "node:child_process";
import * as path from "node:path";

export type InterpreterSource = "setting" | "python-extension" | "path";

export interface Interpreter {
  path: string;
  source: InterpreterSource;
}

/** A path setting (`torchwise.interpreter`, `torchwise.serverPath`) as read from VS Code. */
export interface PathSetting {
  /** `config.get(name)`: the effective value, workspace values included. */
  effective: unknown;
  /** `config.inspect(name)?.globalValue`: the user (or remote machine) value alone. */
  user: unknown;
}

export interface PathContext {
  workspaceFolder?: string;
  home: string;
}

/**
 * The value of an executable's path setting to use, expanded, or undefined when there is none.
 * In an untrusted workspace only the user's own value counts: a workspace setting could
 * otherwise name any executable and have it run as soon as a Python file is opened.
 */
export function configuredExecutable(
  setting: PathSetting,
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
 * 1. the `torchwise.interpreter` setting, if set (see `configuredExecutable`);
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

/** What one run of an interpreter tells about it. */
export type Probe =
  | {
      ok: true;
      /** `sys.executable`: absolute, and the environment's own python for a venv. */
      executable: string;
      python: [number, number, number];
      /** `torchwise.__version__`, if torchwise imports there. */
      torchwise?: string;
      /** Why torchwise does not import there, e.g. "ModuleNotFoundError: No module named 'torchwise'". */
      torchwiseError?: string;
    }
  | { ok: false; reason: string };

// Also valid Python 2, so that an old `python` on PATH gets "too old" rather than a SyntaxError.
const PROBE_SCRIPT = `
import json, sys
result = {"executable": sys.executable, "python": list(sys.version_info[:3])}
try:
    import torchwise
    result["torchwise"] = str(torchwise.__version__)
except Exception as error:
    result["torchwiseError"] = "%s: %s" % (type(error).__name__, error)
print(json.dumps(result))
`;

/**
 * How the extension runs any Python: isolated (`-I`), so that neither the working folder (a workspace
 * holding `json.py`, `typing.py` or `asyncio.py`) nor `PYTHONPATH` or the user's site-packages can put
 * modules on `sys.path` before the standard library's. Python 3.4 and newer know it.
 */
export const ISOLATED = "-I";

/** Reads the probe's output: its last line, as a sitecustomize may print before it. */
export function parseProbe(stdout: string, python: string): Probe {
  const lastLine = stdout.trim().split(/\r?\n/).pop() ?? "";
  try {
    const data = JSON.parse(lastLine) as Record<string, unknown>;
    const version = data.python;
    if (!Array.isArray(version) || version.length !== 3 || !version.every((part) => typeof part === "number")) {
      throw new Error("no version");
    }
    return {
      ok: true,
      executable: typeof data.executable === "string" && data.executable !== "" ? data.executable : python,
      python: version as [number, number, number],
      torchwise: typeof data.torchwise === "string" ? data.torchwise : undefined,
      torchwiseError: typeof data.torchwiseError === "string" ? data.torchwiseError : undefined,
    };
  } catch {
    return { ok: false, reason: `${python} printed something else than expected: ${lastLine.slice(0, 200)}` };
  }
}

/**
 * Runs the interpreter once: does it run, which Python is it, and does torchwise import there.
 * The timeout covers a first import on a slow disk or a cold conda environment, yet not a hung
 * interpreter.
 */
export function probeInterpreter(python: string, options: { cwd?: string; timeoutMs?: number } = {}): Promise<Probe> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve) => {
    execFile(
      python,
      [ISOLATED, "-c", PROBE_SCRIPT],
      // In the server's folder: pyenv's shims pick the Python that `.python-version` there names.
      { cwd: options.cwd, timeout: timeoutMs, windowsHide: true },
      (error, stdout, stderr) => {
        if (!error) {
          resolve(parseProbe(stdout, python));
        } else if (error.killed) {
          resolve({ ok: false, reason: `${python} did not answer within ${timeoutMs / 1000} s` });
        } else if (/Unknown option: -I|unknown option -I/.test(stderr)) {
          resolve({ ok: false, reason: `${python} is Python 2 or older than 3.4 (it has no -I option); torchwise needs Python 3.9 or newer` });
        } else {
          const lastLine = stderr.trim().split(/\r?\n/).pop();
          resolve({ ok: false, reason: lastLine || error.message });
        }
      },
    );
  });
}

export type VersionCheck = { ok: true; version?: string } | { ok: false; reason: string };

/**
 * Runs `<torchwise> --version` (torchwise's CLI prints "torchwise 0.1.0"): a mistyped
 * `torchwise.serverPath` becomes one clear message instead of the language client's retries.
 */
export function checkServerExecutable(executable: string, options: { cwd?: string; timeoutMs?: number } = {}): Promise<VersionCheck> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve) => {
    execFile(executable, ["--version"], { cwd: options.cwd, timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      if (!error) {
        resolve({ ok: true, version: /torchwise\s+(\S+)/.exec(stdout)?.[1] });
      } else if (error.killed) {
        resolve({ ok: false, reason: `${executable} did not answer within ${timeoutMs / 1000} s` });
      } else {
        const lastLine = stderr.trim().split(/\r?\n/).pop();
        resolve({ ok: false, reason: lastLine || error.message });
      }
    });
  });
}
