// The SDK against a real `lanyard dev` (started here): every family of calls as an app makes them, in Node 20.
// Run: LANYARD_BINARY=… node --test SDKs/web/test/
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createClient, LanyardError, MemoryStorage } from "../lanyard.js";
import { LanyardDev } from "./lanyard-dev.js";
import { record, until, rejects } from "./support.js";
import { SoftwareAuthenticator } from "./software-authenticator.js";

let lanyard;
const clients = [];

function client(storage = new MemoryStorage()) {
  const made = createClient({ url: lanyard.base, storage });
  clients.push(made);
  return made;
}

before(async () => {
  // Heartbeats every second: a server learns that a stream was closed when it next writes to it.
  // A second mail to an address at once (a merge's proof after a sign-in); the other mail limits stay.
  lanyard = await LanyardDev.start({ LANYARD_STREAM_HEARTBEAT: "1", LANYARD_EMAIL_ADDRESS_INTERVAL: "0" });
});

after(async () => {
  for (const made of clients) made.close();
  await lanyard.stop();
});

describe("sign-in", () => {
  test("a guest keeps its id and its records when it signs in with Google", async () => {
    const app = client();
    const heard = record(app);
    const guest = await app.signInAnonymously();
    assert.equal(guest.user.is_anonymous, true);
    await app.collection("notes").put("n1", { text: "written as a guest" });
    const signedIn = await app.signInWithGoogle({ credential: await lanyard.idToken("google", "g-upgrade", { email: "up@example.com" }) });
    assert.equal(signedIn.user.id, guest.user.id, "upgraded in place");
    assert.equal(signedIn.user.is_anonymous, false);
    assert.deepEqual(app.session.linked_providers, ["google"]);
    assert.equal((await app.collection("notes").get("n1")).data.text, "written as a guest");
    await until(() => heard.filter((e) => e.event === "SIGNED_IN").length === 2, "two SIGNED_IN");
    assert.deepEqual(heard.map((e) => e.event), ["INITIAL_SESSION", "SIGNED_IN", "SIGNED_IN"]);
  });

  test("a guest whose Apple ID has an account is merged into it, records and all", async () => {
    const owner = client();
    const account = await owner.signInWithApple({ idToken: await lanyard.idToken("apple", "a-merge"), firstName: "Ada", lastName: "L" });
    const app = client();
    const heard = record(app);
    const guest = await app.signInAnonymously();
    await app.collection("notes").put("from-guest", { text: "kept" });
    const result = await app.signInWithApple({ idToken: await lanyard.idToken("apple", "a-merge") });
    assert.equal(result.user.id, account.user.id);
    assert.equal(result.mergedFrom, guest.user.id);
    assert.equal((await owner.collection("notes").get("from-guest")).data.text, "kept");
    await until(() => heard.some((e) => e.event === "MERGED" && e.details.from === guest.user.id), "MERGED");
  });

  test("a nonce is checked: raw or its SHA-256 hex in the token, the raw one sent", async () => {
    const { createNonce } = await import("../lanyard.js");
    const nonce = await createNonce();
    assert.match(nonce.hashed, /^[0-9a-f]{64}$/);
    const app = client();
    await app.signInWithApple({ idToken: await lanyard.idToken("apple", "a-nonce", { nonce: nonce.hashed }), nonce: nonce.raw });
    await app.signInWithGoogle({ idToken: await lanyard.idToken("google", "g-nonce", { nonce: nonce.raw }), nonce: nonce.raw });
    const refused = await rejects(client().signInWithGoogle({ idToken: await lanyard.idToken("google", "g-nonce", { nonce: nonce.raw }), nonce: "other" }), "INVALID_PROVIDER_TOKEN");
    assert.equal(refused.status, 401);
    assert.equal(refused.details.reason, "nonce_mismatch");
  });

  test("refusals are LanyardErrors with the catalogue's code, status and details", async () => {
    const app = client();
    const refused = await rejects(app.signInWithIdToken({ provider: "nope", idToken: "x" }), "UNSUPPORTED_PROVIDER");
    assert.equal(refused.status, 400);
    await rejects(app.me(), "NOT_SIGNED_IN");
    assert.equal(await app.getSession(), null);
    const offered = (await app.providers()).map((p) => p.name);
    assert.ok(offered.includes("apple") && offered.includes("google"));
  });
});

