// What the editor says after a benchmark. Free of `vscode` so that it can be unit-tested.

/** Errors that another interpreter fixes: the benchmark runs in the user's Python, with its torch. */
const INTERPRETER_ERRORS = new Set(["no_torch", "torch_broken", "interpreter_not_found"]);

export type BenchmarkReply =
  | { kind: "info"; message: string }
  /** Shown as a warning with "Select Interpreter" (and the log) next to it. */
  | { kind: "interpreter"; message: string };

export function benchmarkReply(result: unknown): BenchmarkReply | undefined {
  if (typeof result !== "object" || result === null) {
    return undefined;
  }
  const { message, error } = result as Record<string, unknown>;
  if (typeof message !== "string" || message === "") {
    return undefined;
  }
  const text = message.startsWith("torchwise") ? message : `torchwise: ${message}`;
  if (typeof error === "string" && INTERPRETER_ERRORS.has(error)) {
    return { kind: "interpreter", message: text };
  }
  return { kind: "info", message: text };
}
