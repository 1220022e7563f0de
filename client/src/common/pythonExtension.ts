// The Python extension's (ms-python.python) environments API, used only if it is installed.
// Typed by hand for the few members we call; every step may fail or be missing.

import { Disposable, Event, extensions, LogOutputChannel, Uri } from "vscode";

export const PYTHON_EXTENSION_ID = "ms-python.python";

interface EnvironmentPath {
  id: string;
  path: string;
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: Uri): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath | string): Promise<{ executable: { uri?: Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: Event<unknown>;
  };
}

export function hasPythonExtension(): boolean {
  return extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

async function pythonApi(): Promise<PythonExtensionApi | undefined> {
  const extension = extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!extension) {
    return undefined;
  }
  return extension.isActive ? extension.exports : await extension.activate();
}

/** The executable of the environment the user selected in the Python extension, if any. */
export async function activeInterpreter(resource: Uri | undefined, log: LogOutputChannel): Promise<string | undefined> {
  try {
    const environments = (await pythonApi())?.environments;
    if (!environments) {
      return undefined;
    }
    const environment = await environments.resolveEnvironment(environments.getActiveEnvironmentPath(resource));
    return environment?.executable.uri?.fsPath;
  } catch (error) {
    log.warn(`Could not ask the Python extension for its interpreter: ${String(error)}`);
    return undefined;
  }
}

/** Calls `listener` when the user selects another interpreter in the Python extension. */
export async function onDidChangeActiveInterpreter(listener: () => unknown, log: LogOutputChannel): Promise<Disposable> {
  try {
    const event = (await pythonApi())?.environments?.onDidChangeActiveEnvironmentPath;
    if (event) {
      return event(listener);
    }
  } catch (error) {
    log.warn(`Could not follow the Python extension's interpreter: ${String(error)}`);
  }
  return Disposable.from();
}
