// Bundles the client into dist/extension.js. `--watch` rebuilds on change, printing the
// "[watch] build started/finished" lines the watch task in .vscode/tasks.json waits for;
// `--production` minifies without a source map (for packaging).
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
