// Typed torchwise settings. Free of `vscode` so that it can be unit-tested: callers pass a
// `WorkspaceConfiguration`, which satisfies `ConfigReader`.

export type Severity = "error" | "warning" | "info" | "hint" | "off";
export type Device = "auto" | "cpu" | "cuda" | "mps";

/**
 * What the server receives as `initializationOptions.settings`, and as `{"torchwise": ...}` in
 * every `workspace/didChangeConfiguration` and `workspace/configuration` answer.
 */
export interface ServerSettings {
  select: string[];
  ignore: string[];
  severity: Record<string, Severity>;
  benchmark: {
    device: Device;
    timeLimit: number;
  };
  /** Inlay hints after assignments: the tensor's shape, and its dtype when it is not the default. */
  inlayHints: {
    shapes: boolean;
    dtypes: boolean;
  };
  /**
   * Whether the workspace is trusted (`workspace.isTrusted`). The server offers and runs the
   * benchmark, which executes the workspace's code, only when this is true.
   */
  trusted: boolean;
  /**
   * The user's Python (absolute: its `sys.executable`), where the benchmark worker must run: it
   * has the user's torch, while the server itself may run in the extension's private venv. Not
   * the raw `torchwise.interpreter`: that may be unset, relative, or a workspace value that an
   * untrusted workspace must not get to run.
   */
  interpreter?: string;
}

export interface ConfigReader {
  get(section: string): unknown;
}

const SEVERITIES: readonly Severity[] = ["error", "warning", "info", "hint", "off"];
const DEVICES: readonly Device[] = ["auto", "cpu", "cuda", "mps"];
const DEFAULT_TIME_LIMIT = 30;

function isOneOf<T extends string>(value: unknown, allowed: readonly T[]): value is T {
  return typeof value === "string" && (allowed as readonly string[]).includes(value);
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function severityMap(value: unknown): Record<string, Severity> {
  const result: Record<string, Severity> = {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return result;
  }
  for (const [code, severity] of Object.entries(value)) {
    if (isOneOf(severity, SEVERITIES)) {
      result[code] = severity;
    }
  }
  return result;
}

function flag(value: unknown): boolean {
  return typeof value === "boolean" ? value : true;
}

function timeLimit(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    return DEFAULT_TIME_LIMIT;
  }
  // VS Code only warns about `minimum`; a run needs at least a second to mean anything.
  return Math.max(1, value);
}

/**
 * Reads the settings the server needs. Settings files are hand-edited JSON, so anything of the
 * wrong type falls back to its default instead of reaching the server.
 */
export function readServerSettings(config: ConfigReader, interpreter?: string, trusted = false): ServerSettings {
  const device = config.get("benchmark.device");
  const settings: ServerSettings = {
    select: stringList(config.get("select")),
    ignore: stringList(config.get("ignore")),
    severity: severityMap(config.get("severity")),
    benchmark: {
      device: isOneOf(device, DEVICES) ? device : "auto",
      timeLimit: timeLimit(config.get("benchmark.timeLimit")),
    },
    inlayHints: {
      shapes: flag(config.get("inlayHints.shapes")),
      dtypes: flag(config.get("inlayHints.dtypes")),
    },
    // Never read from the configuration: a workspace's settings.json must not vouch for itself.
    trusted,
  };
  if (interpreter !== undefined) {
    settings.interpreter = interpreter;
  }
  return settings;
}
