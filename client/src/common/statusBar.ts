// The status bar item: the server's state at a glance; a click shows the log.

import { Disposable, StatusBarAlignment, StatusBarItem, ThemeColor, window } from "vscode";
import { describeStatus, ServerState } from "./status";

export class ServerStatus implements Disposable {
  private readonly item: StatusBarItem;

  constructor(showLogsCommand: string) {
    this.item = window.createStatusBarItem("torchwise.status", StatusBarAlignment.Right, 100);
    this.item.name = "torchwise";
    this.item.command = showLogsCommand;
    this.set({ kind: "starting" });
    this.item.show();
  }

  set(state: ServerState): void {
    const view = describeStatus(state);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.error ? new ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
