// Lanyard's web SDK: one dependency-free ES module, served by every Lanyard at `GET /sdk/lanyard.js` and laid out
// as an npm package in the repository (SDKs/web). Its types and their documentation are in SDKs/web/lanyard.d.ts.
//
//   import { createClient } from "https://auth.example.com/sdk/lanyard.js";
//   const lanyard = createClient({ url: "https://auth.example.com" });
//   lanyard.onAuthStateChange((event, session) => render(session?.user ?? null));
//
// Tabs share one session through the storage (localStorage by default). Whatever the tabs do, they cannot sign
// anyone out by themselves:
// - one refresh at a time across tabs (a Web Lock with an acquire timeout; a lease in the storage where Web Locks
//   are missing), and inside it the stored session is read again: a token another tab already rotated is used,
//   not refreshed a second time (a rotated refresh token presented after the server's grace window would end the
//   session for everyone);
// - no lock is held while the app's callbacks run (they are called from a microtask, after the lock is released,
//   and never awaited), so a callback may await any call of the client;
// - a network error, a refresh whose lock was taken over, or a refresh whose result lost to a sign-in never signs
//   out and never makes the session read null: only the server saying the session is over does
//   (INVALID_REFRESH_TOKEN, REFRESH_TOKEN_REUSED, ACCOUNT_DISABLED, ACCOUNT_MERGED), and then only when the stored
//   session is still the one that was refused;
// - other tabs hear sign-in, refresh and sign-out through BroadcastChannel and the storage event.

/** The SDK's version: the Lanyard release it ships with (checked against LanyardVersion.swift by the tests). */
export const version = "0.8.0";

/**
 * Every error code: the server's catalogue (reference section 3) and the client's own.
 * @type {Readonly<Record<string, string>>}
 */
export const ErrorCode = Object.freeze({
  INVALID_REQUEST: "INVALID_REQUEST",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  UNSUPPORTED_PROVIDER: "UNSUPPORTED_PROVIDER",
  INVALID_PROVIDER_TOKEN: "INVALID_PROVIDER_TOKEN",
  PROVIDER_UNAVAILABLE: "PROVIDER_UNAVAILABLE",
  UNAUTHORIZED: "UNAUTHORIZED",
  INVALID_REFRESH_TOKEN: "INVALID_REFRESH_TOKEN",
  REFRESH_TOKEN_REUSED: "REFRESH_TOKEN_REUSED",
  PROVIDER_CONFLICT: "PROVIDER_CONFLICT",
  CANNOT_UNLINK_ONLY_PROVIDER: "CANNOT_UNLINK_ONLY_PROVIDER",
  PROVIDER_NOT_LINKED: "PROVIDER_NOT_LINKED",
  REAUTHENTICATION_REQUIRED: "REAUTHENTICATION_REQUIRED",
  RATE_LIMITED: "RATE_LIMITED",
  NOT_FOUND: "NOT_FOUND",
  FORBIDDEN: "FORBIDDEN",
  VERSION_CONFLICT: "VERSION_CONFLICT",
  ACCOUNT_DISABLED: "ACCOUNT_DISABLED",
  SERVICE_UNAVAILABLE: "SERVICE_UNAVAILABLE",
  INVITE_UNUSABLE: "INVITE_UNUSABLE",
  GROUP_LIMIT: "GROUP_LIMIT",
  INSUFFICIENT_ROLE: "INSUFFICIENT_ROLE",
  OWNER_MUST_TRANSFER: "OWNER_MUST_TRANSFER",
  MERGE_CONFLICT: "MERGE_CONFLICT",
  ACCOUNT_MERGED: "ACCOUNT_MERGED",
  INVALID_CODE: "INVALID_CODE",
  EMAIL_NOT_CONFIRMED: "EMAIL_NOT_CONFIRMED",
  INVALID_PASSKEY: "INVALID_PASSKEY",
  INVALID_REDIRECT_URI: "INVALID_REDIRECT_URI",
  INVALID_GRANT: "INVALID_GRANT",
  INTERNAL_ERROR: "INTERNAL_ERROR",
  // The client's own: no answer from the server says these.
  NOT_SIGNED_IN: "NOT_SIGNED_IN",
  NETWORK_ERROR: "NETWORK_ERROR",
  INVALID_RESPONSE: "INVALID_RESPONSE",
  ABORTED: "ABORTED",
  PASSKEY_UNAVAILABLE: "PASSKEY_UNAVAILABLE",
  STREAM_REPLACED: "STREAM_REPLACED",
});

/** The server's answers that end the session held: the only ones that sign the client out. */
const SESSION_ENDING = new Map([
  ["INVALID_REFRESH_TOKEN", "session_ended"],
  ["REFRESH_TOKEN_REUSED", "refresh_token_reused"],
  ["ACCOUNT_DISABLED", "account_disabled"],
  ["ACCOUNT_MERGED", "account_merged"],
]);

const MESSAGES = {
  NOT_SIGNED_IN: "You're not signed in.",
  NETWORK_ERROR: "The server could not be reached. Check the connection and try again.",
  INVALID_RESPONSE: "The server answered something that is not Lanyard's API.",
  ABORTED: "The request was cancelled.",
  PASSKEY_UNAVAILABLE: "Passkeys are not available here.",
  STREAM_REPLACED: "Live changes stopped: this account opened too many streams.",
};

/**
 * One error class for every failure: `code` (one of `ErrorCode`, or a code a newer server sends), the HTTP
 * `status` (0 when the server did not answer), a `message` fit to show, the server's `details`.
 */
export class LanyardError extends Error {
  /**
   * @param {string} code
   * @param {string} [message]
   * @param {{ status?: number, details?: Record<string, any>, requestId?: string | null, retryAfter?: number | null, cause?: unknown }} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message || MESSAGES[/** @type {keyof MESSAGES} */ (code)] || code, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = "LanyardError";
    this.code = code;
    this.status = extra.status ?? 0;
    this.details = extra.details ?? {};
    this.requestId = extra.requestId ?? null;
    this.retryAfter = extra.retryAfter ?? null;
  }

  /** Every code by name, as on `ErrorCode`. */
  static codes = ErrorCode;

  /**
   * The error an HTTP answer stands for.
   * @param {number} status
   * @param {any} body
   * @param {Headers | null} headers
   */
  static fromAnswer(status, body, headers) {
    const error = body && typeof body === "object" ? body.error : null;
    const retryHeader = headers?.get("Retry-After");
    const retryAfter = retryHeader != null && retryHeader !== "" && !Number.isNaN(Number(retryHeader))
      ? Number(retryHeader) : (typeof error?.details?.retry_after === "number" ? error.details.retry_after : null);
    if (!error || typeof error.code !== "string") {
      return new LanyardError("INVALID_RESPONSE", `The server answered ${status} without Lanyard's error shape.`,
        { status, retryAfter });
    }
    return new LanyardError(error.code, typeof error.message === "string" ? error.message : error.code, {
      status, details: error.details && typeof error.details === "object" ? error.details : {},
      requestId: error.request_id ?? headers?.get("X-Request-Id") ?? null, retryAfter,
    });
  }
}

// MARK: Storage

/**
 * Storage kept in this page's memory: nothing survives a reload and no other tab sees it.
 * @implements {Storage}
 */
