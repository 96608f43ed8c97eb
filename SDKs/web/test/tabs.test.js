// Tabs cannot sign anyone out: clients sharing one storage are tabs of one browser (Node 20 has BroadcastChannel and
// no Web Locks, so this runs the storage lease), against a real `lanyard dev` whose access tokens live 3 seconds.
// Run: LANYARD_BINARY=… node --test SDKs/web/test/
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createClient, LanyardError, MemoryStorage } from "../lanyard.js";
import { LanyardDev } from "./lanyard-dev.js";
import { record, until } from "./support.js";

const ADMIN_KEY = "web-sdk-tabs-test-admin-key-0123456789abcdef";
const TTL = 3;
let lanyard;
const clients = [];

function tab(storage, options = {}) {
  const made = createClient({ url: lanyard.base, storage, ...options });
  clients.push(made);
  return made;
}

const pause = (ms) => new Promise((done) => setTimeout(done, ms));

async function reuses() {
  return (await lanyard.audit(ADMIN_KEY, { type: "session.reuse_detected" })).length;
}

/** The errors a call may settle with when the session ended under it: only these, and never no answer at all. */
const SESSION_GONE = new Set(["NOT_SIGNED_IN", "UNAUTHORIZED"]);

/** Every tab's callback awaits every kind of call on every event; what each callback heard, and how it settled. */
function everyCallOnEveryEvent(tabs) {
  const calls = { started: [], settled: [], unexpected: [], heard: tabs.map(() => []) };
  for (const [index, t] of tabs.entries()) {
    t.onAuthStateChange(async (event) => {
      calls.heard[index].push(event);
      calls.started.push([index, event]);
      try {
        const session = await t.getSession();
        if (session) {
          await t.getAccessToken();
          await t.me();
          await t.sessions.list();
          await t.collection("notes").get("n1");
        }
      } catch (error) {
        if (!(error instanceof LanyardError && SESSION_GONE.has(error.code))) calls.unexpected.push([index, event, String(error)]);
      }
      calls.settled.push([index, event]);
    });
  }
  return calls;
}

/** Three tabs whose callbacks call everything, through a refresh and a sign-out in one of them. */
async function callbacksThroughASignOut({ latency = 0, signOutAtOnce = false } = {}) {
  const storage = new MemoryStorage();
  const slow = async (url, init) => {
    const answer = await fetch(url, init);
    await pause(Math.random() * latency);
    return answer;
  };
  const tabs = [0, 1, 2].map(() => tab(storage, latency ? { fetch: slow } : {}));
  const calls = everyCallOnEveryEvent(tabs);
  const { user } = await tabs[0].signInWithGoogle({ credential: await lanyard.idToken("google", `g-callbacks-${latency}`) });
  await pause(TTL * 1000 + 500);
  if (signOutAtOnce) {
    // The refresh's callbacks are still calling when the sign-out starts.
    await tabs[0].me();
    await until(() => calls.started.filter(([, event]) => event === "TOKEN_REFRESHED").length === 3, "the refresh heard");
  } else {
    await Promise.all(tabs.map((t) => t.me()));
  }
  await tabs[1].signOut();
  await until(() => calls.settled.length === calls.started.length && calls.started.filter(([, e]) => e === "SIGNED_OUT").length === 3,
    `every callback to finish (${calls.settled.length} of ${calls.started.length})`, 20_000);
  assert.ok(calls.started.length >= 9);
  assert.deepEqual(calls.unexpected, [], "callbacks failed only because the session ended");
  assert.equal(storage.getItem(`lanyard:${lanyard.base}:session`), null, "signed out for good");
  for (const [index, events] of calls.heard.entries()) {
    assert.equal(events.filter((e) => e === "SIGNED_OUT").length, 1, `tab ${index}: ${events}`);
    assert.ok(!events.slice(events.indexOf("SIGNED_OUT")).includes("SIGNED_IN"), `tab ${index} signed back in: ${events}`);
    // The account never changed: no USER_UPDATED, so no storm of callbacks answering each other's `me()`.
    assert.ok(!events.includes("USER_UPDATED"), `tab ${index}: ${events}`);
    assert.ok(events.includes("SIGNED_IN") && tabs[index].session === null, `tab ${index}: ${events}`);
  }
  assert.ok(user.id);
  assert.equal(await reuses(), 0);
}

before(async () => {
  lanyard = await LanyardDev.start({ LANYARD_ACCESS_TOKEN_TTL: String(TTL), LANYARD_ADMIN_KEY: ADMIN_KEY, LANYARD_RATE_LIMITS: "off" });
});

after(async () => {
  for (const made of clients) made.close();
  await lanyard.stop();
});

