// Asks the torchwise server (outside any editor) what it advertises, over a bare LSP handshake.
import { spawn } from "node:child_process";
import { waitFor } from "./wait.mjs";

function frame(message) {
  const body = JSON.stringify({ jsonrpc: "2.0", ...message });
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** The server's `executeCommandProvider.commands`. */
export async function advertisedCommands(python) {
  const server = spawn(python, ["-m", "torchwise", "lsp"], { stdio: ["pipe", "pipe", "inherit"] });
  let received = Buffer.alloc(0);
  server.stdout.on("data", (chunk) => (received = Buffer.concat([received, chunk])));
  server.stdin.write(frame({ id: 1, method: "initialize", params: { processId: process.pid, rootUri: null, capabilities: {} } }));
  try {
    const result = await waitFor("the server's initialize result", () => {
      const text = received.toString("utf8");
      const start = text.indexOf("\r\n\r\n");
      const length = Number(/Content-Length: (\d+)/.exec(text)?.[1]);
      if (start < 0 || Buffer.byteLength(text.slice(start + 4)) < length) return false;
      return JSON.parse(Buffer.from(text.slice(start + 4)).subarray(0, length).toString("utf8")).result;
    }, { timeout: 30_000, interval: 50 });
    return result.capabilities.executeCommandProvider?.commands ?? [];
  } finally {
    server.stdin.write(frame({ id: 2, method: "shutdown" }));
    server.stdin.end(frame({ method: "exit" }));
    setTimeout(() => server.kill(), 5_000).unref();
  }
}
