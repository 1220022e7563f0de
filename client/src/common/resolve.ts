// Which torchwise server to start. Free of `vscode` so that the precedence can be unit-tested;
// `server.ts` gathers the inputs and carries the decision out.

import { Bundle, compareVersions, minimumPython } from "./bundle";
import { ISOLATED, Probe } from "./python";

export type ServerChoice =
  /** Run `command args` as it is. */
  | { kind: "command"; command: string; args: string[]; source: "serverPath" | "interpreter"; version?: string }
  /** Run torchwise from the extension's private venv, creating or updating it first. */
  | { kind: "venv"; bundle: Bundle; note?: string }
  | { kind: "none"; reason: string };

export interface ServerInputs {
  /** The expanded `torchwise.serverPath`, if set (and allowed by workspace trust). */
  serverPath?: string;
  /** The user's interpreter (see `chooseInterpreter`) and what running it told. */
  interpreter: string;
  probe: Probe;
  /** The Python source the extension ships; undefined if the installation is broken. */
  bundle?: Bundle;
}

/**
 * The strategy is as follows:
 * 1. `torchwise.serverPath`, if set: the user's own `torchwise` executable, run as `<path> lsp`,
 *    whatever its version (an explicit choice, e.g. a development checkout);
 * 2. the user's interpreter, if torchwise imports there at a version at least the bundled one:
 *    `<python> -I -m torchwise lsp` (isolated, as the probe that found it there), as before the
 *    private venv existed. An older one is skipped,
 *    since it would not know the settings and commands of this extension;
 * 3. the private venv under the extension's global storage, holding the bundled torchwise and
 *    its dependencies, made with the user's interpreter (see `venv.ts`), so that whatever pygls
 *    the user's environment holds cannot break the server;
 * 4. nothing: the reason says which of the above failed and why.
 * The benchmark worker runs in the user's interpreter in every case: the server is told its path.
 */
export function chooseServer(inputs: ServerInputs): ServerChoice {
  const { serverPath, interpreter, probe, bundle } = inputs;
  if (serverPath) {
    return { kind: "command", command: serverPath, args: ["lsp"], source: "serverPath" };
  }
  const notes: string[] = [];
  if (probe.ok && probe.torchwise !== undefined) {
    const comparison = bundle ? compareVersions(probe.torchwise, bundle.version) : 1;
    if (comparison === undefined || comparison >= 0) {
      return {
        kind: "command",
        command: probe.executable,
        // Isolated: `python -m` would put the working folder (the workspace) first on sys.path.
        args: [ISOLATED, "-m", "torchwise", "lsp"],
        source: "interpreter",
        version: probe.torchwise,
      };
    }
    notes.push(`${interpreter} has torchwise ${probe.torchwise}, older than the bundled ${bundle?.version}`);
  }
  if (!bundle) {
    const why = probe.ok
      ? (notes[0] ?? `torchwise is not installed in ${interpreter}`)
      : `${interpreter} does not run: ${probe.reason}`;
    return { kind: "none", reason: `${why}, and this installation of the extension lacks its bundled server.` };
  }
  return { kind: "venv", bundle, note: notes[0] };
}

/**
 * Why the user's interpreter cannot create the private venv, or undefined if it can try. The
 * venv module's own failures (Debian without python3-venv) show only when it runs: see
 * `venvFailureHint`.
 */
export function cannotCreateVenv(interpreter: string, probe: Probe, bundle: Bundle): string | undefined {
  if (!probe.ok) {
    return `the Python interpreter ${interpreter} does not run: ${probe.reason}`;
  }
  const minimum = minimumPython(bundle.requiresPython);
  if (minimum && (probe.python[0] < minimum[0] || (probe.python[0] === minimum[0] && probe.python[1] < minimum[1]))) {
    return `torchwise needs Python ${minimum.join(".")} or newer; ${interpreter} is Python ${probe.python.join(".")}`;
  }
  return undefined;
}
