// The probe and the server run isolated: a workspace's own `json.py`, `typing.py`, `asyncio.py` or
// `pygls.py` (a cloned repository may hold any of them) must never run when the extension starts.
// These tests start the real interpreter and the real server, in such a workspace.

import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { probeInterpreter } from "../src/common/python";
import { chooseServer } from "../src/common/resolve";

// The development venv (`make setup`) has torchwise; without it there is nothing to start.
const PYTHON = path.resolve(process.platform === "win32" ? ".venv/Scripts/python.exe" : ".venv/bin/python");
const SHADOWED = ["json", "typing", "asyncio", "pygls", "lsprotocol", "enum", "re", "site", "sitecustomize", "torchwise"];

/** A workspace whose modules, if imported, leave a marker file and break the import. */
function poisonedWorkspace(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "torchwise-poisoned-"));
  for (const name of SHADOWED) {
    const marker = JSON.stringify(path.join(dir, `RAN-${name}`));
    writeFileSync(path.join(dir, `${name}.py`), `open(${marker}, "w").close()\nraise SystemExit("workspace ${name}.py ran")\n`);
  }
  return dir;
}

function markers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith("RAN-"));
}

/** One LSP request over stdio, in Content-Length framing; the first response's JSON. */
function initialize(command: string, args: string[], cwd: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let out = Buffer.alloc(0);
    let err = "";
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`no answer to initialize within 30 s; stderr: ${err}`));
    }, 30_000);
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      out = Buffer.concat([out, chunk]);
      const end = out.indexOf("\r\n\r\n");
      const length = /Content-Length: (\d+)/i.exec(out.subarray(0, Math.max(end, 0)).toString("ascii"));
      if (end < 0 || !length || out.length < end + 4 + Number(length[1])) {
        return;
      }
      clearTimeout(timer);
      child.kill();
      resolve(JSON.parse(out.subarray(end + 4, end + 4 + Number(length[1])).toString("utf8")) as Record<string, unknown>);
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (out.length === 0) {
        reject(new Error(`the server exited with ${code} before answering; stderr: ${err}`));
      }
    });
    const request = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { processId: null, rootUri: null, capabilities: {} } });
    child.stdin.write(`Content-Length: ${Buffer.byteLength(request)}\r\n\r\n${request}`);
  });
}

describe("a workspace's modules never run at start", { skip: !existsSync(PYTHON) && "no .venv (make setup)" }, () => {
  const workspace = poisonedWorkspace();
  after(() => rmSync(workspace, { recursive: true, force: true }));

  it("the interpreter probe ignores them", async () => {
    const probe = await probeInterpreter(PYTHON, { cwd: workspace });
    assert.equal(probe.ok, true, JSON.stringify(probe));
    assert.ok(probe.ok && probe.torchwise, `torchwise not found: ${JSON.stringify(probe)}`);
    assert.deepEqual(markers(workspace), []);
  });

  it("the server started from the user's interpreter ignores them", async () => {
    const probe = await probeInterpreter(PYTHON, { cwd: workspace });
    const choice = chooseServer({ interpreter: PYTHON, probe });
    assert.equal(choice.kind, "command");
    if (choice.kind !== "command") {
      return;
    }
    const answer = await initialize(choice.command, choice.args, workspace);
    assert.equal((answer.result as { serverInfo?: { name?: string } }).serverInfo?.name, "torchwise");
    assert.deepEqual(markers(workspace), []);
  });
});
