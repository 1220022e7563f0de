// The private venv that runs the server when the user's interpreter has no torchwise: made with
// the user's interpreter under the extension's global storage, holding the bundled torchwise
// and its dependencies from PyPI (or whatever index pip is configured for). Free of `vscode`.
//
// One folder per bundled version (`venv-<version>`), so that an update never runs a half-updated
// server; a stamp written last marks it complete; a lock folder keeps two VS Code windows that
// start together from building it at once.

import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { Bundle } from "./bundle";
import { Probe } from "./python";

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface VenvLayout {
  folder: string;
  python: string;
  stamp: string;
  lock: string;
}

export function venvLayout(storage: string, version: string, platform: NodeJS.Platform): VenvLayout {
  const folder = path.join(storage, `venv-${version}`);
  return {
    folder,
    python: platform === "win32" ? path.join(folder, "Scripts", "python.exe") : path.join(folder, "bin", "python"),
    stamp: path.join(folder, "torchwise-install.json"),
    lock: `${folder}.lock`,
  };
}

/** What the stamp records: the bundle installed and the interpreter the venv was made with. */
export interface Stamp {
  version: string;
  hash: string;
  basePython: string;
}

export function stampMatches(stamp: unknown, bundle: Bundle): boolean {
  if (typeof stamp !== "object" || stamp === null) {
    return false;
  }
  const { version, hash } = stamp as Record<string, unknown>;
  return version === bundle.version && hash === bundle.hash;
}

/** The entries of the storage folder that belong to other versions' venvs (and their locks). */
export function staleEntries(entries: string[], current: VenvLayout): string[] {
  const keep = new Set([path.basename(current.folder), path.basename(current.lock)]);
  return entries.filter((entry) => entry.startsWith("venv-") && !keep.has(entry));
}

/** A way out for the usual reasons why making the venv fails, from the tools' own output. */
export function venvFailureHint(output: string): string | undefined {
  if (/ensurepip is not available|No module named (ensurepip|venv)|ensurepip is disabled/i.test(output)) {
    return "This Python cannot create virtual environments: on Debian or Ubuntu install python3-venv (e.g. `sudo apt install python3-venv`), or select another interpreter.";
  }
  if (/requires a different Python|Requires-Python/i.test(output)) {
    return "This Python is too old for torchwise: select a newer interpreter.";
  }
  if (/No space left on device/i.test(output)) {
    return "The disk is full.";
  }
  if (
    /Could not find a version that satisfies|No matching distribution|Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|ProxyError|SSLError|ConnectTimeout|Read timed out|Network is unreachable/i.test(
      output,
    )
  ) {
    return "pip could not download torchwise's dependencies (pygls, lsprotocol, libcst, pathspec): check the network, or pip's index and proxy settings (pip.conf, PIP_INDEX_URL, HTTPS_PROXY). Or install torchwise yourself and set torchwise.serverPath.";
  }
  return undefined;
}

export class VenvError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export interface RunOptions {
  cwd: string;
  log: Logger;
  signal?: AbortSignal;
  timeoutMs: number;
}

/**
 * Runs a command, logging its output line by line; resolves with its output when it exits with
 * 0, else rejects with a VenvError carrying a hint drawn from that output.
 */
export function run(command: string, args: string[], options: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    options.log.info(`> ${command} ${args.join(" ")}`);
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", PIP_NO_INPUT: "1" },
      signal: options.signal,
      timeout: options.timeoutMs,
      windowsHide: true,
    });
    let output = "";
    const collect = (data: Buffer) => {
      const text = data.toString();
      output += text;
      for (const line of text.split(/\r?\n/)) {
        if (line.trim() !== "") options.log.info(`  ${line}`);
      }
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    const started = Date.now();
    child.on("error", (error) => {
      if (options.signal?.aborted) {
        reject(new VenvError("cancelled"));
      } else {
        reject(new VenvError(`${command} could not run: ${error.message}`, venvFailureHint(output)));
      }
    });
    child.on("close", (code, signal) => {
      if (code === 0) {
        resolve(output);
      } else if (!options.signal?.aborted) {
        const lastLine = output.trim().split(/\r?\n/).pop() ?? "";
        const timedOut = signal !== null && Date.now() - started >= options.timeoutMs;
        const how = timedOut
          ? `did not finish within ${Math.round(options.timeoutMs / 60_000)} min`
          : signal
            ? `was stopped (${signal})`
            : `failed (exit code ${code})`;
        reject(new VenvError(`${path.basename(command)} ${args.slice(0, 3).join(" ")} ${how}: ${lastLine}`, venvFailureHint(output)));
      }
    });
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new VenvError("cancelled"));
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(new VenvError("cancelled"));
      },
      { once: true },
    );
  });
}

export interface LockOptions {
  /** A lock older than this is left over from a crashed window and taken over. */
  staleMs: number;
  pollMs: number;
  onWait?: () => void;
  signal?: AbortSignal;
}

