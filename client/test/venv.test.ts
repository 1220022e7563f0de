import * as assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, afterEach, describe, it } from "node:test";
import { Bundle } from "../src/common/bundle";
import { Probe } from "../src/common/python";
import { ensureVenv, staleEntries, stampMatches, venvFailureHint, VenvError, venvLayout, withLock } from "../src/common/venv";

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe("venvLayout", () => {
  it("puts one venv per version under the storage folder", () => {
    assert.deepEqual(venvLayout("/store", "0.1.0", "linux"), {
      folder: path.join("/store", "venv-0.1.0"),
      python: path.join("/store", "venv-0.1.0", "bin", "python"),
      stamp: path.join("/store", "venv-0.1.0", "torchwise-install.json"),
      lock: path.join("/store", "venv-0.1.0") + ".lock",
    });
  });

  it("uses Scripts\\python.exe on Windows", () => {
    assert.equal(venvLayout("/store", "0.1.0", "win32").python, path.join("/store", "venv-0.1.0", "Scripts", "python.exe"));
  });
});

describe("stampMatches", () => {
  const bundle: Bundle = { source: "/s", version: "0.1.0", hash: "abc" };

  it("matches the same version and hash", () => {
    assert.equal(stampMatches({ version: "0.1.0", hash: "abc", basePython: "/usr/bin/python3" }, bundle), true);
  });

  it("rejects another version, another hash, or junk", () => {
    assert.equal(stampMatches({ version: "0.0.9", hash: "abc" }, bundle), false);
    assert.equal(stampMatches({ version: "0.1.0", hash: "def" }, bundle), false);
    for (const junk of [null, undefined, "0.1.0", [], {}]) {
      assert.equal(stampMatches(junk, bundle), false);
    }
  });
});

describe("staleEntries", () => {
  it("lists other versions' venvs and locks, nothing else", () => {
    const current = venvLayout("/store", "0.2.0", "linux");
    const entries = ["venv-0.1.0", "venv-0.1.0.lock", "venv-0.2.0", "venv-0.2.0.lock", "build-x1", "notes.txt"];
    assert.deepEqual(staleEntries(entries, current), ["venv-0.1.0", "venv-0.1.0.lock"]);
  });
});

describe("venvFailureHint", () => {
  it("points Debian users to python3-venv", () => {
    const output = "The virtual environment was not created successfully because ensurepip is not\navailable.";
    assert.equal(venvFailureHint(output.replace("\n", " ")), venvFailureHint("Error: ensurepip is not available"));
    assert.match(venvFailureHint("Error: ensurepip is not available") ?? "", /python3-venv/);
    assert.match(venvFailureHint("/usr/bin/python3: No module named venv") ?? "", /python3-venv/);
  });

  it("recognises network and index failures", () => {
    for (const output of [
      "ERROR: Could not find a version that satisfies the requirement pygls<3,>=2.1",
      "ERROR: No matching distribution found for libcst>=1.1",
      "Failed to establish a new connection: [Errno -3] Temporary failure in name resolution",
      "ProxyError('Cannot connect to proxy.')",
    ]) {
      assert.match(venvFailureHint(output) ?? "", /could not download/, output);
    }
  });

  it("recognises an old Python and a full disk", () => {
    assert.match(venvFailureHint("ERROR: Package 'torchwise' requires a different Python: 3.8.10 not in '>=3.9'") ?? "", /too old/);
    assert.match(venvFailureHint("OSError: [Errno 28] No space left on device") ?? "", /disk is full/);
  });

  it("has nothing to say about anything else", () => {
    assert.equal(venvFailureHint("Segmentation fault"), undefined);
  });
});

