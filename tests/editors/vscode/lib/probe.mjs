// The test side of probe-extension/: asks a question through a request file, waits for the answer.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { waitFor } from "./wait.mjs";

export class Probe {
  #next = 0;

  constructor(dir) {
    this.dir = dir;
    /** Every question and answer, saved next to the screenshots. */
    this.transcript = [];
  }

  async ready() {
    await waitFor("the probe extension to start", () => existsSync(path.join(this.dir, "ready")), { timeout: 120_000 });
  }

  async ask(action, args = {}) {
    const id = `${Date.now()}-${this.#next++}`;
    const request = path.join(this.dir, `${id}.request.json`);
    writeFileSync(`${request}.tmp`, JSON.stringify({ action, args }));
    renameSync(`${request}.tmp`, request);
    const answer = path.join(this.dir, `${id}.response.json`);
    const response = await waitFor(`the probe to answer ${action}`, () =>
      existsSync(answer) && JSON.parse(readFileSync(answer, "utf8")), { interval: 100 });
    this.transcript.push({ action, args, response });
    if (!response.ok) throw new Error(`probe ${action} failed: ${response.error}`);
    return response.result;
  }

  /** Asks again until `accept(result)` holds; returns that result. */
  async until(what, action, args, accept, options) {
    return waitFor(what, async () => {
      const result = await this.ask(action, args);
      return accept(result) ? result : false;
    }, options);
  }
}