/** Runs `job` holding a lock folder (mkdir is atomic on every platform and file system). */
export async function withLock<T>(lock: string, job: () => Promise<T>, options: LockOptions): Promise<T> {
  let waited = false;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw error;
      }
    }
    let age: number;
    try {
      age = Date.now() - statSync(lock).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    if (age > options.staleMs) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (!waited) {
      waited = true;
      options.onWait?.();
    }
    await sleep(options.pollMs, options.signal);
  }
  try {
    return await job();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface EnsureOptions {
  storage: string;
  bundle: Bundle;
  /** The user's interpreter, absolute (`sys.executable`): it makes the venv. */
  basePython: string;
  platform: NodeJS.Platform;
  log: Logger;
  /** Tells the user what is happening (a progress notification). */
  report: (message: string) => void;
  /** Runs a Python and says whether torchwise imports there (`probeInterpreter`). */
  probe: (python: string) => Promise<Probe>;
  /** Why the base interpreter cannot make the venv (`cannotCreateVenv`): fatal only if it must. */
  cannotCreate?: string;
  signal?: AbortSignal;
}

/** Installing pygls and libcst from a slow mirror can take minutes; a hang cannot take forever. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;
const VENV_TIMEOUT_MS = 3 * 60_000;

async function isCurrent(layout: VenvLayout, options: EnsureOptions): Promise<boolean> {
  let stamp: unknown;
  try {
    stamp = JSON.parse(readFileSync(layout.stamp, "utf8"));
  } catch {
    return false;
  }
  if (!stampMatches(stamp, options.bundle)) {
    return false;
  }
  // The stamp may outlive the interpreter the venv links to (an uninstalled Python, a removed
  // pyenv version): the venv must still run.
  const probe = await options.probe(layout.python);
  if (probe.ok && probe.torchwise === options.bundle.version) {
    return true;
  }
  options.log.warn(`The private environment ${layout.folder} no longer works (${probe.ok ? probe.torchwiseError : probe.reason}); making it again.`);
  return false;
}

/**
 * The private venv's python, with the bundled torchwise installed: reused when its stamp matches
 * the bundle and it still runs, else made again. Throws a VenvError on failure.
 */
export async function ensureVenv(options: EnsureOptions): Promise<string> {
  const { storage, bundle, log, signal } = options;
  const layout = venvLayout(storage, bundle.version, options.platform);
  mkdirSync(storage, { recursive: true });
  if (await isCurrent(layout, options)) {
    return layout.python;
  }
  const onWait = () => options.report("waiting for another window that is setting up the server");
  return withLock(
    layout.lock,
    async () => {
      // Another window may have finished it while this one waited.
      if (await isCurrent(layout, options)) {
        return layout.python;
      }
      if (options.cannotCreate) {
        throw new VenvError(`Cannot set up the torchwise server: ${options.cannotCreate}.`);
      }
      const runOptions = { cwd: storage, log, signal };
      rmSync(layout.folder, { recursive: true, force: true });
      options.report(`creating a private Python environment with ${options.basePython}`);
      // -I: no PYTHONPATH, no user site-packages, no current folder: nothing of the user's
      // environment leaks into the venv or into what is installed there.
      await run(options.basePython, ["-I", "-m", "venv", layout.folder], { ...runOptions, timeoutMs: VENV_TIMEOUT_MS });

      options.report(`installing torchwise ${bundle.version} and its dependencies (pygls, lsprotocol, libcst, pathspec)`);
      // pip builds a local folder in place (build/, *.egg-info): build a copy, not the extension.
      const scratch = mkdtempSync(path.join(storage, "build-"));
      try {
        cpSync(bundle.source, scratch, { recursive: true });
        await run(layout.python, ["-I", "-m", "pip", "install", scratch], { ...runOptions, timeoutMs: INSTALL_TIMEOUT_MS });
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }

      const probe = await options.probe(layout.python);
      if (!probe.ok || probe.torchwise !== bundle.version) {
        const why = probe.ok ? (probe.torchwiseError ?? `it has torchwise ${probe.torchwise}`) : probe.reason;
        throw new VenvError(`torchwise does not import in the new environment: ${why}`);
      }
      const stamp: Stamp = { version: bundle.version, hash: bundle.hash, basePython: options.basePython };
      writeFileSync(layout.stamp, `${JSON.stringify(stamp, null, 2)}\n`);
      log.info(`Private environment ready: ${layout.folder}`);
      removeStale(storage, layout, log);
      return layout.python;
    },
    { staleMs: INSTALL_TIMEOUT_MS + VENV_TIMEOUT_MS, pollMs: 1000, onWait, signal },
  );
}

/** Best effort: a window still running an older version's server may hold files there. */
function removeStale(storage: string, current: VenvLayout, log: Logger): void {
  let entries: string[];
  try {
    entries = readdirSync(storage);
  } catch {
    return;
  }
  for (const entry of staleEntries(entries, current)) {
    const target = path.join(storage, entry);
    try {
      rmSync(target, { recursive: true, force: true });
      log.info(`Removed the old ${target}`);
    } catch (error) {
      log.warn(`Could not remove ${target}: ${String(error)}`);
    }
  }
}
