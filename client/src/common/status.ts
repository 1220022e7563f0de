// What the status bar item says about the server. Free of `vscode` so that it can be unit-tested;
// `statusBar.ts` puts it on screen.

export type ServerState =
  | { kind: "starting"; detail?: string }
  | { kind: "ready"; version?: string; how: string }
  | { kind: "error"; message: string }
  | { kind: "stopped" };

export interface StatusView {
  text: string;
  tooltip: string;
  /** Drawn with the error background. */
  error: boolean;
}

const CLICK = "Click to show the torchwise log.";

export function describeStatus(state: ServerState): StatusView {
  switch (state.kind) {
    case "starting":
      return {
        text: "$(loading~spin) torchwise",
        tooltip: `torchwise: ${state.detail ?? "starting the server"}…\n\n${CLICK}`,
        error: false,
      };
    case "ready": {
      const version = state.version ? ` ${state.version}` : "";
      return { text: "$(check) torchwise", tooltip: `torchwise${version} is running (${state.how}).\n\n${CLICK}`, error: false };
    }
    case "error":
      return { text: "$(error) torchwise", tooltip: `torchwise is not running: ${state.message}\n\n${CLICK}`, error: true };
    case "stopped":
      return { text: "$(circle-slash) torchwise", tooltip: `torchwise is stopped.\n\n${CLICK}`, error: false };
  }
}

/** The active file does not parse (`torchwise/parseStatus`): where, and Python's message. */
export interface ParseProblem {
  /** 0-based, as LSP. */
  line: number;
  character: number;
  message: string;
}

/**
 * The status bar while the active file does not parse: it says so and names the line (a click goes
 * there), since diagnostics, hovers, inlay hints and the benchmark lens then show only what was known
 * of the last text that parsed. Only when the server is ready: its own state comes first.
 */
export function describeParseProblem(state: ServerState, problem: ParseProblem | undefined): StatusView {
  const base = describeStatus(state);
  if (!problem || state.kind !== "ready") {
    return base;
  }
  const line = problem.line + 1;
  return {
    text: `$(warning) torchwise: line ${line} does not parse`,
    tooltip:
      `torchwise: this file does not parse at line ${line}, column ${problem.character + 1}: ${problem.message}.\n` +
      "Until it does, diagnostics are those of the last text that parsed, and hovers, inlay hints and benchmark " +
      `lenses answer on the lines unchanged since.\n\nClick to go to line ${line}.`,
    error: false,
  };
}

/** What `torchwise/parseStatus` carries; anything else is ignored. */
export function readParseStatus(params: unknown): { uri: string; problem: ParseProblem | undefined } | undefined {
  if (typeof params !== "object" || params === null) {
    return undefined;
  }
  const { uri, ok, line, character, message } = params as Record<string, unknown>;
  if (typeof uri !== "string" || typeof ok !== "boolean") {
    return undefined;
  }
  if (ok) {
    return { uri, problem: undefined };
  }
  if (typeof line !== "number" || line < 0) {
    return undefined;
  }
  return {
    uri,
    problem: {
      line,
      character: typeof character === "number" && character >= 0 ? character : 0,
      message: typeof message === "string" ? message : "syntax error",
    },
  };
}
