// Redirect sign-in (reference section 23) through the SDK against a real `lanyard dev`, in Node 20: the browser's part
// (the provider's page, Apple's form_post, the callback's 302s) is driven over HTTP by `throughProvider`, and the page
// the browser returns to is the URL handed to `handleRedirect({ url })`. Chromium runs the same flows in
// Tests/Web/test_redirect_sign_in.py.
// Run: LANYARD_BINARY=… node --test SDKs/web/test/
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createClient, LanyardError, MemoryStorage } from "../lanyard.js";
import { LanyardDev } from "./lanyard-dev.js";
import { record, until, rejects } from "./support.js";

// Any loopback page is a redirect URI under `lanyard dev`; nothing listens there: the test reads the address.
const APP = "http://localhost:5173/signed-in";
let lanyard;
const clients = [];

function client(storage = new MemoryStorage()) {
  const made = createClient({ url: lanyard.base, storage });
  clients.push(made);
  return made;
}

/** The redirect flows a storage holds (`lanyard:<server>:redirect:<state>`). */
function pending(storage) {
  const flows = [];
  for (let index = 0; index < storage.length; index++) {
    const key = storage.key(index);
    if (key.includes(":redirect:")) flows.push({ key, state: key.slice(key.lastIndexOf(":") + 1), ...JSON.parse(storage.getItem(key)) });
  }
  return flows;
}

/** Starts a redirect sign-in without a browser: the URL it would open. */
async function start(made, provider, options = {}) {
  return (await made.signInWithRedirect(provider, { redirectTo: APP, navigate: false, ...options })).url;
}

before(async () => {
  lanyard = await LanyardDev.start({ LANYARD_RATE_LIMITS: "off" });
});

after(async () => {
  for (const made of clients) made.close();
  await lanyard.stop();
});

