// Starts code-server on a free 127.0.0.1 port with throwaway user, extension and XDG folders.
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import * as path from "node:path";
import { CODE_SERVER } from "./paths.mjs";
import { waitFor } from "./wait.mjs";

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Fresh folders under `home`, and the environment that keeps code-server inside them. */
export function sandbox(home, extraEnv = {}) {
  const dirs = {
    userData: path.join(home, "user-data"),
    extensions: path.join(home, "extensions"),
    xdgConfig: path.join(home, "xdg-config"),
    xdgData: path.join(home, "xdg-data"),
    xdgCache: path.join(home, "xdg-cache"),
    xdgState: path.join(home, "xdg-state"),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_CACHE_HOME: dirs.xdgCache,
    XDG_STATE_HOME: dirs.xdgState,
    ...extraEnv,
  };
  return { dirs, env };
}

export function writeUserSettings(userDataDir, settings) {
  const folder = path.join(userDataDir, "User");
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "settings.json"), JSON.stringify(settings, null, 2));
}

/** Returns { url, stop } once code-server says it listens; its output goes to `logFile`. */
export async function startCodeServer({ dirs, env, workspace, logFile }) {
  const port = await freePort();
  const args = [
    "--bind-addr", `127.0.0.1:${port}`,
    "--auth", "none",
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--user-data-dir", dirs.userData,
    "--extensions-dir", dirs.extensions,
    workspace,
  ];
  const child = spawn(CODE_SERVER, args, { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const log = createWriteStream(logFile);
  let output = "";
  for (const stream of [child.stdout, child.stderr]) {
    stream.on("data", (chunk) => {
      output += chunk;
      log.write(chunk);
    });
  }
  let exited;
  child.on("exit", (code, signal) => (exited = `code-server exited (${code ?? signal}); see ${logFile}`));
  await waitFor("code-server to listen", () => {
    if (exited) throw new Error(exited);
    return output.includes("HTTP server listening");
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // Its own process group: the extension host and our language server go with it.
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      return;
    }
    await waitFor("code-server to stop", () => child.exitCode !== null || child.signalCode !== null, { timeout: 20_000 })
      .catch(() => process.kill(-child.pid, "SIGKILL"));
    log.end();
  };
  return { url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`, stop };
}
