// The Python server source the extension ships (dist/python/, written by esbuild.mjs) and the
// version arithmetic that decides whether an installed torchwise is good enough. Free of `vscode`.

import { readFileSync } from "node:fs";
import * as path from "node:path";

/** dist/python/bundle.json. */
export interface Bundle {
  /** The folder to `pip install`: pyproject.toml, README.md, server/torchwise/. */
  source: string;
  /** torchwise.__version__ of the bundled source. */
  version: string;
  /** pyproject's `requires-python`, e.g. ">=3.9". */
  requiresPython?: string;
  /** Digest of the bundled files: a changed source at the same version still reinstalls. */
  hash: string;
}

export const BUNDLE_FOLDER = path.join("dist", "python");

/** Validates bundle.json's content; undefined if it is not what esbuild.mjs writes. */
export function parseBundle(text: string, source: string): Bundle | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof data !== "object" || data === null) {
    return undefined;
  }
  const { version, requiresPython, hash } = data as Record<string, unknown>;
  if (typeof version !== "string" || typeof hash !== "string" || !/^[\w.+-]+$/.test(version)) {
    return undefined;
  }
  return { source, version, hash, requiresPython: typeof requiresPython === "string" ? requiresPython : undefined };
}

/** The bundle inside the extension's folder, or undefined if it is missing or unreadable. */
export function readBundle(extensionPath: string): Bundle | undefined {
  const source = path.join(extensionPath, BUNDLE_FOLDER);
  try {
    return parseBundle(readFileSync(path.join(source, "bundle.json"), "utf8"), source);
  } catch {
    return undefined;
  }
}

interface ParsedVersion {
  release: number[];
  /** dev < pre-release (a, b, rc) < final < post, as in PEP 440. */
  phase: number;
}

const PHASES: [RegExp, number][] = [
  [/^[.-]?dev/, 0],
  [/^[.-]?(a|alpha|b|beta|c|rc|pre|preview)\d*/, 1],
  [/^$/, 2],
  [/^[.-]?(post|rev|r)\d*/, 3],
];

function parseVersion(text: string): ParsedVersion | undefined {
  const match = /^\s*v?(\d+(?:\.\d+)*)(.*?)(?:\+.*)?\s*$/i.exec(text);
  if (!match) {
    return undefined;
  }
  const suffix = match[2].toLowerCase();
  const phase = PHASES.find(([pattern]) => pattern.test(suffix))?.[1] ?? 1;
  return { release: match[1].split(".").map(Number), phase };
}

/**
 * Compares two PEP 440 versions by release numbers, then by phase (0.2.0.dev1 < 0.2.0rc1 <
 * 0.2.0 < 0.2.0.post1); numbers within a phase are not compared. Undefined if either is not a
 * version at all.
 */
export function compareVersions(a: string, b: string): number | undefined {
  const left = parseVersion(a);
  const right = parseVersion(b);
  if (!left || !right) {
    return undefined;
  }
  const length = Math.max(left.release.length, right.release.length);
  for (let i = 0; i < length; i++) {
    const difference = (left.release[i] ?? 0) - (right.release[i] ?? 0);
    if (difference !== 0) {
      return Math.sign(difference);
    }
  }
  return Math.sign(left.phase - right.phase);
}

/** The lowest Python a `requires-python` such as ">=3.9" admits, if it says. */
export function minimumPython(requiresPython: string | undefined): [number, number] | undefined {
  const match = /(?:^|,)\s*>=\s*(\d+)\.(\d+)/.exec(requiresPython ?? "");
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}
