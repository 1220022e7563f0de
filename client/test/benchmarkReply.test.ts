import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { benchmarkReply } from "../src/common/benchmarkReply";

describe("benchmarkReply", () => {
  it("shows a result as information", () => {
    assert.deepEqual(benchmarkReply({ message: "loop 94 ms → vectorized 848 µs (111×)", match: true }), {
      kind: "info",
      message: "torchwise: loop 94 ms → vectorized 848 µs (111×)",
    });
    assert.equal(benchmarkReply({ message: "torchwise: benchmark cancelled" })?.message, "torchwise: benchmark cancelled");
  });

  it("offers another interpreter when this one has no torch", () => {
    for (const error of ["no_torch", "torch_broken", "interpreter_not_found"]) {
      assert.equal(benchmarkReply({ ok: false, error, message: "torch is not installed in /usr/bin/python3" })?.kind, "interpreter");
    }
    assert.equal(benchmarkReply({ ok: false, error: "timeout", message: "stopped after 30 s" })?.kind, "info");
  });

  it("says nothing without a message", () => {
    assert.equal(benchmarkReply(undefined), undefined);
    assert.equal(benchmarkReply({ message: "" }), undefined);
    assert.equal(benchmarkReply("text"), undefined);
  });
});
