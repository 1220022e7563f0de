// Every wait in these tests is on a condition, with a deadline and a message that says what.
import { setTimeout as sleep } from "node:timers/promises";

export const ROUND_TRIP_MS = 60_000; // one editor round trip is 15-35 s on a loaded 2-core machine

/** Polls `condition` until it returns a truthy value, which it returns; throws after `timeout` ms. */
export async function waitFor(what, condition, { timeout = ROUND_TRIP_MS, interval = 250 } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${detail})`);
    }
    await sleep(interval);
  }
}
