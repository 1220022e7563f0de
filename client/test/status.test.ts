import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeStatus } from "../src/common/status";

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
