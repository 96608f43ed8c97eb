// Switching day (reference section 24): the bridge from Firebase, Supabase and Clerk through the SDK, against a real
// `lanyard dev` whose emulator mints each old system's session token and whose bridge verifies it as in production.
// Run: LANYARD_BINARY=… node --test SDKs/web/test/
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHmac, randomUUID } from "node:crypto";
import { createClient, LanyardError, MemoryStorage } from "../lanyard.js";
import { LanyardDev } from "./lanyard-dev.js";
import { record, until, rejects } from "./support.js";

const ADMIN_KEY = "web-sdk-migrate-test-admin-key-0123456789abcdef";
let lanyard;
const clients = [];

function client(storage = new MemoryStorage()) {
  const made = createClient({ url: lanyard.base, storage });
  clients.push(made);
  return made;
}

async function admin(method, path, body, contentType = "application/json") {
  const answer = await fetch(`${lanyard.base}${path}`, {
    method, headers: { Authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { "Content-Type": contentType }) }, body });
  const text = await answer.text();
  if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${text}`);
  return JSON.parse(text);
}

const base64URL = (text) => Buffer.from(text).toString("base64url");
const now = () => Math.floor(Date.now() / 1000);

before(async () => {
  lanyard = await LanyardDev.start({ LANYARD_ADMIN_KEY: ADMIN_KEY, LANYARD_RATE_LIMITS: "off" });
});

after(async () => {
  for (const made of clients) made.close();
  await lanyard.stop();
});

describe("the bridge", () => {
  test("a Firebase user crosses with no sign-in screen: signed in, other tabs hear it, the uid on me()", async () => {
    const uid = "Mm7ZlSDz8PZJW9AxsDR2HcSLJ6iY";
    const storage = new MemoryStorage();
    const app = client(storage);
    const otherTab = client(storage);
    const heard = record(app);
    const token = await lanyard.legacyToken("firebase", uid, {
      identities: { "google.com": ["117650938271640593827"], "apple.com": ["000987.9a8b7c6d5e4f40312a1b2c3d4e5f6a7b.0917"] },
      sign_in_provider: "google.com", email: "chiara.bellini@example.org", email_verified: true, name: "Chiara Bellini" });
    const crossed = await app.migrateFromFirebase(token);
    assert.equal(crossed.isNewUser, true);
    assert.equal(crossed.user.is_anonymous, false);
    assert.equal(crossed.mergedFrom, null);
    assert.deepEqual(app.session.linked_providers, ["google", "apple", "email"]);
    assert.equal((await app.getSession()).user.id, crossed.user.id);
    await until(() => otherTab.user?.id === crossed.user.id, "the other tab to hear the sign-in");
    await until(() => heard.some((e) => e.event === "SIGNED_IN"), "SIGNED_IN");
    assert.deepEqual(heard.map((e) => e.event), ["INITIAL_SESSION", "SIGNED_IN"]);
    assert.equal(heard[1].user, crossed.user.id);

    const me = await app.me();
    assert.equal(me.legacy_id, uid);
    assert.equal(me.legacy_source, "firebase");
    assert.equal(me.display_name, "Chiara Bellini");

    // The app calls the bridge on every start while the old SDK still has its session: the held session answers, and
    // nothing is sent (a token the server would refuse is not even looked at).
    const again = await app.migrateFromFirebase("not.a.token");
    assert.equal(again.user.id, crossed.user.id);
    assert.equal(again.isNewUser, false);
    assert.equal(again.session.access_token, app.session.access_token);
    const migrated = await admin("GET", `/v1/admin/audit?type=user.migrated&user_id=${crossed.user.id}`);
    assert.equal(migrated.events.length, 1, "one crossing");

    // Later, Google on a new device reaches the same person.
    const laptop = client();
    const google = await laptop.signInWithGoogle({ credential: await lanyard.idToken("google", "117650938271640593827") });
    assert.equal(google.user.id, crossed.user.id);
  });

  test("an anonymous Supabase user crosses as a guest; a guest held is not bridged over", async () => {
    const supabaseID = randomUUID();
    const app = client();
    const heard = record(app);
    const guest = await app.migrateFromSupabase(await lanyard.legacyToken("supabase", supabaseID, { is_anonymous: true }));
    assert.equal(guest.user.is_anonymous, true);
    assert.equal(guest.isNewUser, true);
    const me = await app.me();
    assert.equal(me.legacy_id, supabaseID);
    assert.equal(me.legacy_source, "supabase");

    // Another old session while the guest is held: refused, the guest kept (the bridge cannot bring its data along).
    const refused = await rejects(app.migrateFromSupabase(await lanyard.legacyToken("supabase", randomUUID(), { is_anonymous: true })),
      "INVALID_REQUEST");
    assert.equal(refused.details.reason, "guest_session");
    assert.equal(refused.details.field, "session");
    assert.equal(app.user.id, guest.user.id);

    // The guest signs in with Google and keeps its id and its legacy id.
    const upgraded = await app.signInWithGoogle({ credential: await lanyard.idToken("google", `g-${supabaseID}`) });
    assert.equal(upgraded.user.id, guest.user.id);
    assert.equal(upgraded.user.is_anonymous, false);
    assert.equal((await app.me()).legacy_id, supabaseID);
    await until(() => heard.filter((e) => e.event === "SIGNED_IN").length === 2, "two SIGNED_IN");
  });

  test("a Clerk user the operator imported crosses into the imported account", async () => {
    const clerkID = "user_2wMzzuVtYkwMJFrCfZ4U2EqkNk6";
    const line = { legacy_id: clerkID, legacy_source: "clerk", display_name: "Elif Kaya",
      identities: [{ provider: "google", subject: "108273645510293847561", email: "elif@example.org", email_verified: true }] };
    const report = await admin("POST", "/v1/admin/imports", JSON.stringify(line) + "\n", "application/x-ndjson");
    assert.equal(report.created, 1, JSON.stringify(report));
    const imported = (await admin("GET", `/v1/admin/users?legacy_id=${clerkID}`)).users[0];

    const app = client();
    const crossed = await app.migrateFromClerk(await lanyard.legacyToken("clerk", clerkID));
    assert.equal(crossed.user.id, imported.id);
    assert.equal(crossed.isNewUser, false);
    assert.deepEqual(app.session.linked_providers, ["google"]);
    const me = await app.me();
    assert.equal(me.legacy_id, clerkID);
    assert.equal(me.legacy_source, "clerk");
    assert.equal(me.display_name, "Elif Kaya");
  });

  test("expired, foreign and forged tokens are typed errors, and the client stays signed out", async () => {
    const app = client();
    const heard = record(app);
    const chiara = { identities: { "google.com": ["g-refused"] }, sign_in_provider: "google.com" };

    const expired = await lanyard.legacyToken("firebase", "uid-expired", { ...chiara, expires_in: 3600, iat: now() - 3600 - 61 });
    const late = await rejects(app.migrateFromFirebase(expired), "INVALID_PROVIDER_TOKEN");
    assert.equal(late.status, 401);
    assert.equal(late.details.reason, "expired");
    assert.match(late.message, /expired/, "the server's message, fit to show");

    const foreign = await lanyard.legacyToken("firebase", "uid-foreign",
      { ...chiara, aud: "another-project", iss: "https://securetoken.google.com/another-project" });
    assert.equal((await rejects(app.migrateFromFirebase(foreign), "INVALID_PROVIDER_TOKEN")).details.reason, "issuer");

    // A real token whose claims were changed after signing: another uid under the same signature.
    const [header, , signature] = (await lanyard.legacyToken("firebase", "uid-genuine", chiara)).split(".");
    const claims = { iss: "https://securetoken.google.com/lanyard-dev-project", aud: "lanyard-dev-project", sub: "uid-forged",
      user_id: "uid-forged", iat: now(), exp: now() + 3600, auth_time: now(),
      firebase: { identities: { "google.com": ["g-forged"] }, sign_in_provider: "google.com" } };
    const forged = `${header}.${base64URL(JSON.stringify(claims))}.${signature}`;
    assert.equal((await rejects(app.migrateFromFirebase(forged), "INVALID_PROVIDER_TOKEN")).details.reason, "signature");

    // Supabase: a token signed with another project's secret.
    const input = `${base64URL(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${base64URL(JSON.stringify({
      sub: randomUUID(), aud: "authenticated", role: "authenticated", iat: now(), exp: now() + 3600, is_anonymous: true }))}`;
    const otherSecret = `${input}.${createHmac("sha256", "another-projects-secret-of-32-characters!").update(input).digest("base64url")}`;
    const wrongSecret = await rejects(app.migrateFromSupabase(otherSecret), "INVALID_PROVIDER_TOKEN");
    assert.equal(wrongSecret.status, 401);
    assert.equal(wrongSecret.details.reason, "signature");

    // Clerk: a support agent's impersonation session; a user nobody imported.
    const impersonated = await lanyard.legacyToken("clerk", "user_impersonated", { impersonated_by: "user_support" });
    assert.equal((await rejects(app.migrateFromClerk(impersonated), "INVALID_PROVIDER_TOKEN")).details.reason, "impersonation");
    const missing = await rejects(app.migrateFromClerk(await lanyard.legacyToken("clerk", "user_never_imported")), "NOT_FOUND");
    assert.equal(missing.status, 404);
    assert.equal(missing.details.reason, "not_imported");
    await rejects(app.migrateFromFirebase("not.a.token"), "INVALID_PROVIDER_TOKEN");
    await assert.rejects(app.migrateFromFirebase(""), TypeError);

    assert.equal(app.session, null);
    assert.equal(await app.getSession(), null);
    assert.deepEqual(heard.map((e) => e.event), ["INITIAL_SESSION"]);
  });
});
