import * as assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { checkTorchwise, chooseInterpreter, configuredInterpreter } from "../src/common/python";

const context = { workspaceFolder: "/work/project", home: "/home/me" };

describe("configuredInterpreter", () => {
  it("uses the effective value in a trusted workspace", () => {
    const setting = { effective: "/ws/.venv/bin/python", user: "/usr/bin/python3" };
    assert.equal(configuredInterpreter(setting, true, context), "/ws/.venv/bin/python");
  });

  it("uses only the user value in an untrusted workspace", () => {
    const setting = { effective: "/ws/evil", user: "/usr/bin/python3" };
    assert.equal(configuredInterpreter(setting, false, context), "/usr/bin/python3");
    assert.equal(configuredInterpreter({ effective: "/ws/evil", user: undefined }, false, context), undefined);
  });

  it("treats empty, blank and non-string values as unset", () => {
    for (const value of ["", "   ", undefined, null, 3, ["python"]]) {
      assert.equal(configuredInterpreter({ effective: value, user: value }, true, context), undefined);
    }
  });

  it("expands ~, ${userHome} and ${workspaceFolder}", () => {
    const expand = (value: string) => configuredInterpreter({ effective: value, user: value }, true, context);
    assert.equal(expand("~/venv/bin/python"), "/home/me/venv/bin/python");
    assert.equal(expand("${userHome}/venv/bin/python"), "/home/me/venv/bin/python");
    assert.equal(expand("${workspaceFolder}/.venv/bin/python"), "/work/project/.venv/bin/python");
    assert.equal(expand("  /usr/bin/python3  "), "/usr/bin/python3");
  });

  it("resolves relative paths against the workspace but leaves bare names for PATH", () => {
    const expand = (value: string) => configuredInterpreter({ effective: value, user: value }, true, context);
    assert.equal(expand(".venv/bin/python"), path.resolve("/work/project", ".venv/bin/python"));
    assert.equal(expand("python3.11"), "python3.11");
    const noFolder = configuredInterpreter({ effective: ".venv/bin/python", user: "" }, true, { home: "/home/me" });
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

describe("checkTorchwise", { skip: process.platform === "win32" && "uses shell scripts as fake interpreters" }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), "torchwise-test-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function fakePython(name: string, body: string): string {
    const file = path.join(dir, name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, 0o755);
    return file;
  }

  it("reports the version when torchwise imports", async () => {
    const python = fakePython("good", 'test "$1" = -c || exit 3\necho 0.1.0');
    assert.deepEqual(await checkTorchwise(python), { ok: true, version: "0.1.0" });
  });

  it("reports the last line of stderr when the import fails", async () => {
    const python = fakePython(
      "missing",
      'echo "Traceback (most recent call last):" >&2\necho "ModuleNotFoundError: No module named \'torchwise\'" >&2\nexit 1',
    );
    assert.deepEqual(await checkTorchwise(python), {
      ok: false,
      reason: "ModuleNotFoundError: No module named 'torchwise'",
    });
  });

  it("reports an interpreter that does not exist", async () => {
    const result = await checkTorchwise(path.join(dir, "nowhere"));
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.reason : "", /ENOENT/);
  });

  it("gives up on an interpreter that hangs", async () => {
    const python = fakePython("hangs", "exec sleep 30");
    const result = await checkTorchwise(python, 200);
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.reason : "", /did not answer within 0.2 s/);
  });
});
