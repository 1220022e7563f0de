// Starts, stops and restarts the language client. Every start and stop goes through one queue,
// so a settings change arriving during a start never leaves two servers running. Which server
// runs is decided in `resolve.ts`; the private venv is made in `venv.ts`.

import { mkdirSync } from "node:fs";
import * as os from "node:os";
import {
  CancellationToken,
  commands,
  Disposable,
  LogOutputChannel,
  ProgressLocation,
  Uri,
  window,
  workspace,
  WorkspaceFolder,
} from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import { Bundle, readBundle } from "./bundle";
import { checkServerExecutable, chooseInterpreter, configuredExecutable, Interpreter, Probe, probeInterpreter } from "./python";
import { activeInterpreter, hasPythonExtension } from "./pythonExtension";
import { cannotCreateVenv, chooseServer } from "./resolve";
import { readServerSettings, ServerSettings } from "./settings";
import { benchmarkReply } from "./benchmarkReply";
import { ParseProblem, readParseStatus } from "./status";
import { ServerStatus } from "./statusBar";
import { ensureVenv, VenvError } from "./venv";

/**
 * The server's command (spec: arguments `[uri, line]`, 0-based line of the loop). The palette
 * command has the same id, and the language client registers every id the server advertises,
 * failing to start if the id is taken; so this class registers a fallback only while no server
 * that advertises it is running.
 */
export const BENCHMARK_COMMAND = "torchwise.benchmarkLoop";
export const SHOW_LOGS_COMMAND = "torchwise.showLogs";

const UNTRUSTED_BENCHMARK = "torchwise does not run benchmarks in an untrusted workspace: they execute its code.";
const SECTION = "torchwise";

function mainFolder(): WorkspaceFolder | undefined {
  return workspace.workspaceFolders?.[0];
}

function configuredSetting(name: "interpreter" | "serverPath", folder: WorkspaceFolder | undefined): string | undefined {
  const config = workspace.getConfiguration(SECTION, folder?.uri);
  return configuredExecutable(
    { effective: config.get(name), user: config.inspect(name)?.globalValue },
    workspace.isTrusted,
    { workspaceFolder: folder?.uri.fsPath, home: os.homedir() },
  );
}

/** The expanded `torchwise.interpreter` value that applies here, if any. */
export function configuredPath(folder = mainFolder()): string | undefined {
  return configuredSetting("interpreter", folder);
}

async function findInterpreter(folder: WorkspaceFolder | undefined, log: LogOutputChannel): Promise<Interpreter> {
  const configured = configuredPath(folder);
  // In an untrusted workspace the selected environment may be the workspace's own `.venv`:
  // running it would execute a binary the workspace controls, so only `python3` remains.
  const pythonExtension =
    configured || !workspace.isTrusted ? undefined : await activeInterpreter(folder?.uri, log);
  return chooseInterpreter({ configured, pythonExtension, platform: process.platform });
}

function describeProbe(probe: Probe): string {
  if (!probe.ok) {
    return `does not run: ${probe.reason}`;
  }
  const torchwise = probe.torchwise ? `torchwise ${probe.torchwise}` : `no torchwise (${probe.torchwiseError ?? "?"})`;
  return `${probe.executable}, Python ${probe.python.join(".")}, ${torchwise}`;
}

/** Where the extension keeps its private venv, and what it needs to know to run the server. */
export interface ExtensionPaths {
  extensionPath: string;
  /** `context.globalStorageUri.fsPath`. */
  storage: string;
}

/** A start that cannot go on; `message` is for the user, with the ways out offered next to it. */
class StartFailure extends Error {}

export class TorchwiseServer implements Disposable {
  private client: LanguageClient | undefined;
  private queue: Promise<void> = Promise.resolve();
  private fallback: Disposable | undefined;
  /** Sent to the server as `settings.interpreter`; see `ServerSettings.interpreter`. */
  private interpreter: string | undefined;
  /** Files that do not parse right now (`torchwise/parseStatus`), by `Uri.toString()`. */
  private readonly parseProblems = new Map<string, ParseProblem>();
  private readonly activeEditorWatch: Disposable;

  constructor(
    private readonly paths: ExtensionPaths,
    private readonly log: LogOutputChannel,
    private readonly status: ServerStatus,
  ) {
    this.registerFallback();
    this.activeEditorWatch = window.onDidChangeActiveTextEditor(() => this.showParseProblem());
  }

  /** The status bar's parse problem: the active file's, if it does not parse. */
  private showParseProblem(): void {
    const uri = window.activeTextEditor?.document.uri.toString();
    this.status.setParseProblem(uri === undefined ? undefined : this.parseProblems.get(uri));
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
    this.activeEditorWatch.dispose();
    void this.stop().then(() => this.releaseFallback());
  }

