// Starts, stops and restarts the language client. Every start and stop goes through one queue,
// so a settings change arriving during a start never leaves two servers running.

import * as os from "node:os";
import { commands, Disposable, LogOutputChannel, ProgressLocation, window, workspace, WorkspaceFolder } from "vscode";
import { ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import { checkTorchwise, chooseInterpreter, configuredInterpreter, Interpreter } from "./python";
import { activeInterpreter, hasPythonExtension } from "./pythonExtension";
import { readServerSettings } from "./settings";

/**
 * The server's command (spec: arguments `[uri, line]`, 0-based line of the loop). The palette
 * command has the same id, and the language client registers every id the server advertises,
 * failing to start if the id is taken; so this class registers a fallback only while no server
 * that advertises it is running.
 */
export const BENCHMARK_COMMAND = "torchwise.benchmarkLoop";

const UNTRUSTED_BENCHMARK = "torchwise does not run benchmarks in an untrusted workspace: they execute its code.";

function mainFolder(): WorkspaceFolder | undefined {
  return workspace.workspaceFolders?.[0];
}

/** The expanded `torchwise.interpreter` value that applies here, if any. */
export function configuredPath(folder = mainFolder()): string | undefined {
  const config = workspace.getConfiguration("torchwise", folder?.uri);
  return configuredInterpreter(
    { effective: config.get("interpreter"), user: config.inspect("interpreter")?.globalValue },
    workspace.isTrusted,
    { workspaceFolder: folder?.uri.fsPath, home: os.homedir() },
  );
}

async function findInterpreter(folder: WorkspaceFolder | undefined, log: LogOutputChannel): Promise<Interpreter> {
  const configured = configuredPath(folder);
  // In an untrusted workspace the selected environment may be the workspace's own `.venv`:
  // running it would execute a binary the workspace controls, so only `python3` remains.
  const pythonExtension =
    configured || !workspace.isTrusted ? undefined : await activeInterpreter(folder?.uri, log);
  return chooseInterpreter({ configured, pythonExtension, platform: process.platform });
}

export class TorchwiseServer implements Disposable {
  private client: LanguageClient | undefined;
  private queue: Promise<void> = Promise.resolve();
  private fallback: Disposable | undefined;

  constructor(private readonly log: LogOutputChannel) {
    this.registerFallback();
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.stopClient();
      await this.startClient();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.stopClient());
  }

  dispose(): void {
    void this.stop().then(() => this.releaseFallback());
  }

  private enqueue(job: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(job).catch((error: unknown) => {
      this.log.error(`torchwise server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    });
    return this.queue;
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      // dispose() also stops it, and keeps the client from restarting a server it thinks crashed.
      await client.dispose().catch((error: unknown) => this.log.warn(`Stopping the server: ${String(error)}`));
    }
    this.registerFallback();
  }

  private registerFallback(): void {
    this.fallback ??= commands.registerCommand(BENCHMARK_COMMAND, () => {
      const message = workspace.isTrusted ? "torchwise: the server is not running or cannot benchmark loops yet." : UNTRUSTED_BENCHMARK;
      void window.showInformationMessage(message);
    });
  }

  private releaseFallback(): void {
    this.fallback?.dispose();
    this.fallback = undefined;
  }

  private async startClient(): Promise<void> {
    const folder = mainFolder();
    const python = await findInterpreter(folder, this.log);
    this.log.info(`Python interpreter: ${python.path} (from ${python.source})`);

    const check = await checkTorchwise(python.path);
    if (!check.ok) {
      this.log.error(`Cannot import torchwise with ${python.path}: ${check.reason}`);
      // Not awaited: the queue must not wait for the user to answer.
      void this.offerInstall(python);
      return;
    }
    this.log.info(`torchwise ${check.version}`);

    const serverOptions: ServerOptions = {
      command: python.path,
      args: ["-m", "torchwise", "lsp"],
      // The whole environment goes through, TORCHWISE_DEBUGPY included.
      options: { cwd: folder?.uri.fsPath, env: { ...process.env } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
      ],
      outputChannel: this.log,
      // Read without a folder, as the client reads them for workspace/didChangeConfiguration;
      // per-folder values reach the server only if it asks with workspace/configuration.
      initializationOptions: { settings: readServerSettings(workspace.getConfiguration("torchwise")) },
      synchronize: { configurationSection: "torchwise" },
      middleware: {
        // Calls from the palette, code lenses and code actions all pass here.
        executeCommand: (command, args, next) =>
          command === BENCHMARK_COMMAND ? this.benchmark(args) : (next(command, args) as unknown),
      },
    };
    // The id "torchwise" makes the client read `torchwise.trace.server`.
    const client = new LanguageClient("torchwise", "torchwise", serverOptions, clientOptions);
    this.client = client;
    this.releaseFallback();
    try {
      await client.start();
    } finally {
      const advertised = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
      if (!advertised.includes(BENCHMARK_COMMAND)) {
        this.registerFallback();
      }
    }
  }

  private async benchmark(args: unknown[]): Promise<unknown> {
    const client = this.client;
    if (!workspace.isTrusted) {
      void window.showWarningMessage(UNTRUSTED_BENCHMARK);
      return undefined;
    }
    const editor = window.activeTextEditor;
    let target = args;
    // A code lens passes `[uri, line]`; from the palette, the loop is the one at the cursor.
    if (target.length === 0 && client && editor?.document.languageId === "python") {
      target = [client.code2ProtocolConverter.asUri(editor.document.uri), editor.selection.active.line];
    }
    if (!client || target.length === 0) {
      void window.showInformationMessage("torchwise: put the cursor on a loop in a Python file first.");
      return undefined;
    }
    const title = "torchwise: benchmarking the loop";
    return window.withProgress({ location: ProgressLocation.Notification, title, cancellable: true }, async (_, token) => {
      try {
        // Sent directly rather than through `next` so that Cancel reaches the server.
        const result: unknown = await client.sendRequest(
          ExecuteCommandRequest.type,
          { command: BENCHMARK_COMMAND, arguments: target },
          token,
        );
        if (typeof result === "object" && result !== null && "message" in result && typeof result.message === "string") {
          void window.showInformationMessage(`torchwise: ${result.message}`);
        }
        return result;
      } catch (error) {
        if (!token.isCancellationRequested) {
          this.log.error(`Benchmark failed: ${String(error)}`);
          void window.showErrorMessage(`torchwise: the benchmark failed: ${String(error)}`);
        }
        return undefined;
      }
    });
  }

  private async offerInstall(python: Interpreter): Promise<void> {
    const install = "Install torchwise";
    const select = "Select Interpreter";
    const logs = "Show Logs";
    const choice = await window.showErrorMessage(`torchwise is not installed in ${python.path}.`, install, select, logs);
    if (choice === install) {
      // The terminal runs pip itself, not a shell, so no path needs quoting for any shell.
      const terminal = window.createTerminal({
        name: "torchwise: install",
        shellPath: python.path,
        shellArgs: ["-m", "pip", "install", "torchwise"],
      });
      const closed = window.onDidCloseTerminal((closedTerminal) => {
        if (closedTerminal === terminal) {
          closed.dispose();
          if (closedTerminal.exitStatus?.code === 0) {
            void this.restart();
          }
        }
      });
      terminal.show();
    } else if (choice === select) {
      // The setting wins over the Python extension, so only change the interpreter there if unset.
      if (python.source !== "setting" && hasPythonExtension()) {
        await commands.executeCommand("python.setInterpreter");
      } else {
        await commands.executeCommand("workbench.action.openSettings", "torchwise.interpreter");
      }
    } else if (choice === logs) {
      this.log.show();
    }
  }
}
