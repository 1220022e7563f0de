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