describe("tabs", () => {
  test("five tabs calling at once through several token lifetimes: one session, no reuse, nobody signed out", async () => {
    const storage = new MemoryStorage();
    const tabs = Array.from({ length: 5 }, () => tab(storage));
    const heard = tabs.map(record);
    const { user } = await tabs[0].signInWithGoogle({ credential: await lanyard.idToken("google", "g-five-tabs") });
    await until(() => tabs.every((t) => t.user?.id === user.id), "every tab to hear the sign-in");
    const deadline = Date.now() + 4 * TTL * 1000;
    let calls = 0;
    await Promise.all(tabs.map(async (t, index) => {
      while (Date.now() < deadline) {
        const me = await t.me();
        assert.equal(me.id, user.id);
        calls += 1;
        await t.collection("notes").put(`tab-${index}`, { at: Date.now() });
        await pause(50 + Math.random() * 200);
      }
    }));
    assert.ok(calls > 40, `${calls} calls`);
    assert.equal(await reuses(), 0, "no refresh token was presented twice");
    for (const events of heard) assert.ok(!events.some((e) => e.event === "SIGNED_OUT"), JSON.stringify(events.filter((e) => e.event === "SIGNED_OUT")));
    const sessions = await tabs[4].sessions.list();
    assert.equal(sessions.length, 1, "five tabs, one session");
    assert.ok(heard.every((events) => events.some((e) => e.event === "TOKEN_REFRESHED")), "each tab heard the refreshes");
  });

  test("callbacks that await every kind of call on every event do not deadlock", async () => {
    await callbacksThroughASignOut();
  });

  test("…nor on a slow network, with the sign-out crossing the callbacks' calls", async () => {
    // Every answer held a random while (a loaded machine, a slow network): the callbacks' calls, the refreshes and the
    // sign-out interleave differently each time, and the sign-out starts while the callbacks are still calling.
    await callbacksThroughASignOut({ latency: 150, signOutAtOnce: true });
  });

  test("an answer that arrives while another tab signs out writes nothing back: nobody hears SIGNED_IN again", async () => {
    const key = `lanyard:${lanyard.base}:session`;
    let signOutWritten;
    const written = new Promise((done) => { signOutWritten = done; });
    // The real storage, watched: the moment a tab removes the session is the moment held answers are let through.
    class WatchedStorage extends MemoryStorage {
      removeItem(name) {
        super.removeItem(name);
        if (name === key) signOutWritten();
      }
    }
    const storage = new WatchedStorage();
    let holding = false;
    const slowAccount = async (url, init) => {
      const answer = await fetch(url, init);
      if (holding && new URL(String(url)).pathname === "/v1/users/me") await written;
      return answer;
    };
    const tabs = [tab(storage, { fetch: slowAccount }), tab(storage), tab(storage)];
    const calls = everyCallOnEveryEvent(tabs);
    const { user } = await tabs[0].signInWithGoogle({ credential: await lanyard.idToken("google", "g-written-back") });
    await until(() => tabs.every((t) => t.user?.id === user.id) && calls.settled.length === calls.started.length, "the sign-in answered");
    // Another device renames the account, so the answer held below changes the user: it has to be written, if anything.
    const phone = tab(new MemoryStorage());
    await phone.signInWithGoogle({ credential: await lanyard.idToken("google", "g-written-back") });
    await phone.updateProfile({ displayName: "Renamed elsewhere" });
    await pause(TTL * 1000 + 500);
    holding = true;
    // The tokens expired: this refreshes, every tab's callbacks start calling, and tab 0's answers wait for the sign-out.
    const answered = tabs[0].me();
    await until(() => calls.started.some(([index, event]) => index === 0 && event === "TOKEN_REFRESHED"), "the refresh heard");
    await tabs[1].signOut();
    const me = await answered;
    assert.equal(me.display_name, "Renamed elsewhere", "the call answers what the server said");
    holding = false;
    // While every tab keeps calling, the storage stays empty and nobody signs back in.
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      assert.equal(storage.getItem(key), null, "no session written back after the sign-out");
      const refused = await Promise.all(tabs.map((t) => t.me().then(() => null, (error) => error)));
      for (const error of refused) assert.ok(error instanceof LanyardError && error.code === "NOT_SIGNED_IN", String(error));
      await pause(50);
    }
    await until(() => calls.settled.length === calls.started.length, `every callback to finish (${calls.settled.length} of ${calls.started.length})`, 20_000);
    assert.deepEqual(calls.unexpected, [], "callbacks failed only because the session ended");
    assert.equal(storage.getItem(key), null);
    for (const [index, events] of calls.heard.entries()) {
      assert.equal(events.filter((e) => e === "SIGNED_OUT").length, 1, `tab ${index}: ${events}`);
      assert.ok(!events.slice(events.indexOf("SIGNED_OUT")).includes("SIGNED_IN"), `tab ${index} signed back in: ${events}`);
      assert.equal(tabs[index].session, null);
    }
    assert.equal(await reuses(), 0);
  });

  test("me() announces USER_UPDATED only when the account changed", async () => {
    const storage = new MemoryStorage();
    const [first, second] = [tab(storage), tab(storage)];
    const heard = [first, second].map(record);
    await first.signInWithGoogle({ credential: await lanyard.idToken("google", "g-user-updated") });
    await until(() => second.session, "the second tab");
    await first.me();
    await second.me();
    await first.me();
    // A refresh answers the user without the fields only `me` answers: not a change either.
    await pause(TTL * 1000 + 500);
    await first.me();
    await second.me();
    await until(() => heard.every((events) => events.some((e) => e.event === "TOKEN_REFRESHED")), "the refresh heard");
    await pause(200);
    for (const events of heard) assert.deepEqual(events.filter((e) => e.event === "USER_UPDATED"), [], "nothing changed");
    const phone = tab(new MemoryStorage());
    await phone.signInWithGoogle({ credential: await lanyard.idToken("google", "g-user-updated") });
    await phone.updateProfile({ displayName: "New name" });
    const me = await first.me();
    assert.equal(me.display_name, "New name");
    await second.me();
    await until(() => heard.every((events) => events.some((e) => e.event === "USER_UPDATED")), "USER_UPDATED in both tabs");
    await pause(200);
    for (const events of heard) {
      const updates = events.filter((e) => e.event === "USER_UPDATED");
      assert.equal(updates.length, 1, JSON.stringify(updates));
    }
    assert.equal(second.user.display_name, "New name");
  });

  test("a refresh another tab already made is used, not made again", async () => {
    const storage = new MemoryStorage();
    const refreshes = [];
    const counting = (url, init) => {
      if (String(url).endsWith("/v1/auth/refresh")) refreshes.push(url);
      return fetch(url, init);
    };
    const first = tab(storage);
    const second = tab(storage, { fetch: counting });
    await first.signInWithGoogle({ credential: await lanyard.idToken("google", "g-rotated") });
    await until(() => second.session, "the second tab");
    const old = second.session.access_token;
    const renewed = await first.refreshSession();
    assert.notEqual(renewed.access_token, old);
    // The second tab finds its token refused (say): inside the lock it reads the first tab's session and uses it.
    const taken = await second.refreshSession(old);
    assert.equal(taken.refresh_token, renewed.refresh_token);
    assert.deepEqual(refreshes, [], "no second rotation");
    assert.equal(await reuses(), 0);
  });

  test("a re-authentication answered after another account signed in in another tab does not take its place", async () => {
    const key = `lanyard:${lanyard.base}:session`;
    const storage = new MemoryStorage();
    let release;
    const released = new Promise((done) => { release = done; });
    let holding = false;
    const slowReauth = async (url, init) => {
      const answer = await fetch(url, init);
      if (holding && new URL(String(url)).pathname === "/v1/auth/reauthenticate/apple") await released;
      return answer;
    };
    const alices = tab(storage, { fetch: slowReauth });
    const other = tab(storage);
    await alices.signInWithApple({ idToken: await lanyard.idToken("apple", "a-alice-renews") });
    holding = true;
    const renewing = alices.reauthenticate({ provider: "apple", idToken: await lanyard.idToken("apple", "a-alice-renews") })
      .then(() => null, (error) => error);
    await pause(300);
    await other.signOut();
    const bob = await other.signInWithGoogle({ credential: await lanyard.idToken("google", "g-bob-after-alice") });
    release();
    const refused = await renewing;
    assert.ok(refused instanceof LanyardError && refused.code === "NOT_SIGNED_IN", String(refused));
    assert.equal(JSON.parse(storage.getItem(key)).user.id, bob.user.id, "Bob's session stays in the storage");
    await until(() => alices.user?.id === bob.user.id, "Alice's tab to follow the browser's session");
  });

  test("a tab frozen holding the lease: the others wait the lock timeout, then take it over and refresh", async () => {
    const storage = new MemoryStorage();
    const active = tab(storage, { lockTimeout: 700 });
    await active.signInWithGoogle({ credential: await lanyard.idToken("google", "g-lease") });
    const stale = active.session.access_token;
    // A tab that took the lease and froze before it released it.
    storage.setItem(`lanyard:${lanyard.base}:refresh-lease`, JSON.stringify({ owner: "frozen-tab", until: Date.now() + 60_000 }));
    const started = Date.now();
    const renewed = await active.refreshSession(stale);
    assert.notEqual(renewed.access_token, stale);
    assert.ok(Date.now() - started >= 600, "it waited for the frozen tab first");
    assert.equal(await reuses(), 0);
  });

  test("a network error never signs out; the session is still there for the next call once the server is back", async () => {
    const storage = new MemoryStorage();
    const app = tab(storage, { refreshTimeout: 2000 });
    const heard = record(app);
    const { user } = await app.signInWithGoogle({ credential: await lanyard.idToken("google", "g-offline") });
    await lanyard.stop();
    try {
      await pause(TTL * 1000 + 200);
      const failed = await app.getAccessToken().then(() => null, (error) => error);
      assert.ok(failed instanceof LanyardError && failed.code === "NETWORK_ERROR", String(failed));
      assert.equal((await app.getSession())?.user.id, user.id, "getSession keeps answering the session");
      assert.equal(app.session.user.id, user.id);
    } finally {
      await lanyard.restart();
    }
    const me = await app.me();
    assert.equal(me.id, user.id);
    assert.ok(!heard.some((e) => e.event === "SIGNED_OUT"));
  });

  test("an access token the server refuses (this browser's clock is behind) is refreshed once and the call retried", async () => {
    const storage = new MemoryStorage();
    const first = tab(storage);
    const { user } = await first.signInWithGoogle({ credential: await lanyard.idToken("google", "g-skew") });
    first.close();
    // The clock behind: the stored session says its token lives another hour.
    const key = `lanyard:${lanyard.base}:session`;
    const stored = JSON.parse(storage.getItem(key));
    storage.setItem(key, JSON.stringify({ ...stored, expires_at: stored.expires_at + 3600 }));
    await pause(TTL * 1000 + 1500);
    const app = tab(storage);
    assert.equal(app.session.access_token, stored.access_token);
    const me = await app.me();
    assert.equal(me.id, user.id);
    assert.notEqual(app.session.access_token, stored.access_token, "refreshed after the 401");
  });

  test("sign-in and sign-out in one tab are heard in the others, with the reason", async () => {
    const storage = new MemoryStorage();
    const [first, second, third] = [tab(storage), tab(storage), tab(storage)];
    const heard = [second, third].map(record);
    const { user } = await first.signInWithApple({ idToken: await lanyard.idToken("apple", "a-heard") });
    await until(() => heard.every((h) => h.some((e) => e.event === "SIGNED_IN" && e.user === user.id)), "SIGNED_IN everywhere");
    await first.signOut();
    await until(() => heard.every((h) => h.some((e) => e.event === "SIGNED_OUT" && e.details.reason === "user_requested")), "SIGNED_OUT everywhere");
    assert.equal(second.session, null);
    assert.equal(await third.getSession(), null);
  });

  test("a refresh that loses to a sign-in in another tab is discarded, and the session never reads null meanwhile", async () => {
    const storage = new MemoryStorage();
    const [refreshing, signing] = [tab(storage), tab(storage)];
    await refreshing.signInWithGoogle({ credential: await lanyard.idToken("google", "g-before") });
    await until(() => signing.session, "the second tab");
    let sawNull = false;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        if ((await refreshing.getSession()) === null || refreshing.session === null) sawNull = true;
        await pause(5);
      }
    })();
    const other = await lanyard.idToken("google", "g-after");
    const [renewed, signedIn] = await Promise.all([refreshing.refreshSession(), signing.signInWithGoogle({ credential: other })]);
    await until(() => refreshing.session?.user.id === signedIn.user.id, "the refreshing tab to hold the new sign-in");
    watching = false;
    await watcher;
    assert.ok(renewed, "the refresh answered a session");
    assert.equal(sawNull, false);
    assert.equal(JSON.parse(storage.getItem(`lanyard:${lanyard.base}:session`)).user.id, signedIn.user.id, "the sign-in won in the storage");
  });

  test("only the server ending the session signs out: a refresh token revoked elsewhere", async () => {
    const storage = new MemoryStorage();
    const [first, second] = [tab(storage), tab(storage)];
    const heard = record(second);
    await first.signInWithGoogle({ credential: await lanyard.idToken("google", "g-revoked") });
    const other = tab(new MemoryStorage());
    await other.signInWithGoogle({ credential: await lanyard.idToken("google", "g-revoked") });
    const browserSession = (await first.sessions.list()).find((s) => s.current);
    await other.sessions.revoke(browserSession.id);
    const refused = await first.refreshSession().then(() => null, (error) => error);
    assert.equal(refused?.code, "INVALID_REFRESH_TOKEN");
    await until(() => heard.some((e) => e.event === "SIGNED_OUT" && e.details.reason === "session_ended"), "the other tab's SIGNED_OUT");
    assert.equal(second.session, null);
  });
});