describe("the account", () => {
  test("link, unlink, reauthenticate, profile and sessions", async () => {
    const phone = client();
    await phone.signInWithGoogle({ credential: await lanyard.idToken("google", "g-acct") });
    const app = client();
    const heard = record(app);
    const { user } = await app.signInWithGoogle({ credential: await lanyard.idToken("google", "g-acct") });
    const linked = await app.link({ provider: "apple", idToken: await lanyard.idToken("apple", "a-acct") });
    assert.deepEqual(linked.linked_providers, ["google", "apple"]);
    assert.deepEqual(app.session.linked_providers, ["google", "apple"]);
    const other = client();
    await other.signInWithGoogle({ credential: await lanyard.idToken("google", "g-in-use") });
    const inUse = await rejects(app.link({ provider: "google", idToken: await lanyard.idToken("google", "g-in-use") }), "PROVIDER_CONFLICT");
    assert.equal(inUse.status, 409);
    await app.reauthenticate({ provider: "apple", idToken: await lanyard.idToken("apple", "a-acct") });
    await app.unlink("google");
    assert.deepEqual(app.session.linked_providers, ["apple"]);
    await rejects(app.unlink("apple"), "CANNOT_UNLINK_ONLY_PROVIDER");
    const renamed = await app.updateProfile({ displayName: "Ada Lovelace" });
    assert.equal(renamed.display_name, "Ada Lovelace");
    assert.equal(app.user.display_name, "Ada Lovelace");
    const me = await app.me();
    assert.equal(me.id, user.id);
    assert.equal(me.recovery.methods, 1);
    await until(() => ["LINKED", "UNLINKED", "USER_UPDATED"].every((e) => heard.some((h) => h.event === e)), "LINKED, UNLINKED, USER_UPDATED");
    const devices = await app.sessions.list();
    assert.equal(devices.filter((d) => d.current).length, 1);
    // Revoking the phone's session signs the phone out at its next refresh, not this browser.
    const phoneSession = devices.find((d) => !d.current && d.method === "google");
    assert.ok(phoneSession, "the phone's session is listed");
    await app.sessions.revoke(phoneSession.id);
    const phoneHeard = record(phone);
    await rejects(phone.refreshSession(), "INVALID_REFRESH_TOKEN");
    assert.equal(phone.session, null);
    await until(() => phoneHeard.some((e) => e.event === "SIGNED_OUT" && e.details.reason === "session_ended"), "the phone's SIGNED_OUT");
    assert.ok(app.session, "this browser stays signed in");
  });

  test("sign-out forgets the session and ends it on the server; deletion signs out with its reason", async () => {
    const app = client();
    const heard = record(app);
    await app.signInWithGoogle({ credential: await lanyard.idToken("google", "g-out") });
    const refreshToken = app.session.refresh_token;
    await app.signOut();
    assert.equal(app.session, null);
    const again = await fetch(`${lanyard.base}/v1/auth/refresh`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ refresh_token: refreshToken }) });
    assert.equal(again.status, 401);
    await until(() => heard.some((e) => e.event === "SIGNED_OUT" && e.details.reason === "user_requested"), "SIGNED_OUT");
    await app.signInWithGoogle({ credential: await lanyard.idToken("google", "g-delete") });
    await app.deleteAccount();
    assert.equal(app.session, null);
    await until(() => heard.some((e) => e.event === "SIGNED_OUT" && e.details.reason === "account_deleted"), "account_deleted");
  });

  test("two full accounts merge with the other's ID token carrying the server's nonce", async () => {
    const other = client();
    const absorbed = await other.signInWithGoogle({ credential: await lanyard.idToken("google", "g-merge-other") });
    await other.collection("notes").put("theirs", { text: "moved" });
    const app = client();
    const kept = await app.signInWithApple({ idToken: await lanyard.idToken("apple", "a-merge-keep") });
    const report = await app.merge({
      proof: async (nonce) => ({ provider: "google", idToken: await lanyard.idToken("google", "g-merge-other", { nonce }) }),
    });
    assert.equal(report.into, kept.user.id);
    assert.equal(report.from, absorbed.user.id);
    assert.equal(report.records_moved, 1);
    assert.deepEqual(app.session.linked_providers.sort(), ["apple", "google"]);
    assert.equal((await app.collection("notes").get("theirs")).data.text, "moved");
    // The absorbed account's browser learns it on its next call, and signs out saying where it went.
    const heard = record(other);
    const ended = await rejects(other.me(), "ACCOUNT_MERGED");
    assert.equal(ended.details.merged_into, kept.user.id);
    assert.equal(other.session, null);
    await until(() => heard.some((e) => e.event === "SIGNED_OUT" && e.details.reason === "account_merged" && e.details.into === kept.user.id), "account_merged");
  });

  test("an email code proves the other account of a merge; keeping the other one adopts its session", async () => {
    const other = client();
    const flowOther = await other.email.start("merge-proof@example.com");
    const absorbed = await flowOther.verify((await lanyard.mail("merge-proof@example.com")).code);
    const app = client();
    const current = await app.signInWithGoogle({ credential: await lanyard.idToken("google", "g-merge-email") });
    const flow = await app.email.start("merge-proof@example.com");
    const mails = await until(async () => {
      const all = await (await fetch(`${lanyard.base}/_emulator/mail?to=merge-proof%40example.com`)).json();
      return all.length >= 2 && all;
    }, "the second mail");
    const code = mails[0].code;
    const report = await app.merge({ proof: flow.proof(code), keep: "other" });
    assert.equal(report.into, absorbed.user.id);
    assert.equal(report.from, current.user.id);
    assert.equal(app.session.user.id, absorbed.user.id, "the client holds the survivor's session");
    assert.deepEqual([...app.session.linked_providers].sort(), ["email", "google"]);
  });
});

