// What the web SDK's node tests share: waiting for a condition, the events a client heard, a typed refusal.
import assert from "node:assert/strict";
import { LanyardError } from "../lanyard.js";

/** The events a client's listener heard, in order. */
export function record(made) {
  const heard = [];
  made.onAuthStateChange((event, session, details) => heard.push({ event, user: session?.user?.id ?? null, details }));
  return heard;
}

/** Polls `check` every 50 ms until it answers something truthy, which it returns; fails naming `what`. */
export async function until(check, what, timeout = 10_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Expects `promise` to fail with the catalogue's `code`; answers the error. */
export async function rejects(promise, code) {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof LanyardError, `a LanyardError, got ${error}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}`);
}
