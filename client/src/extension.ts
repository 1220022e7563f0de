import { commands, ExtensionContext, Position, Range, Selection, TextEditorRevealType, window, workspace } from "vscode";
import { onDidChangeActiveInterpreter } from "./common/pythonExtension";
import { configuredPath, SHOW_LOGS_COMMAND, TorchwiseServer } from "./common/server";
import { ParseProblem } from "./common/status";
import { GO_TO_PARSE_ERROR_COMMAND, ServerStatus } from "./common/statusBar";

let server: TorchwiseServer | undefined;

export function activate(context: ExtensionContext): void {
  const log = window.createOutputChannel("torchwise", { log: true });
  const status = new ServerStatus(SHOW_LOGS_COMMAND);
  server = new TorchwiseServer(
    { extensionPath: context.extensionPath, storage: context.globalStorageUri.fsPath },
    log,
    status,
  );
  const running = server;
  context.subscriptions.push(
    log,
    status,
    running,
    commands.registerCommand("torchwise.restart", () => running.restart()),
    commands.registerCommand(SHOW_LOGS_COMMAND, () => log.show()),
    // The status bar's "line N does not parse": the cursor goes there.
    commands.registerCommand(GO_TO_PARSE_ERROR_COMMAND, (problem: ParseProblem | undefined) => {
      const editor = window.activeTextEditor;
      if (editor && problem) {
        const at = editor.document.validatePosition(new Position(problem.line, problem.character));
        editor.selection = new Selection(at, at);
        editor.revealRange(new Range(at, at), TextEditorRevealType.InCenterIfOutsideViewport);
      }
    }),
    // torchwise.benchmarkLoop belongs to the server; see BENCHMARK_COMMAND.
    // Other torchwise settings reach the running server as workspace/didChangeConfiguration.
    workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("torchwise.interpreter") || event.affectsConfiguration("torchwise.serverPath")) {
        void running.restart();
      }
    }),
    // Trust lets the workspace's torchwise.interpreter and torchwise.serverPath apply, and the restarted
    // server learns it from its initializationOptions (settings.trusted): the benchmark may then run.
    workspace.onDidGrantWorkspaceTrust(() => void running.restart()),
  );
  // Not awaited: activating the Python extension must not hold up ours. The interpreter matters
  // even with torchwise.serverPath set: the benchmark runs there.
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