export class MemoryStorage {
  /** @type {Map<string, string>} */
  #items = new Map();
  get length() { return this.#items.size; }
  /** @param {string} key */
  getItem(key) { return this.#items.has(key) ? /** @type {string} */ (this.#items.get(key)) : null; }
  /** @param {string} key @param {string} value */
  setItem(key, value) { this.#items.set(key, String(value)); }
  /** @param {string} key */
  removeItem(key) { this.#items.delete(key); }
  clear() { this.#items.clear(); }
  /** @param {number} index */
  key(index) { return [...this.#items.keys()][index] ?? null; }
}

function defaultStorage() {
  try {
    const storage = globalThis.localStorage;
    if (storage) {
      const probe = "lanyard:probe";
      storage.setItem(probe, "1");
      storage.removeItem(probe);
      return storage;
    }
  } catch {
    // Blocked (a sandboxed frame, storage disabled): fall back to memory.
  }
  return null;
}

/** JSON in the app's storage, whose calls may answer at once or with a promise. */
class JSONStore {
  /** @param {any} storage */
  constructor(storage) {
    this.storage = storage;
  }

  /** The parsed value; `undefined` when the storage failed (which is not the same as nothing stored). */
  async read(key) {
    let text;
    try {
      text = await this.storage.getItem(key);
    } catch {
      return undefined;
    }
    if (text == null) return null;
    try {
      return JSON.parse(text);
    } catch {
      return null;
    }
  }

  /** Like `read`, for a storage that answers at once; `undefined` when it answers with a promise. */
  readNow(key) {
    try {
      const text = this.storage.getItem(key);
      if (text != null && typeof text.then === "function") return undefined;
      return text == null ? null : JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  async write(key, value) {
    if (value == null) await this.storage.removeItem(key);
    else await this.storage.setItem(key, JSON.stringify(value));
  }
}

// MARK: Helpers

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  if (signal?.aborted) return reject(signal.reason);
  const timer = setTimeout(() => { signal?.removeEventListener("abort", stop); resolve(undefined); }, ms);
  const stop = () => { clearTimeout(timer); reject(signal?.reason); };
  signal?.addEventListener("abort", stop, { once: true });
});

function randomID() {
  if (globalThis.crypto?.randomUUID) return globalThis.crypto.randomUUID();
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** @param {string} text */
async function sha256Hex(text) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** @param {ArrayBuffer | ArrayBufferView} buffer */
function toBase64URL(buffer) {
  const bytes = buffer instanceof ArrayBuffer ? new Uint8Array(buffer)
    : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** @param {string} text */
function fromBase64URL(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "===".slice((base64.length + 3) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

/** `bytes` random bytes, base64url: a PKCE verifier (32 bytes: 43 characters) or a state. */
function randomToken(bytes) {
  const random = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(random);
  return toBase64URL(random);
}

// MARK: Redirect sign-in's helpers

/** Where a redirect flow is kept, under its state, until its answer arrives. */
const REDIRECT_KEY = "redirect:";
/** How long a started flow is worth keeping: the server's flow lives 10 minutes. */
const REDIRECT_LIFETIME = 15 * 60_000;
/** The parameters of a redirect answer, removed from the address once handled. */
const REDIRECT_PARAMETERS = ["code", "state", "error", "error_description", "error_uri"];

/** This page without its query and fragment: the default `redirectTo`. */
function currentPage() {
  const location = globalThis.location;
  return location?.origin && location.origin !== "null" ? location.origin + location.pathname : null;
}

function browserNavigation() {
  const location = globalThis.location;
  if (typeof location?.assign !== "function") {
    throw new TypeError("No browser page to navigate: pass { navigate: (url) => … } to open the provider's page yourself");
  }
  return (url) => location.assign(url);
}

/** Takes the answer's parameters off the page's address (a reload must not present the code again). */
function forgetRedirectAnswer(address) {
  const history = globalThis.history;
  if (typeof history?.replaceState !== "function" || globalThis.location?.href !== address.href) return;
  const clean = new URL(address.href);
  for (const name of REDIRECT_PARAMETERS) clean.searchParams.delete(name);
  try {
    history.replaceState(history.state, "", clean.href);
  } catch {
    // A sandboxed page may refuse; the code is spent either way.
  }
}

/** The error an OAuth `error` sent back to the app stands for (RFC 6749 4.1.2.1, as Lanyard's callback passes it on). */
function redirectRefusal(error, description) {
  const details = { error, ...(description ? { error_description: description } : {}) };
  if (error === "access_denied" && description) {
    // The provider's ID token was refused (another audience, another nonce): description is the reason.
    return new LanyardError("INVALID_PROVIDER_TOKEN", "The sign-in couldn't be verified. Please try again.",
      { details: { ...details, reason: description } });
  }
  if (error === "access_denied" || error === "user_cancelled_authorize") {
    return new LanyardError("ABORTED", "The sign-in was cancelled.", { details: { ...details, reason: "cancelled" } });
  }
  if (error === "temporarily_unavailable" || error === "server_error") {
    return new LanyardError("PROVIDER_UNAVAILABLE", "Signing in is temporarily unavailable. Please try again in a moment.", { details });
  }
  return new LanyardError("INVALID_REQUEST", description || `The provider refused the sign-in (${error}).`, { details });
}

/**
 * A nonce for Sign in with Apple or Google: give `hashed` (or `raw`) to the provider's button, and `raw` to Lanyard,
 * which accepts a token carrying either.
 * @returns {Promise<{ raw: string, hashed: string }>}
 */
export async function createNonce() {
  const bytes = new Uint8Array(32);
  globalThis.crypto.getRandomValues(bytes);
  const raw = toBase64URL(bytes);
  return { raw, hashed: await sha256Hex(raw) };
}

/** Reads one claim set of a JWT without verifying it (the client only reads its own token's `sid`). */
function claims(token) {
  try {
    const part = token.split(".")[1];
    return JSON.parse(new TextDecoder().decode(fromBase64URL(part)));
  } catch {
    return {};
  }
}

const segment = (value) => encodeURIComponent(String(value));

/** The session as the client holds and stores it: the server's session response plus `expires_at`. */
function sessionFrom(payload, now = Date.now()) {
  return {
    access_token: payload.access_token,
    token_type: payload.token_type ?? "Bearer",
    expires_in: payload.expires_in,
    expires_at: Math.floor(now / 1000) + Number(payload.expires_in),
    refresh_token: payload.refresh_token,
    user: payload.user,
    linked_providers: payload.linked_providers ?? payload.user?.linked_providers ?? [],
  };
}

function sameJSON(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Whether two descriptions of an account say the same: a field one of them leaves out is the same as null (a session
 * response carries no `legacy_id`, `GET /v1/users/me` answers it null), so only a real change is a change.
 */
function sameUser(a, b) {
  if (!a || !b) return a === b;
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (!sameJSON(a[key] ?? null, b[key] ?? null)) return false;
  }
  return true;
}

/**
 * The account a session response describes, with the fields only `GET /v1/users/me` answers (`legacy_id`…) kept from
 * the description held before, when it is the same account: a refresh does not make the user change back and forth.
 */
function carriedUser(held, answered) {
  if (!held || !answered || held.id !== answered.id) return answered;
  return { ...held, ...answered };
}

// MARK: Server-Sent Events

/** Splits a text/event-stream into events as its text arrives (WHATWG rules: event, id, data, comments, any line end). */
export class EventStreamParser {
  #pending = "";
  #event = { event: "message", id: null, data: [] };

  /**
   * The events that `text` completes.
   * @param {string} text
   * @returns {{ event: string, id: string | null, data: string }[]}
   */
  feed(text) {
    this.#pending += text;
    const events = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.#pending);
      if (!match) break;
      // A lone \r at the very end may be the first half of \r\n: wait for the next piece.
      if (match[0] === "\r" && match.index === this.#pending.length - 1) break;
      const line = this.#pending.slice(0, match.index);
      this.#pending = this.#pending.slice(match.index + match[0].length);
      if (line === "") {
        if (this.#event.data.length > 0 || this.#event.event !== "message") {
          events.push({ event: this.#event.event, id: this.#event.id, data: this.#event.data.join("\n") });
        }
        this.#event = { event: "message", id: null, data: [] };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") this.#event.event = value;
      else if (field === "id") this.#event.id = value;
      else if (field === "data") this.#event.data.push(value);
    }
    return events;
  }
}

// MARK: The client

const DEFAULTS = {
  timeout: 30_000,
  refreshTimeout: 10_000,
  // Shorter than the server's reuse grace (10 s by default): a tab that takes the lock over from a frozen one and
  // presents the same refresh token is still answered with the successor the frozen tab was given.
  lockTimeout: 5_000,
};

/** Each client's internals for its parts; a WeakMap keeps them out of the public surface. */
const INSIDE = new WeakMap();
const inside = (client) => INSIDE.get(client);

/** A client for one Lanyard server (see SDKs/web/lanyard.d.ts for every option and call). */
export function createClient(options) {
  return new Client(options);
}

class Client {
  /** @type {any} */ #session = null;
  /** @type {Set<Function>} */ #listeners = new Set();
  /** @type {Promise<any> | null} */ #refreshing = null;
  #ready;
  #options;
  #store;
  #keys;
  #crossTab;
  /** @type {BroadcastChannel | null} */ #channel = null;
  #cleanups = [];
  #tabID = randomID();
  #fetch;
  #authenticator;
  /** @type {{ href: string, result: Promise<any> } | null} */ #redirectInFlight = null;

  constructor(options) {
    if (!options || !options.url) throw new TypeError("createClient needs { url }: the Lanyard server, such as https://auth.example.com");
    const url = new URL(options.url);
    this.url = url.origin + url.pathname.replace(/\/+$/, "");
    this.#options = { ...DEFAULTS, ...options };
    const chosen = options.storage === "memory" ? null : (options.storage ?? defaultStorage());
    this.#store = new JSONStore(chosen ?? new MemoryStorage());
    this.#crossTab = chosen != null && options.crossTab !== false;
    const prefix = `lanyard:${this.url}:`;
    this.#keys = { session: prefix + "session", signOut: prefix + "signed-out", lease: prefix + "refresh-lease", prefix };
    this.#fetch = options.fetch ?? ((...parts) => globalThis.fetch(...parts));
    this.#authenticator = options.passkeyAuthenticator ?? browserAuthenticator;

    // A storage that answers at once (localStorage) gives the session before the first await.
    const now = this.#store.readNow(this.#keys.session);
    if (now !== undefined) {
      this.#session = now;
      this.#ready = Promise.resolve();
    } else {
      this.#ready = this.#store.read(this.#keys.session).then((stored) => { this.#session = stored ?? null; });
    }

    // What the parts (email, passkeys, sessions, live changes) need of the client, kept off its public surface.
    INSIDE.set(this, {
      ready: this.#ready, store: this.#store, keys: this.#keys, authenticator: this.#authenticator, fetch: this.#fetch,
      signInWith: (method, path, body) => this.#signInWith(method, path, body),
      guestBearer: () => this.#guestBearer(),
      adopt: (payload) => this.#adopt(payload),
      renew: (payload) => this.#renew(payload),
      updateUser: (user, events) => this.#updateUser(user, events),
      endSession: (bearer, reason, extra) => this.#endSession(bearer, reason, extra),
    });
    this.email = new EmailAuth(this);
    this.passkeys = new PasskeyAuth(this);
    this.sessions = new Sessions(this);
    this.groups = new Groups(this);
    this.changes = new LiveFeed(this);
    if (this.#crossTab) this.#listenToOtherTabs(chosen);
  }

  // MARK: State

  /** The session as last known, or null; no request. */
  get session() { return this.#session; }

  /** The signed-in user as last known, or null; no request. */
  get user() { return this.#session?.user ?? null; }

  /**
   * Calls `callback(event, session, details)` for every change of the session, first with `INITIAL_SESSION`. The
   * callback runs after the client released every lock and is never awaited: it may await any call of the client.
   * @returns {() => void} unsubscribe
   */
  onAuthStateChange(callback) {
    const entry = { callback };
    this.#listeners.add(entry);
    this.#ready.then(() => {
      if (this.#listeners.has(entry)) this.#call(entry, "INITIAL_SESSION", this.#session, {});
    });
    return () => { this.#listeners.delete(entry); };
  }

  /**
   * The session, its access token renewed first when it has expired or is about to; null when signed out. Never
   * null because of a network error or a refresh that another tab made: then the session held is answered.
   */
  async getSession() {
    await this.#ready;
    if (!this.#session) return null;
    try {
      await this.getAccessToken();
    } catch (error) {
      if (!(error instanceof LanyardError)) throw error;
    }
    return this.#session;
  }

  /** A valid access token for the app's own backend, refreshed first when needed. */
  async getAccessToken() {
    await this.#ready;
    const current = this.#session;
    if (!current) throw new LanyardError("NOT_SIGNED_IN");
    if (!this.#isStale(current)) return current.access_token;
    return (await this.refreshSession(current.access_token)).access_token;
  }

  /** The provider ids this server offers, in its order: which buttons to show. */
  async providers() {
    return this.request("GET", "/v1/providers", { auth: false });
  }

  // MARK: Sign-in

  /** Signs in with a provider's ID token; a held guest session is upgraded or merged. */
  async signInWithIdToken({ provider, idToken, nonce, givenName, familyName, authorizationCode }) {
    if (!provider || !idToken) throw new TypeError("signInWithIdToken needs { provider, idToken }");
    const body = { id_token: idToken };
    if (nonce) body.nonce = nonce;
    if (givenName) body.given_name = givenName;
    if (familyName) body.family_name = familyName;
    if (authorizationCode) body.authorization_code = authorizationCode;
    return this.#signInWith("POST", `/v1/auth/signin/${segment(provider)}`, body);
  }

  /** Sign in with Apple (Apple JS's `authorization.id_token`, and on the first authorization the user's name). */
  async signInWithApple({ idToken, nonce, firstName, lastName, authorizationCode }) {
    return this.signInWithIdToken({ provider: "apple", idToken, nonce, givenName: firstName, familyName: lastName, authorizationCode });
  }

  /** Sign in with Google (Google Identity Services' `credential`). */
  async signInWithGoogle({ idToken, credential, nonce }) {
    return this.signInWithIdToken({ provider: "google", idToken: idToken ?? credential, nonce });
  }

  /** A guest: an account with no sign-in method, which keeps its data when the person signs in later. */
  async signInAnonymously() {
    const payload = await this.request("POST", "/v1/auth/anonymous", { auth: false });
    return this.#adopt(payload);
  }

  // MARK: Switching day (reference section 24)

  /** The bridge from Firebase Auth: the signed-in user's current ID token (`getIdToken()`) for a Lanyard session. */
  async migrateFromFirebase(idToken) {
    return this.#migrate("firebase", "id_token", idToken, "migrateFromFirebase");
  }

  /** The bridge from Supabase Auth: the signed-in user's current access token (`session.access_token`). */
  async migrateFromSupabase(accessToken) {
    return this.#migrate("supabase", "access_token", accessToken, "migrateFromSupabase");
  }

  /** The bridge from Clerk: the signed-in user's current session token (`session.getToken()`). */
  async migrateFromClerk(sessionToken) {
    return this.#migrate("clerk", "session_token", sessionToken, "migrateFromClerk");
  }

  /**
   * Sends the old system's session once and adopts the Lanyard session it answers, as any sign-in does (stored, other
   * tabs told, `SIGNED_IN`). A signed-in account held already crossed (or signed in another way): it is answered as
   * is, with no request, so the app may call this on every start until the old SDK is gone. A guest held is refused:
   * the bridge cannot bring a guest's data along, and replacing it would lose that data.
   */
  async #migrate(source, field, token, call) {
    if (typeof token !== "string" || token === "") throw new TypeError(`${call} needs the old system's token, a string`);
    await this.#ready;
    const held = this.#session;
    if (held && !held.user?.is_anonymous) {
      return { session: held, user: held.user, isNewUser: false, mergedFrom: null };
    }
    if (held) {
      throw new LanyardError("INVALID_REQUEST", "A guest session is held: bridge the old session before starting a guest, or sign the guest out first.",
        { details: { field: "session", reason: "guest_session" } });
    }
    const payload = await this.request("POST", `/v1/auth/migrate/${source}`, { body: { [field]: token }, auth: false });
    return this.#adopt(payload);
  }

  // MARK: Redirect sign-in (reference section 23)

  /**
   * Sends the browser to the provider's sign-in page (Apple, Google, any OpenID Connect provider the server offers),
   * with PKCE: a verifier and a `state` kept in the storage under the state, the S256 challenge in the URL. The
   * provider comes back through Lanyard to `redirectTo`, where `handleRedirect()` finishes. `intent: "link"` adds the
   * provider to the signed-in account instead (the flow is started with the session's bearer).
   */
  async signInWithRedirect(provider, { redirectTo, intent = "signin", navigate = true } = {}) {
    if (!provider) throw new TypeError("signInWithRedirect needs a provider, such as \"apple\"");
    const target = redirectTo ?? currentPage();
    if (!target) throw new TypeError("signInWithRedirect needs { redirectTo }: the page handleRedirect() runs on");
    if (intent !== "signin" && intent !== "link") throw new TypeError("intent is \"signin\" or \"link\"");
    const go = navigate === true ? browserNavigation() : navigate;
    await this.#ready;
    const verifier = randomToken(32);
    const challenge = toBase64URL(await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
    const state = randomToken(16);
    const path = `/v1/auth/authorize/${segment(provider)}`;
    let url;
    if (intent === "link") {
      // Linking acts on the signed-in account: the flow is bound to this session, so only the POST can start it.
      const answer = await this.request("POST", path, {
        body: { redirect_uri: target, code_challenge: challenge, code_challenge_method: "S256", state, intent },
      });
      url = answer.url;
    } else {
      const query = new URLSearchParams({ redirect_uri: target, code_challenge: challenge, code_challenge_method: "S256", state });
      url = `${this.url}${path}?${query}`;
    }
    await this.#forgetOldRedirects();
    await this.#store.write(this.#keys.prefix + REDIRECT_KEY + state,
      { provider: String(provider), verifier, redirectTo: target, intent, at: Date.now() });
    if (go) go(url);
    return { url };
  }

  /**
   * On the page the provider returned to: trades the URL's `code` for a session (a guest's bearer goes along, so a
   * guest upgrades or merges; other tabs hear the sign-in), or finishes a link. The URL's parameters and the stored
   * verifier are removed either way. Answers null when the URL carries no redirect answer.
   */
  async handleRedirect({ url } = {}) {
    const href = url ?? globalThis.location?.href;
    if (!href) return null;
    const address = new URL(String(href));
    const parameters = address.searchParams;
    const state = parameters.get("state");
    if (state === null || (!parameters.has("code") && !parameters.has("error"))) return null;
    // The same answer handled twice at once (a framework running the page's effect twice) is exchanged once.
    if (this.#redirectInFlight?.href === address.href) return this.#redirectInFlight.result;
    const result = this.#finishRedirect(address, state);
    this.#redirectInFlight = { href: address.href, result };
    return result;
  }

  async #finishRedirect(address, state) {
    await this.#ready;
    const parameters = address.searchParams;
    const key = this.#keys.prefix + REDIRECT_KEY + state;
    const flow = await this.#store.read(key);
    // The code is single-use: whatever happens next, this page must not present it again.
    await this.#store.write(key, null);
    forgetRedirectAnswer(address);
    if (!flow || typeof flow !== "object" || typeof flow.verifier !== "string") {
      throw new LanyardError("INVALID_GRANT", "This sign-in was not started in this browser, or it already finished. Please start again.",
        { details: { reason: "state" } });
    }
    const error = parameters.get("error");
    if (error !== null) throw redirectRefusal(error, parameters.get("error_description"));
    const body = { grant_type: "authorization_code", code: parameters.get("code") ?? "", code_verifier: flow.verifier,
      redirect_uri: flow.redirectTo };
    if (flow.intent !== "link") return this.#signInWith("POST", "/v1/auth/token", body);
    // A link is finished by the session that started it; the code is presented once, without a retry that would
    // find it spent.
    const answer = await this.#send("POST", "/v1/auth/token", { body, bearer: await this.getAccessToken() });
    const user = answer.user ?? await this.request("GET", "/v1/users/me");
    await this.#updateUser({ ...user, linked_providers: answer.linked_providers ?? user.linked_providers },
      [["LINKED", { provider: flow.provider }]]);
    return { session: this.#session, user: this.user, isNewUser: false, mergedFrom: null };
  }

  /** Drops flows that were started and never came back (the person closed the provider's page). */
  async #forgetOldRedirects() {
    const storage = this.#store.storage;
    if (typeof storage.key !== "function" || typeof storage.length !== "number") return;
    const prefix = this.#keys.prefix + REDIRECT_KEY;
    const names = [];
    try {
      for (let index = 0; index < storage.length; index++) {
        const name = storage.key(index);
        if (typeof name === "string" && name.startsWith(prefix)) names.push(name);
      }
    } catch {
      return;
    }
    for (const name of names) {
      const flow = await this.#store.read(name);
      if (flow === null || (flow && !(Date.now() - flow.at < REDIRECT_LIFETIME))) await this.#store.write(name, null);
    }
  }

  /** Sends a sign-in request (with a guest's bearer when a guest session is held) and adopts its session. */
  async #signInWith(method, path, body) {
    await this.#ready;
    const bearer = await this.#guestBearer();
    const payload = bearer
      ? await this.request(method, path, { body, bearer })
      : await this.request(method, path, { body, auth: false });
    return this.#adopt(payload);
  }

  /** The guest's access token for an upgrade, or null (not a guest, or its session already ended). */
  async #guestBearer() {
    if (!this.#session?.user?.is_anonymous) return null;
    try {
      return await this.getAccessToken();
    } catch (error) {
      if (error instanceof LanyardError && (error.code === "NOT_SIGNED_IN" || SESSION_ENDING.has(error.code))) return null;
      throw error;
    }
  }

  /** Holds a session response's session (stored, other tabs told) and answers what the app needs of it. */
  async #adopt(payload) {
    const session = sessionFrom(payload);
    await this.#withRefreshLock(() => this.#write(session));
    const events = [["SIGNED_IN", session, {}]];
    if (payload.merged_from) events.push(["MERGED", session, { from: payload.merged_from }]);
    this.#announce("SIGNED_IN");
    this.#emit(events);
    return { session, user: session.user, isNewUser: !!payload.is_new_user, mergedFrom: payload.merged_from ?? null };
  }

  // MARK: The account

  /** The account from the server (another device may have linked a method or renamed it); the held user is updated. */
  async me() {
    const me = await this.request("GET", "/v1/users/me");
    await this.#updateUser(me);
    return me;
  }

  /** Sets the name the account shows; null clears it. */
  async updateProfile({ displayName }) {
    const user = await this.request("PATCH", "/v1/users/me", { body: { display_name: displayName ?? null } });
    await this.#updateUser(user);
    return user;
  }

  /** Adds a sign-in method to the signed-in account (never signs anyone out). */
  async link({ provider, idToken, nonce }) {
    const body = { id_token: idToken };
    if (nonce) body.nonce = nonce;
    const answer = await this.request("POST", `/v1/auth/link/${segment(provider)}`, { body });
    const user = answer.user ?? await this.request("GET", "/v1/users/me");
    await this.#updateUser({ ...user, linked_providers: answer.linked_providers ?? user.linked_providers }, [["LINKED", { provider }]]);
    return answer;
  }

  /** Removes a sign-in method (a recent sign-in; never the last one). */
  async unlink(provider) {
    const answer = await this.request("DELETE", `/v1/auth/link/${segment(provider)}`);
    const user = await this.request("GET", "/v1/users/me");
    await this.#updateUser(user, [["UNLINKED", { provider }]]);
    return answer;
  }

  /** Proves again who the person is with a fresh ID token of one of the account's methods; the session is renewed. */
  async reauthenticate({ provider, idToken, nonce }) {
    const body = { id_token: idToken };
    if (nonce) body.nonce = nonce;
    const payload = await this.request("POST", `/v1/auth/reauthenticate/${segment(provider)}`, { body });
    return this.#renew(payload);
  }

  /** Holds a renewed session of the same account (re-authentication). */
  async #renew(payload) {
    const session = sessionFrom(payload);
    /** @type {any[]} */
    const events = [];
    const written = await this.#withRefreshLock(async () => {
      const stored = await this.#store.read(this.#keys.session);
      // Signed out meanwhile (here or in another tab): the renewed session is not written back.
      if (stored === null) {
        await this.#forgetSession(events);
        return false;
      }
      // Another account signed in meanwhile (in another tab): its session stays; this renewal is not this browser's.
      if (stored.user?.id && session.user?.id && stored.user.id !== session.user.id) return false;
      session.user = carriedUser(stored?.user ?? this.#session?.user, session.user);
      await this.#write(session);
      return true;
    });
    if (!written) {
      this.#emit(events);
      throw new LanyardError("NOT_SIGNED_IN");
    }
    this.#announce("TOKEN_REFRESHED");
    this.#emit([["TOKEN_REFRESHED", session, {}], ["USER_UPDATED", session, {}]]);
    return session.user;
  }

  /**
   * Merges another account of the same person into this one (or this one into it with `keep: "other"`).
   * `proof` is a proof object, or a function of the server's nonce that returns one (an ID token needs the nonce).
   */
  async merge({ proof, keep, onConflict, release, dryRun } = {}) {
    let made = proof;
    if (typeof proof === "function") {
      const challenge = await this.request("POST", "/v1/users/me/merge/challenge");
      made = await proof(challenge.nonce);
    }
    const body = { proof: wireProof(made) };
    if (keep) body.keep = keep;
    if (onConflict) body.on_conflict = onConflict;
    if (release) body.release = release;
    if (dryRun) body.dry_run = true;
    const headers = { "Idempotency-Key": randomID() };
    let report;
    try {
      report = await this.request("POST", "/v1/users/me/merge", { body, headers });
    } catch (error) {
      if (!(error instanceof LanyardError) || error.code !== "NETWORK_ERROR") throw error;
      // The answer was lost: the same key answers the same merge and moves nothing twice.
      report = await this.request("POST", "/v1/users/me/merge", { body, headers });
    }
    if (report.session) {
      await this.#adopt(report.session);
      delete report.session;
    } else if (!dryRun) {
      await this.me().catch(() => {});
    }
    return report;
  }

  /** Signs out this browser (`local`), every device (`global`) or every other device (`others`). */
  async signOut({ scope = "local" } = {}) {
    await this.#ready;
    if (!this.#session) return;
    const ended = (error) => error instanceof LanyardError
      && ["UNAUTHORIZED", "NOT_SIGNED_IN", ...SESSION_ENDING.keys()].includes(error.code);
    if (scope === "others") {
      await this.request("POST", "/v1/auth/signout", { body: { scope } });
      return;
    }
    let token = null;
    let failure = null;
    try {
      token = await this.getAccessToken();
    } catch (error) {
      if (!(error instanceof LanyardError)) throw error;
      if (!ended(error)) failure = error;
    }
    // This browser forgets the session first, so its other tabs hear a sign-out the person asked for (and stop
    // refreshing a session the server is about to end); the server is told with the token taken just before.
    await this.#endSession(null, "user_requested");
    if (failure) throw failure;
    if (!token) return;
    try {
      await this.#send("POST", "/v1/auth/signout", { body: { scope }, bearer: token });
    } catch (error) {
      // Unreachable: the browser is signed out all the same; the error tells the app other devices may not be.
      if (!ended(error)) throw error;
    }
  }

  /** Deletes the account with its methods, sessions and data (a recent sign-in), and signs out. */
  async deleteAccount() {
    await this.request("DELETE", "/v1/users/me");
    await this.#endSession(null, "account_deleted");
  }

  /** Records of one collection: the account's own, a group's (`{ group }`) or one a member shares (`{ group, member }`). */
  collection(name, scope = {}) {
    return new Collection(this, name, scope.group ?? null, scope.member ?? null);
  }

  /** Stops listening to other tabs and closes the live connection. */
  close() {
    this.changes.close();
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    this.#channel?.close();
    this.#channel = null;
    this.#listeners.clear();
  }

  // MARK: Requests

  /**
   * Sends one request to the API; with `auth` (the default) the access token goes along, and a 401 refreshes once and
   * retries once. Answers the parsed JSON (null for 204).
   */
  async request(method, path, { body, query, headers = {}, auth = true, bearer, timeout, signal } = {}) {
    await this.#ready;
    if (!auth && !bearer) return this.#send(method, path, { body, query, headers, timeout, signal });
    const token = bearer ?? await this.getAccessToken();
    try {
      try {
        return await this.#send(method, path, { body, query, headers, timeout, signal, bearer: token });
      } catch (error) {
        if (!(error instanceof LanyardError) || error.status !== 401 || error.code !== "UNAUTHORIZED") throw error;
        // An access token the server no longer takes (expired by its clock): one refresh, one retry.
        const renewed = await this.refreshSession(token);
        return await this.#send(method, path, { body, query, headers, timeout, signal, bearer: renewed.access_token });
      }
    } catch (error) {
      if (error instanceof LanyardError && (error.code === "ACCOUNT_DISABLED" || error.code === "ACCOUNT_MERGED")
          && error.details?.reason !== "other_account") {
        await this.#endSession(token, SESSION_ENDING.get(error.code), error.details?.merged_into ? { into: error.details.merged_into } : {});
      }
      throw error;
    }
  }

  async #send(method, path, { body, query, headers = {}, bearer, timeout, signal } = {}) {
    let url = this.url + path;
    if (query) {
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) if (value != null) search.set(name, String(value));
      const text = search.toString();
      if (text) url += "?" + text;
    }
    const all = { Accept: "application/json", "X-Client-Info": `lanyard-js/${version}`, ...headers };
    if (body !== undefined) all["Content-Type"] = "application/json";
    if (bearer) all.Authorization = `Bearer ${bearer}`;
    const controller = new AbortController();
    const limit = timeout ?? this.#options.timeout;
    const timer = setTimeout(() => controller.abort(new LanyardError("NETWORK_ERROR", "The server did not answer in time.", { details: { reason: "timeout" } })), limit);
    const stop = () => controller.abort(new LanyardError("ABORTED"));
    signal?.addEventListener("abort", stop, { once: true });
    let answer;
    try {
      answer = await this.#fetch(url, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body), signal: controller.signal });
    } catch (error) {
      if (controller.signal.aborted && controller.signal.reason instanceof LanyardError) throw controller.signal.reason;
      throw new LanyardError("NETWORK_ERROR", undefined, { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
    }
    let text;
    try {
      text = await answer.text();
    } catch (error) {
      throw new LanyardError("NETWORK_ERROR", undefined, { cause: error, status: answer.status });
    }
    let json = null;
    if (text) {
      try {
        json = JSON.parse(text);
      } catch {
        if (answer.ok) throw new LanyardError("INVALID_RESPONSE", undefined, { status: answer.status });
      }
    }
    if (!answer.ok) throw LanyardError.fromAnswer(answer.status, json, answer.headers);
    return json;
  }

  // MARK: Refresh, across tabs

  #isStale(session) {
    const lifetime = Number(session.expires_in) || 900;
    const leeway = Math.min(60, lifetime / 4) * 1000;
    return session.expires_at * 1000 - Date.now() <= leeway;
  }

  /**
   * The session after one refresh, shared by every caller in this tab at the same time and coordinated with other
   * tabs. `staleAccessToken` is the token the caller found expired or refused: when the stored session already has
   * another one, another tab (or call) refreshed meanwhile and that session is answered without a request.
   */
  refreshSession(staleAccessToken = this.#session?.access_token) {
    if (this.#refreshing) return this.#refreshing;
    const running = this.#refreshAcrossTabs(staleAccessToken).finally(() => { this.#refreshing = null; });
    this.#refreshing = running;
    return running;
  }

  async #refreshAcrossTabs(stale) {
    const events = [];
    let announce = null;
    try {
      return await this.#withRefreshLock(async () => {
        const stored = await this.#store.read(this.#keys.session);
        if (stored === null) {
          // Signed out in another tab: that is this tab's state too.
          await this.#forgetSession(events);
          throw new LanyardError("NOT_SIGNED_IN");
        }
        // `undefined`: the storage failed to answer; go on with what this tab holds.
        const current = stored ?? this.#session;
        if (!current) throw new LanyardError("NOT_SIGNED_IN");
        if (stored && !sameSession(stored, this.#session)) {
          events.push(...this.#differences(this.#session, stored));
          this.#session = stored;
        }
        if (current.access_token !== stale && !this.#isStale(current)) return current;
        let payload;
        try {
          payload = await this.#postRefresh(current.refresh_token);
        } catch (error) {
          if (!(error instanceof LanyardError) || !SESSION_ENDING.has(error.code)) throw error;
          // Refused: sign out only when the stored session is still the one refused (another tab may have rotated
          // it while this request was on its way).
          const now = await this.#store.read(this.#keys.session);
          if (now && now.refresh_token !== current.refresh_token) {
            events.push(...this.#differences(this.#session, now));
            this.#session = now;
            return now;
          }
          if (now === null) {
            // Another tab signed out meanwhile (which is why the server refused): that sign-out, with its reason.
            await this.#forgetSession(events);
            throw error;
          }
          const details = { reason: SESSION_ENDING.get(error.code) };
          if (error.details?.merged_into) details.into = error.details.merged_into;
          await this.#write(null, details);
          events.push(["SIGNED_OUT", null, details]);
          announce = "SIGNED_OUT";
          throw error;
        }
        const renewed = sessionFrom(payload);
        renewed.user = carriedUser(current.user, renewed.user);
        // A sign-in or sign-out (here or in another tab) won while the refresh was on its way: keep that one.
        const latest = await this.#store.read(this.#keys.session);
        if (latest !== undefined && (latest === null || latest.refresh_token !== current.refresh_token)) {
          if (latest === null) {
            await this.#forgetSession(events);
            throw new LanyardError("NOT_SIGNED_IN");
          }
          events.push(...this.#differences(this.#session, latest));
          this.#session = latest;
          return latest;
        }
        const before = this.#session;
        await this.#write(renewed);
        events.push(["TOKEN_REFRESHED", renewed, {}]);
        if (before && (!sameUser(before.user, renewed.user) || !sameJSON(before.linked_providers, renewed.linked_providers))) {
          events.push(["USER_UPDATED", renewed, {}]);
        }
        announce = "TOKEN_REFRESHED";
        return renewed;
      });
    } catch (error) {
      if (error instanceof LanyardError) throw error;
      // The lock was taken over (a tab waited longer than its timeout) or the storage failed: the refresh was
      // discarded, never a sign-out. What the storage holds now is the session.
      const stored = await this.#store.read(this.#keys.session);
      if (stored) {
        if (!sameSession(stored, this.#session)) {
          events.push(...this.#differences(this.#session, stored));
          this.#session = stored;
        }
        return stored;
      }
      if (stored === null) {
        await this.#forgetSession(events);
        throw new LanyardError("NOT_SIGNED_IN");
      }
      if (this.#session) return this.#session;
      throw new LanyardError("NOT_SIGNED_IN");
    } finally {
      if (announce) this.#announce(announce);
      this.#emit(events);
    }
  }

  async #postRefresh(refreshToken) {
    const send = () => this.#send("POST", "/v1/auth/refresh", { body: { refresh_token: refreshToken }, timeout: this.#options.refreshTimeout });
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof LanyardError) || error.code !== "NETWORK_ERROR") throw error;
      // The answer may have been lost after the server rotated the token: presented again at once (within the
      // server's grace), the same successor comes back.
      return await send();
    }
  }

  /** Runs `work` holding the refresh lock of this server's session, across tabs. Never called with the lock held. */
  async #withRefreshLock(work) {
    if (!this.#crossTab) return work();
    const locks = globalThis.navigator?.locks;
    if (locks?.request) {
      const name = this.#keys.prefix + "refresh";
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), this.#options.lockTimeout);
      let granted = false;
      try {
        return await locks.request(name, { signal: controller.signal }, () => {
          granted = true;
          clearTimeout(timer);
          return work();
        });
      } catch (error) {
        if (granted || !controller.signal.aborted) throw error;
        // Not granted in time: the holder is frozen or stuck. Take the lock over; `work` reads the storage first.
        return await locks.request(name, { steal: true }, () => work());
      } finally {
        clearTimeout(timer);
      }
    }
    return this.#withLease(work);
  }

  /** A lease in the shared storage, for browsers without Web Locks. */
  async #withLease(work) {
    const key = this.#keys.lease;
    const owner = randomID();
    const deadline = Date.now() + this.#options.lockTimeout;
    for (;;) {
      const lease = await this.#store.read(key);
      const free = !lease || lease.until < Date.now();
      if (free || Date.now() > deadline) {
        await this.#store.write(key, { owner, until: Date.now() + this.#options.refreshTimeout * 2 + 1000 });
        // Another tab may have written at the same moment: the last writer holds it.
        await sleep(30);
        const check = await this.#store.read(key);
        if (check?.owner === owner || Date.now() > deadline) break;
      }
      await sleep(40 + Math.random() * 60);
    }
    try {
      return await work();
    } finally {
      const lease = await this.#store.read(key);
      if (lease?.owner === owner) await this.#store.write(key, null);
    }
  }

  /** Stores `session` (null: signed out, with why) and holds it in this tab. */
  async #write(session, signOutDetails) {
    if (session === null) await this.#store.write(this.#keys.signOut, { ...signOutDetails, at: Date.now() });
    await this.#store.write(this.#keys.session, session);
    this.#session = session;
  }

  /**
   * This tab takes the sign-out the storage holds (another tab's): the session is forgotten before any await, so a
   * tab hears one SIGNED_OUT however many of its calls find the storage empty.
   */
  async #forgetSession(events) {
    if (!this.#session) return;
    this.#session = null;
    events.push(["SIGNED_OUT", null, await this.#signOutDetails()]);
  }

  async #signOutDetails() {
    const details = await this.#store.read(this.#keys.signOut);
    if (details && typeof details === "object") {
      const { at, ...rest } = details;
      return rest;
    }
    return { reason: "user_requested" };
  }

  /** Signs out when the held session still uses `bearer` (null: whatever it uses), and tells everyone. */
  async #endSession(bearer, reason, extra = {}) {
    if (!this.#session || (bearer && this.#session.access_token !== bearer)) return;
    const details = { reason, ...extra };
    /** @type {any[]} */
    let adopted = [];
    await this.#withRefreshLock(async () => {
      const stored = await this.#store.read(this.#keys.session);
      // Another tab holds another session meanwhile: this tab takes it rather than ending it.
      if (bearer && stored && stored.access_token !== bearer && stored.refresh_token !== this.#session?.refresh_token) {
        adopted = this.#differences(this.#session, stored);
        this.#session = stored;
        return;
      }
      await this.#write(null, details);
    });
    if (this.#session) {
      this.#emit(adopted);
      return;
    }
    this.#announce("SIGNED_OUT");
    this.#emit([["SIGNED_OUT", null, details]]);
  }

  /**
   * Takes the server's description of the account (after `me`, a link, a rename) into the held session, and tells the
   * listeners `USER_UPDATED` only when it changed something. The answer may arrive after this browser signed out or
   * signed another account in (in this tab or another): then nothing is written, since writing the session held
   * when the request left would sign a signed-out browser back in.
   */
  async #updateUser(user, extraEvents = []) {
    const held = this.#session;
    if (!held) return;
    const { linked_providers: linked, recovery, ...rest } = user;
    const account = rest.id ?? held.user?.id;
    if (held.user?.id !== account) return;
    const unchanged = (base) => sameUser(base.user, { ...base.user, ...rest })
      && sameJSON(base.linked_providers, linked ?? base.linked_providers);
    if (extraEvents.length === 0 && unchanged(held)) return;
    /** @type {any[]} */
    const events = [];
    let written = false;
    await this.#withRefreshLock(async () => {
      const stored = await this.#store.read(this.#keys.session);
      if (stored === null) {
        // Signed out meanwhile: that is this tab's state too, and it stays signed out.
        await this.#forgetSession(events);
        return;
      }
      // `undefined`: the storage failed to answer; go on with what this tab holds.
      if (stored && !sameSession(stored, this.#session)) {
        events.push(...this.#differences(this.#session, stored));
        this.#session = stored;
      }
      const base = stored ?? this.#session;
      if (!base || base.user?.id !== account) return;
      if (extraEvents.length === 0 && unchanged(base)) return;
      const next = { ...base, user: { ...base.user, ...rest }, linked_providers: linked ?? base.linked_providers };
      await this.#write(next);
      written = true;
      events.push(...extraEvents.map(([event, details]) => [event, next, details]), ["USER_UPDATED", next, {}]);
    });
    if (written) this.#announce("USER_UPDATED");
    this.#emit(events);
  }

  // MARK: Other tabs

  #listenToOtherTabs(storage) {
    if (typeof globalThis.BroadcastChannel === "function") {
      this.#channel = new BroadcastChannel(this.#keys.prefix + "auth");
      // Node keeps a process alive while a channel is open; a page has no such concern.
      /** @type {any} */ (this.#channel).unref?.();
      this.#channel.onmessage = (message) => {
        if (message.data?.tab !== this.#tabID) this.#syncFromStorage();
      };
    }
    const target = globalThis.window;
    if (target?.addEventListener && storage === globalThis.localStorage) {
      const onStorage = (event) => {
        if (event.key === this.#keys.session || event.key === null) this.#syncFromStorage();
      };
      target.addEventListener("storage", onStorage);
      this.#cleanups.push(() => target.removeEventListener("storage", onStorage));
    }
    // A tab frozen or in the back-forward cache comes back with whatever the others did meanwhile.
    const doc = globalThis.document;
    if (doc?.addEventListener) {
      const onWake = () => { if (doc.visibilityState !== "hidden") this.#syncFromStorage(); };
      doc.addEventListener("resume", onWake);
      doc.addEventListener("visibilitychange", onWake);
      target?.addEventListener?.("pageshow", onWake);
      this.#cleanups.push(() => {
        doc.removeEventListener("resume", onWake);
        doc.removeEventListener("visibilitychange", onWake);
        target?.removeEventListener?.("pageshow", onWake);
      });
    }
  }

  #announce(event) {
    try {
      this.#channel?.postMessage({ tab: this.#tabID, event });
    } catch {
      // A closed channel: the storage event still tells the other tabs.
    }
  }

  /** Takes what the storage holds as this tab's session, with the events that tell the difference. */
  async #syncFromStorage() {
    await this.#ready;
    const stored = await this.#store.read(this.#keys.session);
    if (stored === undefined || sameSession(stored, this.#session)) return;
    const before = this.#session;
    this.#session = stored;
    const events = stored === null ? [["SIGNED_OUT", null, await this.#signOutDetails()]] : this.#differences(before, stored);
    this.#emit(events);
  }

  #differences(before, after) {
    if (!after) return before ? [["SIGNED_OUT", null, { reason: "user_requested" }]] : [];
    if (!before || before.user?.id !== after.user?.id) return [["SIGNED_IN", after, {}]];
    const events = [];
    if (before.refresh_token !== after.refresh_token || before.access_token !== after.access_token) events.push(["TOKEN_REFRESHED", after, {}]);
    if (!sameUser(before.user, after.user) || !sameJSON(before.linked_providers, after.linked_providers)) events.push(["USER_UPDATED", after, {}]);
    return events;
  }

  // MARK: Events

  #emit(events) {
    for (const [event, session, details] of events) {
      for (const entry of this.#listeners) this.#call(entry, event, session, details);
    }
  }

  #call(entry, event, session, details) {
    // A microtask: after the caller released every lock and finished its own bookkeeping; never awaited.
    queueMicrotask(() => {
      if (!this.#listeners.has(entry)) return;
      try {
        const result = entry.callback(event, session, details ?? {});
        if (result && typeof result.then === "function") result.then(undefined, (error) => reportListenerError(error));
      } catch (error) {
        reportListenerError(error);
      }
    });
  }

}

function sameSession(a, b) {
  if (!a || !b) return a === b;
  return a.refresh_token === b.refresh_token && a.access_token === b.access_token && sameJSON(a.user, b.user)
    && sameJSON(a.linked_providers, b.linked_providers);
}

function reportListenerError(error) {
  // The app's callback failed: its error is the app's to see, and never stops the client.
  if (typeof globalThis.reportError === "function") globalThis.reportError(error);
  else console.error(error);
}

/** A merge proof in the server's shape, from the camelCase the SDK takes. */
function wireProof(proof) {
  if (!proof || typeof proof !== "object") throw new TypeError("merge needs a proof: { provider, idToken }, an email flow's code, or a passkey");
  if (proof.provider === "email") {
    const flow = proof.flow ?? {};
    return { provider: "email", flow_id: proof.flowId ?? flow.flowId, flow_secret: proof.flowSecret ?? flow.flowSecret, code: proof.code };
  }
  if (proof.provider === "passkey") return { provider: "passkey", credential: proof.credential };
  return { provider: proof.provider, id_token: proof.idToken ?? proof.id_token };
}

// MARK: Email

class EmailAuth {
  #client;
  constructor(client) { this.#client = client; }

  /** Sends a sign-in mail (a code and a link); show the flow's `match`. */
  async start(email, { redirectTo } = {}) {
    return this.#start({ email, intent: "signin", redirect_to: redirectTo });
  }

  /** Sends a mail that adds `email` to the signed-in account once its code is verified. */
  async link(email) {
    return this.#start({ email, intent: "link" });
  }

  /** Sends a mail that proves the person still holds the account's address (before unlink or deletion). */
  async reauthenticate(email) {
    return this.#start({ email, intent: "reauthenticate" });
  }

  /** A flow this browser started, found again after a reload (the page `redirect_to` opened has `?flow_id=`). */
  async resume(flowId) {
    const saved = await inside(this.#client).store.read(inside(this.#client).keys.prefix + "email:" + flowId);
    if (!saved) return null;
    return new EmailFlow(this.#client, saved);
  }

  async #start(body) {
    if (body.redirect_to === undefined) delete body.redirect_to;
    const authorized = body.intent !== "signin";
    const started = await this.#client.request("POST", "/v1/auth/email/start", { body, auth: authorized });
    const saved = {
      flowId: started.flow_id, flowSecret: started.flow_secret, match: started.match, expiresIn: started.expires_in,
      resendAfter: started.resend_after, intent: body.intent, email: body.email,
      expiresAt: Date.now() + started.expires_in * 1000,
    };
    // Kept until it ends, so a page reloaded (or opened by the link's redirect) can still finish it.
    await inside(this.#client).store.write(inside(this.#client).keys.prefix + "email:" + saved.flowId, saved);
    return new EmailFlow(this.#client, saved);
  }
}

class EmailFlow {
  #client;
  constructor(client, saved) {
    this.#client = client;
    Object.assign(this, saved);
  }

  /** Finishes with the 6-digit code from the mail. */
  async verify(code) {
    return this.#finish("/v1/auth/email/verify", { flow_id: this.flowId, flow_secret: this.flowSecret, code: String(code) });
  }

  /** Waits (long-polls) until the mail's link was confirmed on any device, then finishes here. */
  async awaitConfirmation({ timeout = 900_000, signal } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const wait = Math.max(0, Math.min(25, Math.floor((deadline - Date.now()) / 1000)));
      try {
        return await this.#finish("/v1/auth/email/complete",
          { flow_id: this.flowId, flow_secret: this.flowSecret, wait }, { timeout: (wait + 15) * 1000, signal });
      } catch (error) {
        if (!(error instanceof LanyardError)) throw error;
        if (error.code === "EMAIL_NOT_CONFIRMED" && Date.now() < deadline) {
          // The last second before the deadline asks without waiting: pause between those asks.
          if (wait === 0) await sleep(250, signal);
          continue;
        }
        if (error.code === "NETWORK_ERROR" && Date.now() < deadline && !signal?.aborted) {
          await sleep(1000, signal);
          continue;
        }
        throw error;
      }
    }
  }

  /** This flow as a merge proof (its code proves the other account). */
  proof(code) {
    return { provider: "email", flowId: this.flowId, flowSecret: this.flowSecret, code: String(code) };
  }

  async #finish(path, body, options = {}) {
    const client = this.#client;
    let result;
    if (this.intent === "link") {
      const answer = await client.request("POST", path, { body, ...options });
      const user = answer.user ?? await client.request("GET", "/v1/users/me");
      await inside(client).updateUser({ ...user, linked_providers: answer.linked_providers ?? user.linked_providers }, [["LINKED", { provider: "email" }]]);
      result = { session: client.session, user: client.user, isNewUser: false, mergedFrom: null };
    } else if (this.intent === "reauthenticate") {
      const payload = await client.request("POST", path, { body, ...options });
      await inside(client).renew(payload);
      result = { session: client.session, user: client.user, isNewUser: false, mergedFrom: null };
    } else {
      await inside(client).ready;
      const bearer = await inside(client).guestBearer();
      const payload = bearer
        ? await client.request("POST", path, { body, bearer, ...options })
        : await client.request("POST", path, { body, auth: false, ...options });
      result = await inside(client).adopt(payload);
    }
    await inside(client).store.write(inside(client).keys.prefix + "email:" + this.flowId, null);
    return result;
  }
}

// MARK: Passkeys

/** The browser's WebAuthn, through `navigator.credentials`, with the JSON the server speaks. */
const browserAuthenticator = {
  async create(options, { signal } = {}) {
    const credentials = requireCredentials();
    const parse = globalThis.PublicKeyCredential?.parseCreationOptionsFromJSON;
    const publicKey = parse ? parse.call(globalThis.PublicKeyCredential, options) : {
      ...options,
      challenge: fromBase64URL(options.challenge),
      user: { ...options.user, id: fromBase64URL(options.user.id) },
      excludeCredentials: (options.excludeCredentials ?? []).map((c) => ({ ...c, id: fromBase64URL(c.id) })),
    };
    return credentialJSON(await ceremony(() => credentials.create({ publicKey, signal })));
  },
  async get(options, { signal, mediation } = {}) {
    const credentials = requireCredentials();
    const parse = globalThis.PublicKeyCredential?.parseRequestOptionsFromJSON;
    const publicKey = parse ? parse.call(globalThis.PublicKeyCredential, options) : {
      ...options,
      challenge: fromBase64URL(options.challenge),
      allowCredentials: (options.allowCredentials ?? []).map((c) => ({ ...c, id: fromBase64URL(c.id) })),
    };
    return credentialJSON(await ceremony(() => credentials.get({ publicKey, signal, mediation })));
  },
};

function requireCredentials() {
  const credentials = globalThis.navigator?.credentials;
  if (!credentials || typeof globalThis.PublicKeyCredential !== "function") {
    throw new LanyardError("PASSKEY_UNAVAILABLE", "This browser has no passkeys (WebAuthn).");
  }
  return credentials;
}

async function ceremony(run) {
  try {
    const credential = await run();
    if (!credential) throw new LanyardError("PASSKEY_UNAVAILABLE", "No passkey was chosen.");
    return credential;
  } catch (error) {
    if (error instanceof LanyardError) throw error;
    // NotAllowedError: the person dismissed the sheet, or it timed out; the browser does not say which.
    throw new LanyardError("PASSKEY_UNAVAILABLE", "The passkey was not used.", { details: { name: error?.name ?? "Error" }, cause: error });
  }
}

function credentialJSON(credential) {
  if (typeof credential.toJSON === "function") return credential.toJSON();
  const response = credential.response;
  const json = {
    id: credential.id, rawId: toBase64URL(credential.rawId), type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults?.() ?? {},
    response: { clientDataJSON: toBase64URL(response.clientDataJSON) },
  };
  if (response.attestationObject) {
    json.response.attestationObject = toBase64URL(response.attestationObject);
    json.response.transports = response.getTransports?.() ?? [];
  } else {
    json.response.authenticatorData = toBase64URL(response.authenticatorData);
    json.response.signature = toBase64URL(response.signature);
    if (response.userHandle) json.response.userHandle = toBase64URL(response.userHandle);
  }
  return json;
}

class PasskeyAuth {
  #client;
  constructor(client) { this.#client = client; }

  /** Makes a passkey for the signed-in account (a guest is upgraded in place) and adds it. */
  async register({ name, signal } = {}) {
    const client = this.#client;
    const options = await client.request("POST", "/v1/auth/passkeys/register/options");
    const credential = await inside(client).authenticator.create(options, { signal });
    const body = { credential };
    if (name) body.name = name;
    const answer = await client.request("POST", "/v1/auth/passkeys/register", { body });
    await inside(client).updateUser({ ...answer.user, linked_providers: answer.linked_providers }, [["LINKED", { provider: "passkey" }]]);
    return answer.passkey;
  }

  /** Signs in with a passkey the person picks; a guest's data comes along (upgraded or merged). */
  async signIn({ signal, mediation } = {}) {
    const credential = await this.assertion({ signal, mediation });
    return inside(this.#client).signInWith("POST", "/v1/auth/passkeys/signin", { credential });
  }

  /** Proves the person is still there with one of the account's passkeys; the session is renewed. */
  async reauthenticate({ signal } = {}) {
    const credential = await this.assertion({ signal });
    const payload = await this.#client.request("POST", "/v1/auth/passkeys/signin", { body: { credential, intent: "reauthenticate" } });
    return inside(this.#client).renew(payload);
  }

  /** An assertion for a fresh sign-in challenge, not sent anywhere (a merge proof: `{ provider: "passkey", credential }`). */
  async assertion({ signal, mediation } = {}) {
    const options = await this.#client.request("POST", "/v1/auth/passkeys/signin/options", { auth: false });
    return inside(this.#client).authenticator.get(options, { signal, mediation });
  }

  /** The account's passkeys, oldest first. */
  async list() {
    return (await this.#client.request("GET", "/v1/users/me/passkeys")).passkeys;
  }

  /** Renames a passkey. */
  async rename(id, name) {
    return this.#client.request("PATCH", `/v1/users/me/passkeys/${segment(id)}`, { body: { name } });
  }

  /** Removes a passkey (a recent sign-in; never the account's last way in). */
  async remove(id) {
    const answer = await this.#client.request("DELETE", `/v1/users/me/passkeys/${segment(id)}`);
    const user = await this.#client.request("GET", "/v1/users/me");
    await inside(this.#client).updateUser(user, [["UNLINKED", { provider: "passkey" }]]);
    return answer;
  }
}

// MARK: Sessions

class Sessions {
  #client;
  constructor(client) { this.#client = client; }

  /** The account's signed-in devices; `current` marks this one. */
  async list() {
    return (await this.#client.request("GET", "/v1/sessions")).sessions;
  }

  /** Signs one device out; this browser's own session signs the client out. */
  async revoke(id) {
    const current = this.#client.session;
    const own = current && claims(current.access_token).sid === id;
    await this.#client.request("DELETE", `/v1/sessions/${segment(id)}`);
    if (own) await inside(this.#client).endSession(null, "user_requested");
  }
}

// MARK: Records

class Collection {
  #client;
  constructor(client, name, group, member) {
    this.#client = client;
    this.name = name;
    this.group = group;
    this.member = member;
    this.path = member ? `/v1/groups/${segment(group)}/members/${segment(member)}/data/${segment(name)}`
      : group ? `/v1/groups/${segment(group)}/data/${segment(name)}` : `/v1/data/${segment(name)}`;
  }

  /** Record `id`, or null when there is none. */
  async get(id) {
    try {
      return await this.#client.request("GET", `${this.path}/${segment(id)}`);
    } catch (error) {
      if (error instanceof LanyardError && error.code === "NOT_FOUND") return null;
      throw error;
    }
  }

  /** Creates or replaces record `id`; with `ifVersion`, only when the stored record is still at that version. */
  async put(id, data, { ifVersion } = {}) {
    const headers = ifVersion == null ? {} : { "If-Match": `"${ifVersion}"` };
    return this.#client.request("PUT", `${this.path}/${segment(id)}`, { body: { data }, headers });
  }

  /** Deletes record `id`, leaving a tombstone other devices see in their changes. */
  async delete(id, { ifVersion } = {}) {
    const headers = ifVersion == null ? {} : { "If-Match": `"${ifVersion}"` };
    await this.#client.request("DELETE", `${this.path}/${segment(id)}`, { headers });
  }

  /** One page of changes after `since` (null: from the start), oldest first, tombstones included. */
  async changes({ since, limit } = {}) {
    return this.#client.request("GET", this.path, { query: { since, limit } });
  }

  /** Every change after `since`, page after page, with the cursor to pass next time. */
  async changesSince(since = null) {
    const records = [];
    let cursor = since;
    for (;;) {
      const page = await this.changes({ since: cursor, limit: 500 });
      records.push(...page.records);
      cursor = page.next_cursor ?? cursor;
      if (!page.has_more) return { records, cursor };
    }
  }

  /** This collection's changes as they happen, from the client's one live connection. */
  subscribe(listener, options = {}) {
    const { name, group, member } = this;
    return this.#client.changes.subscribe(listener, {
      ...options,
      filter: (change) => change.collection === name && (change.group_id ?? null) === group
        && (change.shared_by ?? null) === member
        || (change.kind === "group_removed" && group !== null && change.group_id === group),
    });
  }
}

// MARK: Groups

class Groups {
  #client;
  constructor(client) { this.#client = client; }

  #send(method, path, body) {
    return this.#client.request(method, path, body === undefined ? {} : { body });
  }

  /** Creates a group; the account is its owner. */
  async create({ name, kind, onOwnerDeleted, membersCanInvite }) {
    return this.#send("POST", "/v1/groups", clean({ name, kind, on_owner_deleted: onOwnerDeleted, members_can_invite: membersCanInvite }));
  }
  /** The account's groups, each with the account's role. */
  async list() { return (await this.#send("GET", "/v1/groups")).groups; }
  /** One group with its members. */
  async get(id) { return this.#send("GET", `/v1/groups/${segment(id)}`); }
  /** Renames the group or changes its settings (owner and admins). */
  async update(id, { name, onOwnerDeleted, membersCanInvite }) {
    return this.#send("PATCH", `/v1/groups/${segment(id)}`, clean({ name, on_owner_deleted: onOwnerDeleted, members_can_invite: membersCanInvite }));
  }
  /** Dissolves the group with its records (the owner, a recent sign-in). */
  async dissolve(id) { await this.#send("DELETE", `/v1/groups/${segment(id)}`); }
  /** A new invite: its `code` and `url` are shown only now. */
  async invite(id, { role, maxUses, expiresIn } = {}) {
    return this.#send("POST", `/v1/groups/${segment(id)}/invites`, clean({ role, max_uses: maxUses, expires_in: expiresIn }));
  }
  /** Pending invites, without codes (owner and admins). */
  async invites(id) { return (await this.#send("GET", `/v1/groups/${segment(id)}/invites`)).invites; }
  /** Revokes an invite. */
  async revokeInvite(id, inviteId) { await this.#send("DELETE", `/v1/groups/${segment(id)}/invites/${segment(inviteId)}`); }
  /** What a code joins, before joining. */
  async preview(code) { return this.#send("GET", `/v1/invites/${segment(inviteCode(code))}`); }
  /** Joins the group a code (or an invite's URL) invites to. */
  async join(code) { return this.#send("POST", `/v1/invites/${segment(inviteCode(code))}/accept`); }
  /** Changes a member's role (the owner). */
  async setRole(id, userId, role) { return this.#send("PATCH", `/v1/groups/${segment(id)}/members/${segment(userId)}`, { role }); }
  /** Whether the other members see this account's email. */
  async shareEmail(id, share) { return this.#send("PATCH", `/v1/groups/${segment(id)}/members/me`, { share_email: !!share }); }
  /** Removes a member. */
  async removeMember(id, userId) { await this.#send("DELETE", `/v1/groups/${segment(id)}/members/${segment(userId)}`); }
  /** Leaves the group (the owner transfers it first). */
  async leave(id) { await this.#send("POST", `/v1/groups/${segment(id)}/leave`); }
  /** Hands the group to another member. */
  async transfer(id, userId) { return this.#send("POST", `/v1/groups/${segment(id)}/transfer`, { user_id: userId }); }
  /** Sets who reads and writes one of the group's collections. */
  async setPolicy(id, collection, { read, write }) {
    return this.#send("PUT", `/v1/groups/${segment(id)}/policies/${segment(collection)}`, clean({ read, write }));
  }
  /** The policy in force for one of the group's collections. */
  async policy(id, collection) { return this.#send("GET", `/v1/groups/${segment(id)}/policies/${segment(collection)}`); }
  /** Shares one of this account's collections with the group, read-only for the others. */
  async share(id, collection) { return this.#send("PUT", `/v1/groups/${segment(id)}/shares/${segment(collection)}`); }
  /** Stops sharing a collection. */
  async unshare(id, collection) { await this.#send("DELETE", `/v1/groups/${segment(id)}/shares/${segment(collection)}`); }
  /** The collections members share with the group. */
  async shares(id) { return (await this.#send("GET", `/v1/groups/${segment(id)}/shares`)).shares; }
  /** One of the group's collections. */
  collection(id, name) { return this.#client.collection(name, { group: id }); }
  /** A collection `member` shares with the group (read-only). */
  sharedCollection(id, member, name) { return this.#client.collection(name, { group: id, member }); }
}

function clean(object) {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}

function inviteCode(text) {
  const trimmed = String(text).trim();
  const at = trimmed.indexOf("/join/");
  return at >= 0 ? trimmed.slice(at + 6) : trimmed;
}

// MARK: Live changes

/**
 * The client's one connection to `GET /v1/changes/stream`, shared by every subscriber: it opens with the first and
 * closes with the last. Read with `fetch` (EventSource cannot send the bearer), resumed from the last change it
 * delivered (kept in the storage per account, sent as `Last-Event-ID`), reconnected with growing, jittered pauses,
 * refreshed when the server says the token expired.
 */
class LiveFeed {
  #client;
  /** @type {Map<number, any>} */ #subscribers = new Map();
  #next = 0;
  /** @type {AbortController | null} */ #controller = null;
  #running = false;
  #live = false;
  #failures = 0;
  /** @type {(() => void) | null} */ #wake = null;
  #unlisten = null;
  /** Where this page's connection got to, and for which account: a reconnection resumes from here. */
  #cursor = null;
  #cursorAccount = null;

  constructor(client) { this.#client = client; }

  /** Whether the connection has caught up and delivers changes as they happen. */
  get isLive() { return this.#live; }

  /** How many subscribers share the connection. */
  get subscriberCount() { return this.#subscribers.size; }

  /** One page of the account's feed after `since` (`wait` seconds of long-poll when nothing is new). */
  async list({ since, limit, wait } = {}) {
    return this.#client.request("GET", "/v1/changes", { query: { since, limit, wait }, timeout: ((wait ?? 0) + 30) * 1000 });
  }

  /**
   * Calls `listener(change)` for each change of the feed (from where this browser left off for this account, then
   * live); `onLive(isLive)` when that changes; `onError(error)` when the feed stops for good.
   * @returns {() => void} unsubscribe
   */
  subscribe(listener, { filter, onLive, onError } = {}) {
    const id = ++this.#next;
    this.#subscribers.set(id, { listener, filter, onLive, onError });
    if (!this.#unlisten) {
      this.#unlisten = this.#client.onAuthStateChange((event) => {
        // Another account (or none): this connection belongs to the one before.
        if (event === "SIGNED_IN" || event === "SIGNED_OUT") this.#controller?.abort();
        this.#wake?.();
      });
    }
    if (!this.#running) this.#run();
    return () => {
      this.#subscribers.delete(id);
      if (this.#subscribers.size === 0) this.close();
    };
  }

  /** Closes the connection and forgets every subscriber. */
  close() {
    this.#subscribers.clear();
    this.#controller?.abort();
    this.#wake?.();
    this.#unlisten?.();
    this.#unlisten = null;
  }

  #setLive(live) {
    if (this.#live === live) return;
    this.#live = live;
    for (const subscriber of this.#subscribers.values()) safely(() => subscriber.onLive?.(live));
  }

  async #run() {
    this.#running = true;
    try {
      while (this.#subscribers.size > 0) {
        const session = this.#client.session;
        if (!session) {
          await new Promise((resolve) => { this.#wake = resolve; });
          this.#wake = null;
          continue;
        }
        const pause = await this.#connect(session);
        if (pause > 0 && this.#subscribers.size > 0) {
          await new Promise((resolve) => {
            const timer = setTimeout(resolve, pause);
            this.#wake = () => { clearTimeout(timer); resolve(undefined); };
          });
          this.#wake = null;
        }
      }
    } finally {
      this.#running = false;
      this.#setLive(false);
    }
  }

  /** After a refresh failed: at once when it signed the client out (the loop then waits for a session), else a pause. */
  #afterFailedRefresh() {
    return this.#client.session ? this.#backoff() : 0;
  }

  #backoff() {
    this.#failures += 1;
    const ceiling = Math.min(30_000, 250 * 2 ** (Math.min(this.#failures, 10) - 1));
    return ceiling / 2 + Math.random() * ceiling / 2;
  }

  /** One connection, read to its end; answers how long to pause before the next. */
  async #connect(session) {
    const client = this.#client;
    const account = session.user.id;
    const cursorKey = inside(client).keys.prefix + "cursor:" + account;
    let token;
    try {
      token = await client.getAccessToken();
    } catch (error) {
      // Signed out meanwhile: the loop waits for a session. Anything else (the network, a busy or limiting server)
      // is waited out.
      return error instanceof LanyardError && error.code === "NOT_SIGNED_IN" ? 0 : this.#backoff();
    }
    if (client.session?.user?.id !== account) return 0;
    if (this.#cursorAccount !== account) {
      // A new page (or another account): where this browser left off for the account, kept in the storage.
      const stored = await inside(client).store.read(cursorKey);
      this.#cursor = typeof stored === "string" ? stored : null;
      this.#cursorAccount = account;
    }
    const cursor = this.#cursor;
    const controller = new AbortController();
    this.#controller = controller;
    const headers = { Accept: "text/event-stream", Authorization: `Bearer ${token}`, "X-Client-Info": `lanyard-js/${version}` };
    if (typeof cursor === "string") headers["Last-Event-ID"] = cursor;
    let answer;
    try {
      answer = await inside(client).fetch(client.url + "/v1/changes/stream", { headers, signal: controller.signal, cache: "no-store" });
    } catch {
      return controller.signal.aborted ? 0 : this.#backoff();
    }
    if (!answer.ok) {
      let body = null;
      try { body = await answer.json(); } catch { /* not JSON */ }
      const error = LanyardError.fromAnswer(answer.status, body, answer.headers);
      if (error.code === "UNAUTHORIZED") {
        try {
          await client.refreshSession(token);
          return this.#failures > 0 ? this.#backoff() : (this.#failures++, 0);
        } catch {
          return this.#afterFailedRefresh();
        }
      }
      if (SESSION_ENDING.has(error.code)) {
        await inside(client).endSession(token, SESSION_ENDING.get(error.code));
        return 0;
      }
      if (error.status >= 500 || error.code === "RATE_LIMITED" || error.code === "INVALID_RESPONSE") {
        return Math.max(this.#backoff(), (error.retryAfter ?? 0) * 1000);
      }
      this.#stop(error);
      return 0;
    }
    const reader = answer.body.getReader();
    const decoder = new TextDecoder();
    const parser = new EventStreamParser();
    try {
      for (;;) {
        let part;
        try {
          part = await reader.read();
        } catch {
          break;
        }
        if (part.done) break;
        for (const event of parser.feed(decoder.decode(part.value, { stream: true }))) {
          const after = await this.#handle(event, token, cursorKey);
          if (after !== undefined) {
            controller.abort();
            return after;
          }
        }
      }
    } finally {
      this.#setLive(false);
      try { await reader.cancel(); } catch { /* closed already */ }
    }
    // Closed without `end`: the connection dropped (or was closed here).
    return controller.signal.aborted ? 0 : this.#backoff();
  }

  /** Handles one event; answers a pause when the connection is to be closed, else undefined. */
  async #handle(event, token, cursorKey) {
    const client = this.#client;
    switch (event.event) {
      case "change":
      case "group_removed":
      case "share_removed":
      case "access_removed": {
        let change;
        try { change = JSON.parse(event.data); } catch { return undefined; }
        change.kind = event.event === "change" ? "record" : event.event;
        change.cursor = event.id;
        if (event.id) {
          this.#cursor = event.id;
          await inside(client).store.write(cursorKey, event.id);
        }
        this.#failures = 0;
        for (const subscriber of [...this.#subscribers.values()]) {
          if (!subscriber.filter || subscriber.filter(change)) safely(() => subscriber.listener(change));
        }
        return undefined;
      }
      case "ready":
        this.#failures = 0;
        this.#setLive(true);
        return undefined;
      case "token_expiring":
        // Renewed now when it is close by this browser's clock; the stream itself ends at the expiry and resumes.
        client.getAccessToken().catch(() => {});
        return undefined;
      case "end": {
        let reason = "";
        try { reason = JSON.parse(event.data).reason ?? ""; } catch { /* no reason */ }
        return this.#ended(reason, token, cursorKey);
      }
      default:
        return undefined;
    }
  }

  async #ended(reason, token, cursorKey) {
    const client = this.#client;
    switch (reason) {
      case "token_expired":
        try {
          await client.refreshSession(token);
          return 0;
        } catch {
          return this.#afterFailedRefresh();
        }
      case "shutdown":
        return 50 + Math.random() * 450;
      case "replaced":
        this.#stop(new LanyardError("STREAM_REPLACED"));
        return 0;
      case "resync_required":
        this.#cursor = null;
        await inside(client).store.write(cursorKey, null);
        return 0;
      case "account_deleted":
        await inside(client).endSession(token, "account_deleted");
        return 0;
      case "account_disabled":
        await inside(client).endSession(token, "account_disabled");
        return 0;
      default:
        // signed_out, account_merged: this session is over, unless the client holds another one now; the refresh
        // tells, and signs out when the server says so.
        if (client.session && client.session.access_token !== token) return 0;
        try {
          await client.refreshSession(token);
        } catch {
          // Signed out, or the network: either way the loop decides next.
        }
        return this.#backoff();
    }
  }

  #stop(error) {
    const subscribers = [...this.#subscribers.values()];
    this.close();
    for (const subscriber of subscribers) safely(() => subscriber.onError?.(error));
  }
}

function safely(run) {
  try {
    const result = run();
    if (result && typeof result.then === "function") result.then(undefined, reportListenerError);
  } catch (error) {
    reportListenerError(error);
  }
}
