import { commands, ExtensionContext, window, workspace } from "vscode";
import { onDidChangeActiveInterpreter } from "./common/pythonExtension";
import { configuredPath, TorchwiseServer } from "./common/server";

let server: TorchwiseServer | undefined;

export function activate(context: ExtensionContext): void {
  const log = window.createOutputChannel("torchwise", { log: true });
  server = new TorchwiseServer(log);
  const running = server;
  context.subscriptions.push(
    log,
    running,
    commands.registerCommand("torchwise.restart", () => running.restart()),
    commands.registerCommand("torchwise.showLogs", () => log.show()),
    // torchwise.benchmarkLoop belongs to the server; see BENCHMARK_COMMAND.
    // Other torchwise settings reach the running server as workspace/didChangeConfiguration.
    workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("torchwise.interpreter")) {
        void running.restart();
      }
    }),
    // Trust lets the workspace's torchwise.interpreter apply.
    workspace.onDidGrantWorkspaceTrust(() => void running.restart()),
  );
  // Not awaited: activating the Python extension must not hold up ours.
  void onDidChangeActiveInterpreter(() => {
    if (configuredPath() === undefined) {
      void running.restart();
    }
  }, log).then((subscription) => context.subscriptions.push(subscription));
  void running.restart();
}

export function deactivate(): Promise<void> | undefined {
  return server?.stop();
}
