// The SDK's parts that need no server: the event-stream parser, the memory storage, the nonce, the error class.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createClient, createNonce, EventStreamParser, LanyardError, MemoryStorage } from "../lanyard.js";

test("the event-stream parser reads events split anywhere, with any line end, comments and retry", () => {
  const stream = ": hello\r\nretry: 2000\r\n\r\nevent: change\nid: 42\ndata: {\"id\":\"a\",\ndata: \"v\":1}\n\n"
    + "event: ready\rdata: {\"cursor\":\"42\"}\r\r: heartbeat\n\nevent: end\ndata: {\"reason\":\"token_expired\"}\n\n";
  for (let size = 1; size <= stream.length; size += 3) {
    const parser = new EventStreamParser();
    const events = [];
    for (let at = 0; at < stream.length; at += size) events.push(...parser.feed(stream.slice(at, at + size)));
    assert.deepEqual(events, [
      { event: "change", id: "42", data: "{\"id\":\"a\",\n\"v\":1}" },
      { event: "ready", id: null, data: "{\"cursor\":\"42\"}" },
      { event: "end", id: null, data: "{\"reason\":\"token_expired\"}" },
    ], `pieces of ${size}`);
  }
});

test("a nonce is random, and its hash is the SHA-256 hex Apple's button takes", async () => {
  const [first, second] = [await createNonce(), await createNonce()];
  assert.notEqual(first.raw, second.raw);
  assert.ok(first.raw.length >= 43);
  assert.equal(first.hashed, createHash("sha256").update(first.raw).digest("hex"));
});

test("memory storage keeps what it is given; a client on it starts signed out and says so", async () => {
  const storage = new MemoryStorage();
  storage.setItem("a", "1");
  assert.equal(storage.getItem("a"), "1");
  assert.equal(storage.length, 1);
  storage.removeItem("a");
  assert.equal(storage.getItem("a"), null);
  const client = createClient({ url: "http://127.0.0.1:9/", storage });
  assert.equal(client.url, "http://127.0.0.1:9");
  assert.equal(client.session, null);
  const heard = [];
  client.onAuthStateChange((event, session) => heard.push([event, session]));
  await new Promise((done) => setTimeout(done, 10));
  assert.deepEqual(heard, [["INITIAL_SESSION", null]]);
  const refused = await client.getAccessToken().catch((error) => error);
  assert.ok(refused instanceof LanyardError);
  assert.deepEqual([refused.code, refused.status], ["NOT_SIGNED_IN", 0]);
  client.close();
});

test("an unreachable server is a NETWORK_ERROR, never a sign-out", async () => {
  const storage = new MemoryStorage();
  const session = { access_token: "a.b.c", token_type: "Bearer", expires_in: 900, expires_at: 1, refresh_token: "r",
    user: { id: "u", is_anonymous: false, identities: [] }, linked_providers: [] };
  storage.setItem("lanyard:http://127.0.0.1:9:session", JSON.stringify(session));
  const client = createClient({ url: "http://127.0.0.1:9", storage });
  assert.equal(client.user.id, "u", "the stored session at once, before any request");
  const failed = await client.me().catch((error) => error);
  assert.equal(failed.code, "NETWORK_ERROR");
  assert.equal((await client.getSession()).user.id, "u");
  assert.ok(storage.getItem("lanyard:http://127.0.0.1:9:session"), "still stored");
  client.close();
});

test("an async storage (the app's own) gives the session once it answers", async () => {
  const items = new Map([["lanyard:http://127.0.0.1:9:session", JSON.stringify({ access_token: "x", refresh_token: "r",
    expires_at: 4102444800, expires_in: 900, user: { id: "async-user" }, linked_providers: [] })]]);
  const storage = {
    getItem: async (key) => items.get(key) ?? null,
    setItem: async (key, value) => { items.set(key, value); },
    removeItem: async (key) => { items.delete(key); },
  };
  const client = createClient({ url: "http://127.0.0.1:9", storage });
  assert.equal(client.session, null, "not yet");
  assert.equal((await client.getSession()).user.id, "async-user");
  assert.equal(await client.getAccessToken(), "x");
  client.close();
});
