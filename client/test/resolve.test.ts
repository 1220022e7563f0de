import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Bundle } from "../src/common/bundle";
import { Probe } from "../src/common/python";
import { cannotCreateVenv, chooseServer } from "../src/common/resolve";

const bundle: Bundle = { source: "/ext/dist/python", version: "0.2.0", requiresPython: ">=3.9", hash: "h" };

function probe(torchwise?: string, python: [number, number, number] = [3, 11, 4]): Probe {
  return { ok: true, executable: "/home/me/.venv/bin/python", python, torchwise, torchwiseError: torchwise ? undefined : "ModuleNotFoundError" };
}

const broken: Probe = { ok: false, reason: "spawn python3 ENOENT" };

describe("chooseServer", () => {
  it("1. prefers torchwise.serverPath over everything, whatever its version", () => {
    for (const p of [probe("0.3.0"), probe(), broken]) {
      assert.deepEqual(chooseServer({ serverPath: "/opt/tw/bin/torchwise", interpreter: "python3", probe: p, bundle }), {
        kind: "command",
        command: "/opt/tw/bin/torchwise",
        args: ["lsp"],
        source: "serverPath",
      });
    }
  });

  it("2. uses the user's interpreter when its torchwise is at least the bundled one", () => {
    for (const version of ["0.2.0", "0.3.0", "0.2.1.dev0", "1.0.0"]) {
      assert.deepEqual(chooseServer({ interpreter: "python3", probe: probe(version), bundle }), {
        kind: "command",
        command: "/home/me/.venv/bin/python",
        args: ["-I", "-m", "torchwise", "lsp"],
        source: "interpreter",
        version,
      });
    }
  });

  it("2. also when the installed version cannot be compared", () => {
    const choice = chooseServer({ interpreter: "python3", probe: probe("unknown"), bundle });
    assert.equal(choice.kind === "command" && choice.source, "interpreter");
  });

  it("3. falls back to the private venv when the interpreter's torchwise is older", () => {
    const choice = chooseServer({ interpreter: "python3", probe: probe("0.1.0"), bundle });
    assert.deepEqual(choice, { kind: "venv", bundle, note: "python3 has torchwise 0.1.0, older than the bundled 0.2.0" });
  });

  it("3. uses the private venv when the interpreter has no torchwise, or does not run", () => {
    assert.deepEqual(chooseServer({ interpreter: "python3", probe: probe(), bundle }), { kind: "venv", bundle, note: undefined });
    // The venv may already exist; whether it can be made is decided later (cannotCreateVenv).
    assert.deepEqual(chooseServer({ interpreter: "python3", probe: broken, bundle }), { kind: "venv", bundle, note: undefined });
  });

  it("4. says why when nothing works", () => {
    const missing = chooseServer({ interpreter: "python3", probe: probe() });
    assert.equal(missing.kind, "none");
    assert.match(missing.kind === "none" ? missing.reason : "", /torchwise is not installed in python3, and .* lacks its bundled server/);
    const notRunning = chooseServer({ interpreter: "python3", probe: broken });
    assert.match(notRunning.kind === "none" ? notRunning.reason : "", /python3 does not run: spawn python3 ENOENT/);
  });

  it("2. without a bundle, any installed torchwise will do", () => {
    const choice = chooseServer({ interpreter: "python3", probe: probe("0.0.1") });
    assert.equal(choice.kind === "command" && choice.source, "interpreter");
  });
});

describe("cannotCreateVenv", () => {
  it("accepts a Python at or above requires-python", () => {
    assert.equal(cannotCreateVenv("python3", probe(undefined, [3, 9, 0]), bundle), undefined);
    assert.equal(cannotCreateVenv("python3", probe(undefined, [4, 0, 0]), bundle), undefined);
  });

  it("refuses an old Python, naming both versions", () => {
    assert.equal(
      cannotCreateVenv("python3", probe(undefined, [3, 8, 18]), bundle),
      "torchwise needs Python 3.9 or newer; python3 is Python 3.8.18",
    );
    assert.match(cannotCreateVenv("python", probe(undefined, [2, 7, 18]), bundle) ?? "", /Python 2.7.18/);
  });

  it("refuses an interpreter that does not run", () => {
    assert.equal(cannotCreateVenv("python3", broken, bundle), "the Python interpreter python3 does not run: spawn python3 ENOENT");
  });

  it("does not check the version when the bundle does not say", () => {
    assert.equal(cannotCreateVenv("python3", probe(undefined, [3, 6, 0]), { ...bundle, requiresPython: undefined }), undefined);
  });
});