describe("email", () => {
  test("a code signs in; a wrong one says how many tries are left", async () => {
    const app = client();
    const flow = await app.email.start("code@example.com");
    assert.ok(flow.match >= 10 && flow.match <= 99);
    const mail = await lanyard.mail("code@example.com");
    const wrong = await rejects(flow.verify(mail.code === "000000" ? "111111" : "000000"), "INVALID_CODE");
    assert.equal(wrong.details.attempts_left, 4);
    const result = await flow.verify(mail.code);
    assert.equal(result.isNewUser, true);
    assert.deepEqual(app.session.linked_providers, ["email"]);
  });

  test("the link confirmed elsewhere finishes the flow here, also after a reload of the page", async () => {
    const storage = new MemoryStorage();
    const before = client(storage);
    const flow = await before.email.start("link@example.com");
    // The page reloads: a new client on the same storage finds the flow again and waits for the link.
    const page = client(storage);
    const resumed = await page.email.resume(flow.flowId);
    assert.equal(resumed.match, flow.match);
    const waiting = resumed.awaitConfirmation({ timeout: 60_000 });
    const mail = await lanyard.mail("link@example.com");
    const confirmed = await fetch(mail.link, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: `match=${flow.match}`, redirect: "manual" });
    assert.ok(confirmed.status < 400, `the link's page took the number: ${confirmed.status}`);
    const result = await waiting;
    assert.equal(result.user.is_anonymous, false);
    assert.equal(page.session.user.id, result.user.id);
    assert.equal(await page.email.resume(flow.flowId), null, "a finished flow is forgotten");
  });
});

describe("passkeys", () => {
  test("a guest registers a passkey (upgraded in place) and signs in with it; more are named, renamed and removed", async () => {
    // In dev mode passkeys belong to `localhost`, and the server's own origin there is accepted.
    const authenticator = new SoftwareAuthenticator(`http://localhost:${new URL(lanyard.base).port}`);
    const app = createClient({ url: lanyard.base, storage: new MemoryStorage(), passkeyAuthenticator: authenticator });
    clients.push(app);
    const heard = record(app);
    const guest = await app.signInAnonymously();
    const laptop = await app.passkeys.register({ name: "Laptop" });
    assert.equal(laptop.name, "Laptop");
    assert.equal(app.user.id, guest.user.id);
    assert.equal(app.user.is_anonymous, false);
    assert.deepEqual(app.session.linked_providers, ["passkey"]);
    await until(() => heard.some((e) => e.event === "LINKED" && e.details.provider === "passkey"), "LINKED passkey");
    await app.signOut();
    const back = await app.passkeys.signIn();
    assert.equal(back.user.id, guest.user.id);
    const phone = await app.passkeys.register({ name: "Phone" });
    const renamed = await app.passkeys.rename(phone.id, "Old phone");
    assert.equal(renamed.name, "Old phone");
    assert.deepEqual((await app.passkeys.list()).map((p) => p.name), ["Laptop", "Old phone"]);
    const before = app.session.access_token;
    await app.passkeys.reauthenticate();
    assert.notEqual(app.session.access_token, before, "a renewed session");
    await app.passkeys.remove(phone.id);
    assert.deepEqual((await app.passkeys.list()).map((p) => p.name), ["Laptop"]);
    await rejects(app.passkeys.remove(laptop.id), "CANNOT_UNLINK_ONLY_PROVIDER");
    const stranger = new SoftwareAuthenticator("https://evil.example");
    stranger.credentials = authenticator.credentials;
    const other = createClient({ url: lanyard.base, storage: "memory", passkeyAuthenticator: stranger });
    clients.push(other);
    const refused = await rejects(other.passkeys.signIn(), "INVALID_PASSKEY");
    assert.equal(refused.details.reason, "origin");
  });
});

