import * as assert from "node:assert/strict";
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { checkServerExecutable, chooseInterpreter, configuredExecutable, parseProbe, probeInterpreter } from "../src/common/python";

const context = { workspaceFolder: "/work/project", home: "/home/me" };

describe("configuredExecutable", () => {
  it("uses the effective value in a trusted workspace", () => {
    const setting = { effective: "/ws/.venv/bin/python", user: "/usr/bin/python3" };
    assert.equal(configuredExecutable(setting, true, context), "/ws/.venv/bin/python");
  });

  it("uses only the user value in an untrusted workspace", () => {
    const setting = { effective: "/ws/evil", user: "/usr/bin/python3" };
    assert.equal(configuredExecutable(setting, false, context), "/usr/bin/python3");
    assert.equal(configuredExecutable({ effective: "/ws/evil", user: undefined }, false, context), undefined);
  });

  it("treats empty, blank and non-string values as unset", () => {
    for (const value of ["", "   ", undefined, null, 3, ["python"]]) {
      assert.equal(configuredExecutable({ effective: value, user: value }, true, context), undefined);
    }
  });

  it("expands ~, ${userHome} and ${workspaceFolder}", () => {
    const expand = (value: string) => configuredExecutable({ effective: value, user: value }, true, context);
    assert.equal(expand("~/venv/bin/python"), "/home/me/venv/bin/python");
    assert.equal(expand("${userHome}/venv/bin/python"), "/home/me/venv/bin/python");
    assert.equal(expand("${workspaceFolder}/.venv/bin/python"), "/work/project/.venv/bin/python");
    assert.equal(expand("  /usr/bin/python3  "), "/usr/bin/python3");
  });

  it("resolves relative paths against the workspace but leaves bare names for PATH", () => {
    const expand = (value: string) => configuredExecutable({ effective: value, user: value }, true, context);
    assert.equal(expand(".venv/bin/python"), path.resolve("/work/project", ".venv/bin/python"));
    assert.equal(expand("python3.11"), "python3.11");
    const noFolder = configuredExecutable({ effective: ".venv/bin/python", user: "" }, true, { home: "/home/me" });
    assert.equal(noFolder, ".venv/bin/python");
  });
});

describe("chooseInterpreter", () => {
  it("prefers the setting over the Python extension", () => {
    assert.deepEqual(
      chooseInterpreter({ configured: "/opt/py", pythonExtension: "/ws/.venv/bin/python", platform: "linux" }),
      { path: "/opt/py", source: "setting" },
    );
  });

  it("uses the Python extension's environment when there is no setting", () => {
    assert.deepEqual(chooseInterpreter({ pythonExtension: "/ws/.venv/bin/python", platform: "linux" }), {
      path: "/ws/.venv/bin/python",
      source: "python-extension",
    });
  });

  it("falls back to python3 on PATH, python on Windows", () => {
    assert.deepEqual(chooseInterpreter({ platform: "linux" }), { path: "python3", source: "path" });
    assert.deepEqual(chooseInterpreter({ platform: "darwin" }), { path: "python3", source: "path" });
    assert.deepEqual(chooseInterpreter({ platform: "win32" }), { path: "python", source: "path" });
  });

  it("ignores empty strings", () => {
    assert.deepEqual(chooseInterpreter({ configured: "", pythonExtension: "", platform: "linux" }), {
      path: "python3",
      source: "path",
    });
  });
});

describe("parseProbe", () => {
  it("reads the last line, as a sitecustomize may print before it", () => {
    const stdout = 'hello from sitecustomize\n{"executable": "/v/bin/python", "python": [3, 11, 7], "torchwise": "0.1.0"}\n';
    assert.deepEqual(parseProbe(stdout, "python3"), {
      ok: true,
      executable: "/v/bin/python",
      python: [3, 11, 7],
      torchwise: "0.1.0",
      torchwiseError: undefined,
    });
  });

  it("keeps the import error when torchwise is missing", () => {
    const stdout = JSON.stringify({ executable: "/usr/bin/python3", python: [3, 9, 2], torchwiseError: "ModuleNotFoundError: x" });
    const probe = parseProbe(stdout, "python3");
    assert.equal(probe.ok && probe.torchwise, undefined);
    assert.equal(probe.ok && probe.torchwiseError, "ModuleNotFoundError: x");
  });

  it("falls back to the given path when sys.executable is empty", () => {
    const probe = parseProbe(JSON.stringify({ executable: "", python: [3, 12, 0] }), "/opt/py");
    assert.equal(probe.ok && probe.executable, "/opt/py");
  });

  it("fails on output that is not the probe's", () => {
    for (const stdout of ["", "Python 2.7.18", '{"python": "3.11"}', '{"python": [3, 11]}']) {
      assert.equal(parseProbe(stdout, "python").ok, false, stdout);
    }
  });
});

describe("probeInterpreter and checkServerExecutable", { skip: process.platform === "win32" && "uses shell scripts as fake interpreters" }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), "torchwise-test-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function fake(name: string, body: string): string {
    const file = path.join(dir, name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, 0o755);
    return file;
  }

  it("reports the interpreter, its version and torchwise's", async () => {
    const python = fake("good", `test "$1" = -I && test "$2" = -c || exit 3\necho '{"executable": "/real/python", "python": [3, 10, 1], "torchwise": "0.1.0"}'`);
    assert.deepEqual(await probeInterpreter(python), {
      ok: true,
      executable: "/real/python",
      python: [3, 10, 1],
      torchwise: "0.1.0",
      torchwiseError: undefined,
    });
  });

  it("runs the probe in the given folder", async () => {
    const python = fake("cwd", `echo "{\\"executable\\": \\"$(pwd)\\", \\"python\\": [3, 12, 0]}"`);
    const probe = await probeInterpreter(python, { cwd: dir });
    assert.equal(probe.ok && probe.executable, realpathSync(dir));
  });

  it("reports the last line of stderr when the interpreter fails", async () => {
    const python = fake("broken", 'echo "Traceback (most recent call last):" >&2\necho "SyntaxError: invalid syntax" >&2\nexit 1');
    assert.deepEqual(await probeInterpreter(python), { ok: false, reason: "SyntaxError: invalid syntax" });
  });

  it("reports an interpreter that does not exist", async () => {
    const result = await probeInterpreter(path.join(dir, "nowhere"));
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.reason : "", /ENOENT/);
  });

  it("gives up on an interpreter that hangs", async () => {
    const python = fake("hangs", "exec sleep 30");
    const result = await probeInterpreter(python, { timeoutMs: 200 });
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.reason : "", /did not answer within 0.2 s/);
  });

  it("reads the version a torchwise executable prints", async () => {
    const torchwise = fake("torchwise", 'test "$1" = --version || exit 2\necho "torchwise 0.3.0"');
    assert.deepEqual(await checkServerExecutable(torchwise), { ok: true, version: "0.3.0" });
    const other = fake("other", 'echo "something 1.0"');
    assert.deepEqual(await checkServerExecutable(other), { ok: true, version: undefined });
  });

  it("reports a torchwise executable that fails or is missing", async () => {
    const failing = fake("failing", 'echo "ImportError: cannot import name x" >&2\nexit 1');
    assert.deepEqual(await checkServerExecutable(failing), { ok: false, reason: "ImportError: cannot import name x" });
    const missing = await checkServerExecutable(path.join(dir, "nowhere"));
    assert.match(!missing.ok ? missing.reason : "", /ENOENT/);
  });
});