  private enqueue(job: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(job).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      this.log.error(`torchwise server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      this.status.set({ kind: "error", message });
    });
    return this.queue;
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.parseProblems.clear();
    this.showParseProblem();
    if (client) {
      // dispose() also stops it, and keeps the client from restarting a server it thinks crashed.
      await client.dispose().catch((error: unknown) => this.log.warn(`Stopping the server: ${String(error)}`));
      this.status.set({ kind: "stopped" });
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

  /** The settings the server gets for a scope (a folder or file), `settings.interpreter` included. */
  private settingsFor(scope?: Uri): ServerSettings {
    return readServerSettings(workspace.getConfiguration(SECTION, scope), this.interpreter, workspace.isTrusted);
  }

  private async startClient(): Promise<void> {
    this.status.set({ kind: "starting" });
    try {
      await this.startServer();
    } catch (error) {
      if (!(error instanceof StartFailure)) {
        throw error;
      }
      this.log.error(error.message);
      this.status.set({ kind: "error", message: error.message });
      // Not awaited: the queue must not wait for the user to answer.
      void this.offerWaysOut(error.message);
    }
  }

  private async startServer(): Promise<void> {
    const folder = mainFolder();
    // The workspace folder, where pyenv's shims read `.python-version`, if trusted; else a folder
    // of ours, as `python -m` puts its working folder first on sys.path.
    mkdirSync(this.paths.storage, { recursive: true });
    const cwd = workspace.isTrusted && folder?.uri.scheme === "file" ? folder.uri.fsPath : this.paths.storage;

    const python = await findInterpreter(folder, this.log);
    const probe = await probeInterpreter(python.path, { cwd });
    this.log.info(`Python interpreter: ${python.path} (from ${python.source}): ${describeProbe(probe)}`);
    this.interpreter = probe.ok ? probe.executable : python.path;

    const bundle = readBundle(this.paths.extensionPath);
    const serverPath = configuredSetting("serverPath", folder);
    const choice = chooseServer({ serverPath, interpreter: python.path, probe, bundle });

    let command: string;
    let args: string[];
    let how: string;
    let version: string | undefined;
    switch (choice.kind) {
      case "command": {
        ({ command, args } = choice);
        version = choice.version;
        if (choice.source === "serverPath") {
          const check = await checkServerExecutable(choice.command, { cwd });
          if (!check.ok) {
            throw new StartFailure(`torchwise.serverPath ${choice.command} does not run: ${check.reason}`);
          }
          version = check.version;
          how = `torchwise.serverPath ${choice.command}`;
        } else {
          how = `in ${choice.command}`;
        }
        break;
      }
      case "venv": {
        if (choice.note) {
          this.log.info(`${choice.note}: using the private environment.`);
        }
        command = await this.setUpVenv(choice.bundle, python.path, probe);
        // -I: the private venv alone, whatever PYTHONPATH or the user's site-packages hold.
        args = ["-I", "-m", "torchwise", "lsp"];
        version = choice.bundle.version;
        how = `private environment; benchmarks in ${this.interpreter}`;
        break;
      }
      case "none":
        throw new StartFailure(`Cannot start the torchwise server: ${choice.reason}`);
    }
    this.log.info(`Starting the server: ${command} ${args.join(" ")} (${how})`);
    await this.startLanguageClient({ command, args, options: { cwd, env: { ...process.env } } }, version, how);
  }

  /** The private venv's python, made or updated first if need be, with a progress notification. */
  private async setUpVenv(bundle: Bundle, interpreter: string, probe: Probe): Promise<string> {
    const progress = new LazyProgress("torchwise: setting up the server");
    try {
      return await ensureVenv({
        storage: this.paths.storage,
        bundle,
        basePython: probe.ok ? probe.executable : interpreter,
        platform: process.platform,
        log: this.log,
        report: (message) => {
          this.status.set({ kind: "starting", detail: message });
          progress.report(message);
        },
        probe: (venvPython) => probeInterpreter(venvPython, { cwd: this.paths.storage }),
        cannotCreate: cannotCreateVenv(interpreter, probe, bundle),
        signal: progress.signal,
      });
    } catch (error) {
      if (error instanceof VenvError) {
        if (progress.signal.aborted) {
          throw new StartFailure("Setting up the torchwise server was cancelled. Run \"torchwise: Restart Server\" to try again.");
        }
        const hint = error.hint ? ` ${error.hint}` : "";
        throw new StartFailure(`Could not set up the torchwise server's environment: ${error.message}.${hint}`);
      }
      throw error;
    } finally {
      progress.done();
    }
  }

  private async startLanguageClient(serverOptions: ServerOptions, version: string | undefined, how: string): Promise<void> {
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
        // Python cells of any notebook: the server's notebookDocumentSync then gets the whole
        // notebook (its cells analysed in order as one module), and hovers and code actions work
        // in cells too.
        { notebook: "*", language: "python" },
      ],
      outputChannel: this.log,
      initializationOptions: { settings: this.settingsFor() },
      // Sends workspace/didChangeConfiguration whenever a torchwise.* setting changes (and once
      // after start); the middleware below replaces the raw section with the typed settings.
      synchronize: { configurationSection: SECTION },
      middleware: {
        // Calls from the palette, code lenses and code actions all pass here.
        executeCommand: (command, args, next) =>
          command === BENCHMARK_COMMAND ? this.benchmark(args) : (next(command, args) as unknown),
        workspace: {
          // Read without a folder, like the initialization options: in a multi-root workspace,
          // folder values reach the server only if it asks (workspace/configuration, below).
          didChangeConfiguration: async (sections) => {
            const settings = sections === undefined ? null : { [SECTION]: this.settingsFor() };
            await this.client?.sendNotification(DidChangeConfigurationNotification.type, { settings });
          },
          // A server asking for the "torchwise" section of a folder or file gets the same typed
          // settings as above, for that scope; other sections are answered as usual.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers; // a ResponseError
            }
            return params.items.map((item, i): unknown => {
              if (item.section !== SECTION) {
                return answers[i];
              }
              const scope = item.scopeUri ? this.client?.protocol2CodeConverter.asUri(item.scopeUri) : undefined;
              return this.settingsFor(scope);
            });
          },
        },
      },
    };
    // The id "torchwise" makes the client read `torchwise.trace.server`.
    const client = new LanguageClient("torchwise", "torchwise", serverOptions, clientOptions);
    this.client = client;
    client.onNotification("torchwise/parseStatus", (params: unknown) => {
      const status = readParseStatus(params);
      if (this.client !== client || status === undefined) {
        return;
      }
      const key = client.protocol2CodeConverter.asUri(status.uri).toString();
      if (status.problem) {
        this.parseProblems.set(key, status.problem);
      } else {
        this.parseProblems.delete(key);
      }
      this.showParseProblem();
    });
    client.onDidChangeState(({ newState }) => {
      if (this.client !== client) {
        return; // stopped on purpose
      }
      if (newState === State.Running) {
        this.status.set({ kind: "ready", version, how });
      } else if (newState === State.Starting) {
        this.status.set({ kind: "starting" });
      } else {
        this.status.set({ kind: "error", message: "the server stopped; see the log." });
      }
    });
    this.releaseFallback();
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      throw new StartFailure(`The torchwise server did not start: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      const advertised = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
      if (this.client !== client || !advertised.includes(BENCHMARK_COMMAND)) {
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
        const reply = benchmarkReply(result);
        if (reply?.kind === "interpreter") {
          // An interpreter without torch: say so, with the way to pick another next to it.
          void this.offerInterpreter(reply.message);
        } else if (reply) {
          void window.showInformationMessage(reply.message);
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

  /** The benchmark's interpreter cannot run it (no torch): a warning with "Select Interpreter". */
  private async offerInterpreter(message: string): Promise<void> {
    const select = "Select Interpreter";
    const logs = "Show Logs";
    const choice = await window.showWarningMessage(message, select, logs);
    if (choice === select) {
      await this.selectInterpreter();
    } else if (choice === logs) {
      this.log.show();
    }
  }

  private async selectInterpreter(): Promise<void> {
    // The setting wins over the Python extension, so only change the interpreter there if unset.
    // Either change restarts the server with the new interpreter (see extension.ts).
    if (configuredPath() === undefined && hasPythonExtension()) {
      await commands.executeCommand("python.setInterpreter");
    } else {
      await commands.executeCommand("workbench.action.openSettings", "torchwise.interpreter");
    }
  }

  private async offerWaysOut(message: string): Promise<void> {
    const logs = "Show Logs";
    const select = "Select Interpreter";
    const serverPath = "Set Server Path";
    const choice = await window.showErrorMessage(message, logs, select, serverPath);
    if (choice === logs) {
      this.log.show();
    } else if (choice === select) {
      await this.selectInterpreter();
    } else if (choice === serverPath) {
      await commands.executeCommand("workbench.action.openSettings", "torchwise.serverPath");
    }
  }
}

/**
 * A progress notification that appears only when first reported to: reusing a ready venv takes
 * one Python start, and must not flash a notification at every start. Cancel aborts `signal`.
 */
class LazyProgress {
  private readonly controller = new AbortController();
  private reportTo: ((message: string) => void) | undefined;
  private finish: (() => void) | undefined;
  private finished = false;

  constructor(private readonly title: string) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  report(message: string): void {
    if (this.finished) {
      return;
    }
    if (!this.reportTo) {
      void window.withProgress(
        { location: ProgressLocation.Notification, title: this.title, cancellable: true },
        (progress, token: CancellationToken) => {
          token.onCancellationRequested(() => this.controller.abort());
          this.reportTo = (text) => progress.report({ message: text });
          return new Promise<void>((resolve) => (this.finish = resolve));
        },
      );
    }
    // withProgress calls its task synchronously, so reportTo is set by now.
    this.reportTo?.(message);
  }

  done(): void {
    this.finished = true;
    this.finish?.();
  }
}