describe("redirect sign-in", () => {
  test("Apple by redirect: signed in with the name Apple sent once; the verifier kept meanwhile, forgotten after", async () => {
    const storage = new MemoryStorage();
    const app = client(storage);
    const heard = record(app);
    let opened = null;
    await app.signInWithRedirect("apple", { redirectTo: APP, navigate: (url) => { opened = url; } });
    const url = new URL(opened);
    assert.equal(url.origin + url.pathname, `${lanyard.base}/v1/auth/authorize/apple`);
    assert.equal(url.searchParams.get("redirect_uri"), APP);
    assert.equal(url.searchParams.get("code_challenge_method"), "S256");
    const [flow] = pending(storage);
    assert.equal(url.searchParams.get("state"), flow.state);
    assert.match(flow.verifier, /^[A-Za-z0-9_-]{43}$/);
    const challenge = createHash("sha256").update(flow.verifier).digest("base64url");
    assert.equal(url.searchParams.get("code_challenge"), challenge, "the challenge is the verifier's S256");
    assert.ok(!opened.includes(flow.verifier), "the verifier never leaves the client before the exchange");

    const back = await lanyard.throughProvider(opened, { sub: "apple-redirect", email: "ada@example.com", given_name: "Ada", family_name: "Lovelace" });
    assert.equal(new URL(back).searchParams.get("state"), flow.state);
    assert.equal(await app.handleRedirect({ url: APP }), null, "a page without a redirect answer is left alone");
    const result = await app.handleRedirect({ url: back });
    assert.equal(result.user.display_name, "Ada Lovelace");
    assert.equal(result.user.email, "ada@example.com");
    assert.equal(result.isNewUser, true);
    assert.deepEqual(app.session.linked_providers, ["apple"]);
    assert.deepEqual(pending(storage), [], "the verifier is forgotten");
    assert.equal(await app.handleRedirect({ url: back }), result, "the same answer handled twice is exchanged once");
    await until(() => heard.some((e) => e.event === "SIGNED_IN" && e.user === result.user.id), "SIGNED_IN");

    // A second sign-in by redirect: the same account, its name kept (Apple sends it only the first time).
    const again = client();
    const second = await again.handleRedirect({ url: await lanyard.throughProvider(await start(again, "apple"), { sub: "apple-redirect" }) });
    assert.equal(second.user.id, result.user.id);
    assert.equal(second.isNewUser, false);
    assert.equal(second.user.display_name, "Ada Lovelace");
  });

  test("a guest signs in with Google by redirect and keeps its id and records; another guest merges into the account", async () => {
    const app = client();
    const guest = await app.signInAnonymously();
    await app.collection("notes").put("n1", { text: "written as a guest" });
    const url = await start(app, "google");
    assert.ok(!url.includes(guest.session.access_token), "the guest's token stays out of the browser's address");
    const upgraded = await app.handleRedirect({ url: await lanyard.throughProvider(url, { sub: "google-guest", email: "guest@example.com" }) });
    assert.equal(upgraded.user.id, guest.user.id, "upgraded in place");
    assert.equal(upgraded.user.is_anonymous, false);
    assert.deepEqual(app.session.linked_providers, ["google"]);
    assert.equal((await app.collection("notes").get("n1")).data.text, "written as a guest");

    const other = client();
    const heard = record(other);
    const second = await other.signInAnonymously();
    await other.collection("notes").put("n2", { text: "from the second guest" });
    const merged = await other.handleRedirect({ url: await lanyard.throughProvider(await start(other, "google"), { sub: "google-guest" }) });
    assert.equal(merged.user.id, guest.user.id);
    assert.equal(merged.mergedFrom, second.user.id);
    assert.equal((await app.collection("notes").get("n2")).data.text, "from the second guest");
    await until(() => heard.some((e) => e.event === "MERGED" && e.details.from === second.user.id), "MERGED");
  });

  test("tabs sharing a storage: the sign-in in one is every tab's", async () => {
    const storage = new MemoryStorage();
    const first = client(storage);
    const second = client(storage);
    const heard = record(second);
    const result = await first.handleRedirect({ url: await lanyard.throughProvider(await start(first, "google"), { sub: "google-tabs" }) });
    await until(() => heard.some((e) => e.event === "SIGNED_IN" && e.user === result.user.id), "the other tab's SIGNED_IN");
    assert.equal(second.user.id, result.user.id);
  });

  test("link by redirect: the flow is started with the session's bearer and adds Google to the account", async () => {
    const app = client();
    const { user } = await app.signInWithApple({ idToken: await lanyard.idToken("apple", "apple-links") });
    const heard = record(app);
    const url = await start(app, "google", { intent: "link" });
    assert.ok(url.startsWith(`${lanyard.base}/_emulator/google/authorize?`), "the POST answered the provider's page");
    const result = await app.handleRedirect({ url: await lanyard.throughProvider(url, { sub: "google-linked", email: "linked@example.com" }) });
    assert.equal(result.user.id, user.id);
    assert.deepEqual(app.session.linked_providers, ["apple", "google"]);
    await until(() => heard.some((e) => e.event === "LINKED" && e.details.provider === "google"), "LINKED");
    // The account signs in with Google now.
    const elsewhere = client();
    const signedIn = await elsewhere.handleRedirect({ url: await lanyard.throughProvider(await start(elsewhere, "google"), { sub: "google-linked" }) });
    assert.equal(signedIn.user.id, user.id);

    await rejects(client().signInWithRedirect("google", { intent: "link", redirectTo: APP, navigate: false }), "NOT_SIGNED_IN");
    // A Google account that has its own Lanyard account cannot be linked to this one.
    const taken = await start(app, "google", { intent: "link" });
    const conflict = await rejects(app.handleRedirect({ url: await lanyard.throughProvider(taken, { sub: "google-guest" }) }), "PROVIDER_CONFLICT");
    assert.equal(conflict.status, 409);
    assert.deepEqual(app.session.linked_providers, ["apple", "google"]);
  });

  test("an unlisted redirect URI: the link's POST throws INVALID_REDIRECT_URI, the navigation's page names it", async () => {
    const app = client();
    await app.signInAnonymously();
    const elsewhere = "https://attacker.example/steal";
    const refused = await rejects(start(app, "google", { intent: "link", redirectTo: elsewhere }), "INVALID_REDIRECT_URI");
    assert.equal(refused.status, 400);
    const page = await fetch(await start(app, "google", { redirectTo: elsewhere }), { redirect: "manual" });
    assert.equal(page.status, 400);
    assert.match(page.headers.get("content-type"), /text\/html/);
    assert.ok((await page.text()).includes(elsewhere), "the page names the rejected URI");
  });

  test("refusals: a state no flow of this browser has, a wrong verifier, another redirect URI, a replayed code", async () => {
    const storage = new MemoryStorage();
    const app = client(storage);
    // An answer to a flow another browser started (a login-injection attempt): nothing is exchanged.
    const stranger = client();
    const strangers = await lanyard.throughProvider(await start(stranger, "google"), { sub: "google-victim" });
    const injected = await rejects(app.handleRedirect({ url: strangers }), "INVALID_GRANT");
    assert.equal(injected.details.reason, "state");
    assert.equal(injected.status, 0, "refused by the client, before any request");
    assert.equal(app.session, null);
    // The stranger's own client still finishes: its code was never presented.
    assert.equal((await stranger.handleRedirect({ url: strangers })).user.is_anonymous, false);

    const tamper = (change) => {
      const [flow] = pending(storage);
      const { key, state, ...kept } = flow;
      storage.setItem(key, JSON.stringify({ ...kept, ...change }));
    };
    let url = await start(app, "google");
    tamper({ verifier: "x".repeat(43) });
    const verifier = await rejects(app.handleRedirect({ url: await lanyard.throughProvider(url, { sub: "google-refusals" }) }), "INVALID_GRANT");
    assert.deepEqual([verifier.status, verifier.details.reason], [400, "verifier"]);
    assert.deepEqual(pending(storage), []);

    url = await start(app, "google");
    tamper({ redirectTo: "http://localhost:5173/other" });
    const redirect = await rejects(app.handleRedirect({ url: await lanyard.throughProvider(url, { sub: "google-refusals" }) }), "INVALID_GRANT");
    assert.equal(redirect.details.reason, "redirect_uri");

    // The code of a finished sign-in presented again (a copied address): refused as used.
    url = await start(app, "google");
    const [flow] = pending(storage);
    const back = await lanyard.throughProvider(url, { sub: "google-refusals" });
    await app.handleRedirect({ url: back });
    const replay = await fetch(`${lanyard.base}/v1/auth/token`, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ grant_type: "authorization_code", code: new URL(back).searchParams.get("code"), code_verifier: flow.verifier, redirect_uri: APP }) });
    assert.equal(replay.status, 400);
    assert.deepEqual((await replay.json()).error.details, { reason: "used" });
    assert.equal(app.user.is_anonymous, false, "signed in once, by the first exchange");
  });

  test("the person declines at the provider; a token for another flow comes back: the app hears which", async () => {
    const storage = new MemoryStorage();
    const app = client(storage);
    const declined = await lanyard.throughProvider(await start(app, "google"), {}, { cancel: true });
    assert.equal(new URL(declined).searchParams.get("error"), "access_denied");
    const cancelled = await rejects(app.handleRedirect({ url: declined }), "ABORTED");
    assert.equal(cancelled.details.reason, "cancelled");
    assert.deepEqual(pending(storage), [], "the flow is forgotten");

    const replayed = await lanyard.throughProvider(await start(app, "apple"), { sub: "apple-nonce", nonce_override: "another-flows-nonce" });
    const refused = await rejects(app.handleRedirect({ url: replayed }), "INVALID_PROVIDER_TOKEN");
    assert.equal(refused.details.error, "access_denied");
    assert.equal(refused.details.reason, "nonce_mismatch", "the server's reason is passed on");
    assert.equal(app.session, null, "nobody signed in");
  });
});