describe("records, live changes and groups", () => {
  test("versions guard concurrent edits; deletions leave tombstones; changes come page by page", async () => {
    const app = client();
    await app.signInWithGoogle({ credential: await lanyard.idToken("google", "g-records") });
    const notes = app.collection("notes");
    const first = await notes.put("n1", { text: "one" });
    assert.equal(first.version, 1);
    const conflict = await rejects(notes.put("n1", { text: "stale" }, { ifVersion: 7 }), "VERSION_CONFLICT");
    assert.equal(conflict.status, 412);
    const second = await notes.put("n1", { text: "two" }, { ifVersion: first.version });
    assert.equal(second.version, 2);
    await notes.put("n2", { text: "other" });
    await notes.delete("n2");
    assert.equal(await notes.get("n2"), null);
    const { records, cursor } = await notes.changesSince();
    assert.deepEqual(records.map((r) => [r.id, !!r.deleted]), [["n1", false], ["n2", true]]);
    const later = await notes.changes({ since: cursor });
    assert.deepEqual(later.records, []);
  });

  test("one connection per client for every subscriber; another device's write arrives live; a new page resumes where the last left off", async () => {
    const storage = new MemoryStorage();
    const browser = client(storage);
    const { user } = await browser.signInWithGoogle({ credential: await lanyard.idToken("google", "g-live") });
    const phone = client();
    await phone.signInWithGoogle({ credential: await lanyard.idToken("google", "g-live") });
    const all = [];
    const notes = [];
    const tasks = [];
    let live = false;
    const stops = [
      browser.changes.subscribe((change) => all.push(change), { onLive: (value) => { live = value; } }),
      browser.collection("notes").subscribe((change) => notes.push(change)),
      browser.collection("tasks").subscribe((change) => tasks.push(change)),
    ];
    await until(() => live, "the feed to be live");
    const metrics = await (await fetch(`${lanyard.base}/metrics`)).text();
    assert.match(metrics, /^lanyard_streams_open\S* 1(\.0)?$/m, "three subscribers, one stream");
    await phone.collection("notes").put("p1", { text: "from the phone" });
    await phone.collection("tasks").put("t1", { done: false });
    await until(() => notes.length === 1 && tasks.length === 1, "both collections' changes");
    assert.equal(notes[0].data.text, "from the phone");
    assert.equal(notes[0].kind, "record");
    assert.ok(all.length >= 2);
    for (const stop of stops) stop();
    await until(async () => /^lanyard_streams_open\S* 0(\.0)?$/m.test(await (await fetch(`${lanyard.base}/metrics`)).text()), "the stream closed with its last subscriber");
    // While no page watches, the phone writes twice; the next page on this browser gets those two, and nothing before.
    await phone.collection("notes").put("p2", { text: "while away" });
    await phone.collection("notes").delete("p1");
    const next = client(storage);
    assert.equal(next.user.id, user.id);
    const resumed = [];
    const stop = next.changes.subscribe((change) => resumed.push(change));
    await until(() => resumed.length === 2, "the two changes made while away");
    assert.deepEqual(resumed.map((c) => [c.id, c.deleted]), [["p2", false], ["p1", true]]);
    await new Promise((done) => setTimeout(done, 300));
    assert.equal(resumed.length, 2, "nothing twice");
    stop();
  });

  test("the feed page by page, and its end as a cursor", async () => {
    const app = client();
    await app.signInWithGoogle({ credential: await lanyard.idToken("google", "g-feed") });
    const end = await app.changes.list({ since: "now" });
    await app.collection("notes").put("f1", { text: "after the end" });
    const page = await app.changes.list({ since: end.next_cursor });
    assert.deepEqual(page.changes.map((c) => c.id), ["f1"]);
    const waited = await app.changes.list({ since: page.next_cursor, wait: 1 });
    assert.deepEqual(waited.changes, []);
  });

  test("a family: create, invite, join by code, a group record arriving live at the other member", async () => {
    const parent = client();
    await parent.signInWithGoogle({ credential: await lanyard.idToken("google", "g-parent") });
    const child = client();
    const { user: childUser } = await child.signInWithApple({ idToken: await lanyard.idToken("apple", "a-child") });
    const family = await parent.groups.create({ name: "The Smiths" });
    assert.equal(family.role, "owner");
    const invite = await parent.groups.invite(family.id, { role: "member" });
    const preview = await child.groups.preview(invite.code);
    assert.equal(preview.name ?? preview.group?.name, "The Smiths");
    const joined = await child.groups.join(invite.url);
    assert.equal(joined.role, "member");
    const members = (await parent.groups.get(family.id)).members.map((m) => m.user_id);
    assert.ok(members.includes(childUser.id));
    const seen = [];
    let live = false;
    const stop = child.groups.collection(family.id, "chores").subscribe((change) => seen.push(change), { onLive: (v) => { live = v; } });
    await until(() => live, "live");
    await parent.groups.collection(family.id, "chores").put("dishes", { done: false });
    await until(() => seen.some((c) => c.id === "dishes" && c.group_id === family.id), "the chore");
    await rejects(child.groups.leave(family.id).then(() => child.groups.get(family.id)), "NOT_FOUND");
    await rejects(parent.groups.leave(family.id), "OWNER_MUST_TRANSFER");
    stop();
  });
});
