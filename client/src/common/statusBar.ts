// The status bar item: the server's state at a glance; a click shows the log. While the active file
// does not parse, it says so and a click goes to the line.

import { Disposable, StatusBarAlignment, StatusBarItem, ThemeColor, window } from "vscode";
import { describeParseProblem, ParseProblem, ServerState } from "./status";

export const GO_TO_PARSE_ERROR_COMMAND = "torchwise.goToParseError";

export class ServerStatus implements Disposable {
  private readonly item: StatusBarItem;
  private state: ServerState = { kind: "starting" };
  private problem: ParseProblem | undefined;

  constructor(private readonly showLogsCommand: string) {
    this.item = window.createStatusBarItem("torchwise.status", StatusBarAlignment.Right, 100);
    this.item.name = "torchwise";
    this.item.command = showLogsCommand;
    this.set({ kind: "starting" });
    this.item.show();
  }

  set(state: ServerState): void {
    this.state = state;
    this.render();
  }

  /** The active file's parse problem, or undefined when it parses (or is not torchwise's). */
  setParseProblem(problem: ParseProblem | undefined): void {
    this.problem = problem;
    this.render();
  }

  private render(): void {
    const view = describeParseProblem(this.state, this.problem);
    const showsProblem = this.problem !== undefined && this.state.kind === "ready";
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.error
      ? new ThemeColor("statusBarItem.errorBackground")
      : showsProblem
        ? new ThemeColor("statusBarItem.warningBackground")
        : undefined;
    this.item.command = showsProblem
      ? { title: "Go to the line that does not parse", command: GO_TO_PARSE_ERROR_COMMAND, arguments: [this.problem] }
      : this.showLogsCommand;
  }

  dispose(): void {
    this.item.dispose();
  }
}
