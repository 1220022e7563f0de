import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigReader, readServerSettings, ServerSettings } from "../src/common/settings";

function reader(values: Record<string, unknown>): ConfigReader {
  return { get: (section) => values[section] };
}

const DEFAULTS: ServerSettings = {
  select: [],
  ignore: [],
  severity: {},
  benchmark: { device: "auto", timeLimit: 30 },
  inlayHints: { shapes: true, dtypes: true },
  trusted: false,
};

describe("readServerSettings", () => {
  it("gives the defaults when nothing is set", () => {
    assert.deepEqual(readServerSettings(reader({})), DEFAULTS);
  });

  it("passes valid values through", () => {
    const settings = readServerSettings(
      reader({
        select: ["TW1", "TW201"],
        ignore: ["TW3"],
        severity: { TW201: "off", TW101: "hint" },
        "benchmark.device": "cuda",
        "benchmark.timeLimit": 5.5,
        "inlayHints.shapes": false,
        "inlayHints.dtypes": false,
      }),
    );
    assert.deepEqual(settings, {
      select: ["TW1", "TW201"],
      ignore: ["TW3"],
      severity: { TW201: "off", TW101: "hint" },
      benchmark: { device: "cuda", timeLimit: 5.5 },
      inlayHints: { shapes: false, dtypes: false },
      trusted: false,
    });
  });

  it("says whether the workspace is trusted, from VS Code's trust only", () => {
    assert.equal(readServerSettings(reader({}), undefined, true).trusted, true);
    // A workspace's own settings.json cannot vouch for itself.
    assert.equal(readServerSettings(reader({ trusted: true }), undefined, false).trusted, false);
    assert.equal(readServerSettings(reader({ trusted: true })).trusted, false);
  });

  it("falls back to the defaults for values of the wrong type", () => {
    const settings = readServerSettings(
      reader({
        select: "TW1",
        ignore: { TW3: true },
        severity: ["TW201"],
        "benchmark.device": "tpu",
        "benchmark.timeLimit": "30",
        "inlayHints.shapes": "no",
        "inlayHints.dtypes": 0,
      }),
    );
    assert.deepEqual(settings, DEFAULTS);
  });

  it("falls back for null values", () => {
    const settings = readServerSettings(
      reader({ select: null, ignore: null, severity: null, "benchmark.device": null, "benchmark.timeLimit": null }),
    );
    assert.deepEqual(settings, DEFAULTS);
  });

  it("drops list items that are not strings", () => {
    const settings = readServerSettings(reader({ select: ["TW1", 2, null, "TW2"], ignore: [["TW3"]] }));
    assert.deepEqual(settings.select, ["TW1", "TW2"]);
    assert.deepEqual(settings.ignore, []);
  });

  it("drops severity entries outside the enum", () => {
    const settings = readServerSettings(reader({ severity: { TW1: "warning", TW2: "fatal", TW3: 1, TW4: null } }));
    assert.deepEqual(settings.severity, { TW1: "warning" });
  });

  it("raises a time limit below one second to one and rejects non-finite ones", () => {
    assert.equal(readServerSettings(reader({ "benchmark.timeLimit": 0 })).benchmark.timeLimit, 1);
    assert.equal(readServerSettings(reader({ "benchmark.timeLimit": -4 })).benchmark.timeLimit, 1);
    assert.equal(readServerSettings(reader({ "benchmark.timeLimit": Number.NaN })).benchmark.timeLimit, 30);
    assert.equal(readServerSettings(reader({ "benchmark.timeLimit": Infinity })).benchmark.timeLimit, 30);
  });

  it("survives a JSON round trip unchanged, as initializationOptions must", () => {
    const settings = readServerSettings(reader({ select: ["TW1"], severity: { TW2: "error" } }));
    assert.deepEqual(JSON.parse(JSON.stringify(settings)), settings);
  });
});

describe("readServerSettings with the interpreter", () => {
  it("adds the interpreter for the benchmark only when given", () => {
    assert.equal("interpreter" in readServerSettings(reader({})), false);
    assert.deepEqual(readServerSettings(reader({ interpreter: "${workspaceFolder}/x" }), "/home/me/.venv/bin/python"), {
      ...DEFAULTS,
      interpreter: "/home/me/.venv/bin/python",
    });
  });
});
