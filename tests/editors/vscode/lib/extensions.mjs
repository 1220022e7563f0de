// Puts our extension (and the test-only probe) into a fresh --extensions-dir.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import * as path from "node:path";
import { CODE_SERVER, PROBE_EXTENSION, ROOT } from "./paths.mjs";

function manifest(folder) {
  return JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8"));
}

/** VS Code's folder name for an unpacked extension. */
function folderName({ publisher, name, version }) {
  return `${publisher}.${name}-${version}`;
}

function npm(...args) {
  execFileSync("npm", args, { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
}

/** The VSIX that `npm run package` made just now, if the project has that script. */
function packageVsix() {
  if (!manifest(ROOT).scripts?.package) return undefined;
  const started = Date.now();
  npm("run", "package");
  const made = [ROOT, path.join(ROOT, "dist")]
    .flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith(".vsix")).map((f) => path.join(dir, f)))
    .filter((file) => statSync(file).mtimeMs >= started - 1_000);
  if (made.length !== 1) throw new Error(`npm run package made ${made.length} .vsix files: ${made.join(", ")}`);
  return made[0];
}

/**
 * Installs torchwise into `extensionsDir`: the VSIX when the project can package one (what users
 * get), else the freshly built folder linked in place. Returns how it was installed.
 */
export function installExtensions(extensionsDir, env) {
  // The probe goes in first: installing a VSIX writes extensions.json from the folders present
  // then, and VS Code drops any folder that is missing from it.
  symlinkSync(PROBE_EXTENSION, path.join(extensionsDir, folderName(manifest(PROBE_EXTENSION))));
  const vsix = packageVsix();
  let how;
  if (vsix) {
    execFileSync(CODE_SERVER, ["--extensions-dir", extensionsDir, "--install-extension", vsix], { env, stdio: "inherit" });
    how = `VSIX ${path.relative(ROOT, vsix)}`;
  } else {
    npm("run", "build");
    symlinkSync(ROOT, path.join(extensionsDir, folderName(manifest(ROOT))));
    how = "linked repository folder (npm run build; no `npm run package` script)";
  }
  return how;
}
