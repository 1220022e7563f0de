import * as assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { BUNDLE_FOLDER, compareVersions, minimumPython, parseBundle, readBundle } from "../src/common/bundle";

describe("parseBundle", () => {
  it("reads what esbuild.mjs writes", () => {
    const text = JSON.stringify({ version: "0.1.0", requiresPython: ">=3.9", hash: "abc" });
    assert.deepEqual(parseBundle(text, "/ext/dist/python"), {
      source: "/ext/dist/python",
      version: "0.1.0",
      requiresPython: ">=3.9",
      hash: "abc",
    });
  });

  it("rejects broken or incomplete manifests", () => {
    for (const text of ["", "{", "null", "[]", '{"version": "0.1.0"}', '{"hash": "x"}', '{"version": 1, "hash": "x"}']) {
      assert.equal(parseBundle(text, "/s"), undefined, text);
    }
  });

  it("rejects a version that would make a strange folder name", () => {
    assert.equal(parseBundle(JSON.stringify({ version: "../../x", hash: "h" }), "/s"), undefined);
    assert.equal(parseBundle(JSON.stringify({ version: "0.1.0 beta", hash: "h" }), "/s"), undefined);
  });
});

describe("readBundle", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "torchwise-bundle-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("finds dist/python/bundle.json under the extension", () => {
    mkdirSync(path.join(dir, BUNDLE_FOLDER), { recursive: true });
    writeFileSync(path.join(dir, BUNDLE_FOLDER, "bundle.json"), JSON.stringify({ version: "0.2.0", hash: "h" }));
    assert.deepEqual(readBundle(dir), {
      source: path.join(dir, BUNDLE_FOLDER),
      version: "0.2.0",
      hash: "h",
      requiresPython: undefined,
    });
  });

  it("gives undefined when the extension has no bundle", () => {
    assert.equal(readBundle(path.join(dir, "nowhere")), undefined);
  });
});

describe("compareVersions", () => {
  it("compares release numbers, padding with zeros", () => {
    assert.equal(compareVersions("0.1.0", "0.1.0"), 0);
    assert.equal(compareVersions("0.1", "0.1.0"), 0);
    assert.equal(compareVersions("0.2.0", "0.1.9"), 1);
    assert.equal(compareVersions("0.10.0", "0.9.0"), 1);
    assert.equal(compareVersions("1.0.0", "1.0.1"), -1);
  });

  it("orders dev < pre-release < final < post", () => {
    assert.equal(compareVersions("0.2.0.dev1", "0.2.0"), -1);
    assert.equal(compareVersions("0.2.0rc1", "0.2.0"), -1);
    assert.equal(compareVersions("0.2.0.dev0", "0.2.0a1"), -1);
    assert.equal(compareVersions("0.2.0.post1", "0.2.0"), 1);
    assert.equal(compareVersions("0.2.0.dev3", "0.1.0"), 1);
  });

  it("ignores local versions and a leading v", () => {
    assert.equal(compareVersions("0.1.0+editable", "0.1.0"), 0);
    assert.equal(compareVersions("v0.1.0", "0.1.0"), 0);
  });

  it("gives undefined for something that is not a version", () => {
    assert.equal(compareVersions("unknown", "0.1.0"), undefined);
    assert.equal(compareVersions("0.1.0", ""), undefined);
  });
});

describe("minimumPython", () => {
  it("reads the lower bound of requires-python", () => {
    assert.deepEqual(minimumPython(">=3.9"), [3, 9]);
    assert.deepEqual(minimumPython(">= 3.10, <4"), [3, 10]);
    assert.deepEqual(minimumPython("<4, >=3.11"), [3, 11]);
  });

  it("gives undefined when there is none", () => {
    assert.equal(minimumPython(undefined), undefined);
    assert.equal(minimumPython("~=3.9"), undefined);
  });
});
