// Bundles the client into dist/extension.js. `--watch` rebuilds on change, printing the
// "[watch] build started/finished" lines the watch task in .vscode/tasks.json waits for;
// `--production` minifies without a source map (for packaging).
//
// Every build also copies the Python package's source into dist/python/ (the VSIX ships it: the
// extension pip-installs it into a private venv on first run, see client/src/common/venv.ts) with
// dist/python/bundle.json describing it. Watch mode copies it once, at start.
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import * as esbuild from "esbuild";

const watch = process.argv.includes("--watch");
const production = process.argv.includes("--production");

/** @type {import("esbuild").Plugin} */
const reportProblems = {
  name: "report-problems",
  setup(build) {
    build.onStart(() => {
      if (watch) console.log("[watch] build started");
    });
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) console.error(`    ${location.file}:${location.line}:${location.column + 1}:`);
      }
      if (watch) console.log("[watch] build finished");
    });
  },
};

const PYTHON_OUT = "dist/python";
// What `pip install dist/python` needs: pyproject.toml names README.md as the readme and finds
// the package under server/.
const PYTHON_FILES = ["pyproject.toml", "README.md", "LICENSE"];

/** Bytecode and build leftovers would only bloat the VSIX and go stale. */
function isSource(file) {
  const name = path.basename(file);
  return name !== "__pycache__" && !name.endsWith(".pyc") && !name.endsWith(".egg-info");
}

function filesUnder(folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(folder, path.join(entry.parentPath ?? entry.path, entry.name)).split(path.sep).join("/"))
    .sort();
}

function bundlePython() {
  rmSync(PYTHON_OUT, { recursive: true, force: true });
  mkdirSync(PYTHON_OUT, { recursive: true });
  for (const file of PYTHON_FILES) cpSync(file, path.join(PYTHON_OUT, file));
  cpSync("server/torchwise", path.join(PYTHON_OUT, "server/torchwise"), { recursive: true, filter: isSource });

  const version = /^__version__\s*=\s*["']([^"']+)["']/m.exec(readFileSync("server/torchwise/__init__.py", "utf8"))?.[1];
  if (!version) throw new Error("server/torchwise/__init__.py has no __version__");
  const requiresPython = /^requires-python\s*=\s*["']([^"']+)["']/m.exec(readFileSync("pyproject.toml", "utf8"))?.[1];
  // The extension reinstalls its private venv when this changes, even at the same version.
  const hash = createHash("sha256");
  for (const file of filesUnder(PYTHON_OUT)) {
    hash.update(`${file}\0`).update(readFileSync(path.join(PYTHON_OUT, file))).update("\0");
  }
  const bundle = { version, requiresPython, hash: hash.digest("hex").slice(0, 16) };
  writeFileSync(path.join(PYTHON_OUT, "bundle.json"), `${JSON.stringify(bundle, null, 2)}\n`);
}

try {
  bundlePython();
} catch (error) {
  console.error(`✘ [ERROR] bundling the Python server: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const context = await esbuild.context({
  entryPoints: ["client/src/extension.ts"],
  outfile: "dist/extension.js",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18",
  external: ["vscode"],
  sourcemap: !production,
  minify: production,
  logLevel: "silent",
  plugins: [reportProblems],
});

if (watch) {
  await context.watch();
} else {
  const result = await context.rebuild().catch(() => undefined);
  await context.dispose();
  if (!result || result.errors.length > 0) process.exit(1);
}
