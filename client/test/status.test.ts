import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeParseProblem, describeStatus, readParseStatus } from "../src/common/status";

describe("describeStatus", () => {
  it("spins while starting, with what is being done", () => {
    const view = describeStatus({ kind: "starting", detail: "installing torchwise 0.1.0" });
    assert.equal(view.text, "$(loading~spin) torchwise");
    assert.match(view.tooltip, /^torchwise: installing torchwise 0.1.0…/);
    assert.equal(view.error, false);
    assert.match(describeStatus({ kind: "starting" }).tooltip, /starting the server/);
  });

  it("says which server runs when ready", () => {
    const view = describeStatus({ kind: "ready", version: "0.1.0", how: "in /usr/bin/python3" });
    assert.deepEqual(view, {
      text: "$(check) torchwise",
      tooltip: "torchwise 0.1.0 is running (in /usr/bin/python3).\n\nClick to show the torchwise log.",
      error: false,
    });
    assert.match(describeStatus({ kind: "ready", how: "x" }).tooltip, /^torchwise is running \(x\)/);
  });

  it("marks errors, with the reason", () => {
    const view = describeStatus({ kind: "error", message: "no Python" });
    assert.equal(view.text, "$(error) torchwise");
    assert.match(view.tooltip, /not running: no Python/);
    assert.equal(view.error, true);
  });

  it("always offers the log", () => {
    for (const kind of ["starting", "stopped"] as const) {
      assert.match(describeStatus({ kind }).tooltip, /Click to show the torchwise log/);
    }
  });
});

describe("describeParseProblem", () => {
  const ready = { kind: "ready", version: "0.1.0", how: "x" } as const;

  it("names the line that does not parse, and a click goes there", () => {
    const view = describeParseProblem(ready, { line: 11, character: 4, message: "invalid syntax" });
    assert.equal(view.text, "$(warning) torchwise: line 12 does not parse");
    assert.match(view.tooltip, /line 12, column 5: invalid syntax/);
    assert.match(view.tooltip, /Click to go to line 12/);
    assert.equal(view.error, false);
  });

  it("leaves the server's own state first", () => {
    assert.deepEqual(describeParseProblem(ready, undefined), describeStatus(ready));
    const problem = { line: 0, character: 0, message: "x" };
    assert.deepEqual(describeParseProblem({ kind: "error", message: "no Python" }, problem),
      describeStatus({ kind: "error", message: "no Python" }));
  });

  it("reads the notification, ignoring what does not fit", () => {
    assert.deepEqual(readParseStatus({ uri: "file:///a.py", ok: false, line: 3, character: 2, message: "m" }), {
      uri: "file:///a.py",
      problem: { line: 3, character: 2, message: "m" },
    });
    assert.deepEqual(readParseStatus({ uri: "file:///a.py", ok: true }), { uri: "file:///a.py", problem: undefined });
    assert.equal(readParseStatus({ uri: "file:///a.py", ok: false }), undefined);
    assert.equal(readParseStatus(null), undefined);
    assert.equal(readParseStatus({ ok: true }), undefined);
  });
});