describe("withLock", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "torchwise-lock-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const options = { staleMs: 60_000, pollMs: 10 };

  it("runs jobs on the same lock one at a time, and releases it", async () => {
    const lock = path.join(dir, "serial.lock");
    const events: string[] = [];
    const job = (name: string) => async () => {
      events.push(`${name} start`);
      await new Promise((resolve) => setTimeout(resolve, 30));
      events.push(`${name} end`);
      return name;
    };
    let waited = false;
    const results = await Promise.all([
      withLock(lock, job("a"), options),
      withLock(lock, job("b"), { ...options, onWait: () => (waited = true) }),
    ]);
    assert.deepEqual(results, ["a", "b"]);
    assert.deepEqual(events, ["a start", "a end", "b start", "b end"]);
    assert.equal(waited, true);
    assert.equal(existsSync(lock), false);
  });

  it("releases the lock when the job throws", async () => {
    const lock = path.join(dir, "throws.lock");
    await assert.rejects(withLock(lock, () => Promise.reject(new Error("boom")), options), /boom/);
    assert.equal(existsSync(lock), false);
  });

  it("takes over a lock left by a crashed window", async () => {
    const lock = path.join(dir, "stale.lock");
    mkdirSync(lock);
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    assert.equal(await withLock(lock, () => Promise.resolve("ran"), options), "ran");
  });

  it("stops waiting when cancelled", async () => {
    const lock = path.join(dir, "held.lock");
    mkdirSync(lock);
    const controller = new AbortController();
    const waiting = withLock(lock, () => Promise.resolve("ran"), { ...options, signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    await assert.rejects(waiting, (error: unknown) => error instanceof VenvError && error.message === "cancelled");
  });
});

describe("ensureVenv", { skip: process.platform === "win32" && "uses shell scripts as fake interpreters" }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), "torchwise-venv-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => {
    delete process.env.FAKE_PIP_FAIL;
    delete process.env.FAKE_NO_ENSUREPIP;
  });

  const installs = path.join(dir, "installs.log");
  const source = path.join(dir, "source");
  mkdirSync(source);
  writeFileSync(path.join(source, "pyproject.toml"), "[project]\nname = 'torchwise'\n");

  // `python -I -m venv FOLDER` makes FOLDER/bin/python, whose `-I -m pip install DIR` "installs"
  // the version in DIR/VERSION by writing it to FOLDER/installed.
  const basePython = path.join(dir, "python3");
  writeFileSync(
    basePython,
    `#!/bin/sh
[ "$1 $2 $3" = "-I -m venv" ] || exit 9
if [ -n "$FAKE_NO_ENSUREPIP" ]; then echo "Error: ensurepip is not available" >&2; exit 1; fi
mkdir -p "$4/bin"
cat > "$4/bin/python" <<'PY'
#!/bin/sh
[ "$1 $2 $3 $4" = "-I -m pip install" ] || exit 9
test -f "$5/pyproject.toml" || { echo "no project in $5" >&2; exit 1; }
if [ -n "$FAKE_PIP_FAIL" ]; then echo "ERROR: No matching distribution found for pygls<3,>=2.1" >&2; exit 1; fi
mkdir "$5/build"
cp "$5/VERSION" "$(dirname "$0")/../installed"
echo "Successfully installed torchwise-$(cat "$5/VERSION")"
echo x >> "${installs}"
PY
chmod +x "$4/bin/python"
`,
  );
  chmodSync(basePython, 0o755);

  function probe(python: string): Promise<Probe> {
    if (!existsSync(python)) {
      return Promise.resolve({ ok: false, reason: `spawn ${python} ENOENT` });
    }
    const marker = path.join(path.dirname(python), "..", "installed");
    const torchwise = existsSync(marker) ? readFileSync(marker, "utf8").trim() : undefined;
    const torchwiseError = torchwise ? undefined : "ModuleNotFoundError";
    return Promise.resolve({ ok: true, executable: python, python: [3, 11, 0], torchwise, torchwiseError });
  }

  function bundle(version: string, hash = "h1"): Bundle {
    writeFileSync(path.join(source, "VERSION"), version);
    return { source, version, hash, requiresPython: ">=3.9" };
  }

  const storage = path.join(dir, "storage");
  const count = () => (existsSync(installs) ? readFileSync(installs, "utf8").trim().split("\n").length : 0);

  async function ensure(b: Bundle, extra: { cannotCreate?: string } = {}) {
    const reports: string[] = [];
    const python = await ensureVenv({
      storage,
      bundle: b,
      basePython,
      platform: process.platform,
      log: quiet,
      report: (message) => reports.push(message),
      probe,
      ...extra,
    });
    return { python, reports };
  }

  it("makes the venv and installs the bundle on first run", async () => {
    const { python, reports } = await ensure(bundle("0.1.0"));
    assert.equal(python, path.join(storage, "venv-0.1.0", "bin", "python"));
    assert.equal(count(), 1);
    assert.equal(reports.length, 2);
    assert.match(reports[0], /creating a private Python environment/);
    assert.match(reports[1], /installing torchwise 0.1.0/);
    const stamp: unknown = JSON.parse(readFileSync(path.join(storage, "venv-0.1.0", "torchwise-install.json"), "utf8"));
    assert.deepEqual(stamp, { version: "0.1.0", hash: "h1", basePython });
  });

  it("builds a copy: the bundle and the storage stay clean", () => {
    assert.equal(existsSync(path.join(source, "build")), false);
    assert.deepEqual(readdirSync(storage).sort(), ["venv-0.1.0"]);
  });

  it("reuses a current venv without reporting anything", async () => {
    const { reports } = await ensure(bundle("0.1.0"));
    assert.equal(count(), 1);
    assert.deepEqual(reports, []);
  });

  it("reinstalls when the bundled source changes at the same version", async () => {
    await ensure(bundle("0.1.0", "h2"));
    assert.equal(count(), 2);
  });

  it("makes the venv again when it no longer works", async () => {
    rmSync(path.join(storage, "venv-0.1.0", "installed"));
    await ensure(bundle("0.1.0", "h2"));
    assert.equal(count(), 3);
  });

  it("moves to a new folder for a new version and removes the old one", async () => {
    const { python } = await ensure(bundle("0.2.0"));
    assert.equal(python, path.join(storage, "venv-0.2.0", "bin", "python"));
    assert.deepEqual(readdirSync(storage).sort(), ["venv-0.2.0"]);
  });

  it("still uses a current venv when the interpreter could not make one", async () => {
    const { python } = await ensure(bundle("0.2.0"), { cannotCreate: "python3 is Python 3.8" });
    assert.equal(python, path.join(storage, "venv-0.2.0", "bin", "python"));
  });

  it("refuses to make one with an interpreter that cannot", async () => {
    await assert.rejects(ensure(bundle("0.3.0"), { cannotCreate: "python3 is Python 3.8" }), /python3 is Python 3.8/);
    assert.equal(existsSync(path.join(storage, "venv-0.3.0")), false);
  });

  it("explains a failed download, leaves no stamp, and retries next time", async () => {
    process.env.FAKE_PIP_FAIL = "1";
    await assert.rejects(ensure(bundle("0.3.0")), (error: unknown) => {
      assert.ok(error instanceof VenvError);
      assert.match(error.message, /failed \(exit code 1\): ERROR: No matching distribution/);
      assert.match(error.hint ?? "", /could not download/);
      return true;
    });
    assert.equal(existsSync(path.join(storage, "venv-0.3.0", "torchwise-install.json")), false);
    assert.equal(existsSync(path.join(storage, "venv-0.3.0.lock")), false);
    delete process.env.FAKE_PIP_FAIL;
    await ensure(bundle("0.3.0"));
    assert.equal(existsSync(path.join(storage, "venv-0.3.0", "torchwise-install.json")), true);
  });

  it("points to python3-venv when the interpreter has no ensurepip", async () => {
    process.env.FAKE_NO_ENSUREPIP = "1";
    await assert.rejects(ensure(bundle("0.4.0")), (error: unknown) => error instanceof VenvError && /python3-venv/.test(error.hint ?? ""));
  });
});
