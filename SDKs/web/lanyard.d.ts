// Types of Lanyard's web SDK (lanyard.js). Answers are the server's JSON as the reference documents it (snake_case);
// what the app passes in is camelCase.

/** The SDK's version: the Lanyard release it ships with. */
export declare const version: string;

/** Every error code by name: the server's catalogue (reference section 3) and the client's own. */
export declare const ErrorCode: {
  readonly INVALID_REQUEST: "INVALID_REQUEST";
  readonly PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE";
  readonly UNSUPPORTED_PROVIDER: "UNSUPPORTED_PROVIDER";
  readonly INVALID_PROVIDER_TOKEN: "INVALID_PROVIDER_TOKEN";
  readonly PROVIDER_UNAVAILABLE: "PROVIDER_UNAVAILABLE";
  readonly UNAUTHORIZED: "UNAUTHORIZED";
  readonly INVALID_REFRESH_TOKEN: "INVALID_REFRESH_TOKEN";
  readonly REFRESH_TOKEN_REUSED: "REFRESH_TOKEN_REUSED";
  readonly PROVIDER_CONFLICT: "PROVIDER_CONFLICT";
  readonly CANNOT_UNLINK_ONLY_PROVIDER: "CANNOT_UNLINK_ONLY_PROVIDER";
  readonly PROVIDER_NOT_LINKED: "PROVIDER_NOT_LINKED";
  readonly REAUTHENTICATION_REQUIRED: "REAUTHENTICATION_REQUIRED";
  readonly RATE_LIMITED: "RATE_LIMITED";
  readonly NOT_FOUND: "NOT_FOUND";
  readonly FORBIDDEN: "FORBIDDEN";
  readonly VERSION_CONFLICT: "VERSION_CONFLICT";
  readonly ACCOUNT_DISABLED: "ACCOUNT_DISABLED";
  readonly SERVICE_UNAVAILABLE: "SERVICE_UNAVAILABLE";
  readonly INVITE_UNUSABLE: "INVITE_UNUSABLE";
  readonly GROUP_LIMIT: "GROUP_LIMIT";
  readonly INSUFFICIENT_ROLE: "INSUFFICIENT_ROLE";
  readonly OWNER_MUST_TRANSFER: "OWNER_MUST_TRANSFER";
  readonly MERGE_CONFLICT: "MERGE_CONFLICT";
  readonly ACCOUNT_MERGED: "ACCOUNT_MERGED";
  readonly INVALID_CODE: "INVALID_CODE";
  readonly EMAIL_NOT_CONFIRMED: "EMAIL_NOT_CONFIRMED";
  readonly INVALID_PASSKEY: "INVALID_PASSKEY";
  /** Redirect sign-in: `redirectTo` is not one of the server's `LANYARD_REDIRECT_URIS`. */
  readonly INVALID_REDIRECT_URI: "INVALID_REDIRECT_URI";
  /**
   * Redirect sign-in's code could not be exchanged: `details.reason` is the server's `expired`, `used`, `verifier` or
   * `redirect_uri`, or the client's own `state` (status 0: the answer's `state` is of no flow this browser started).
   * Start the sign-in again.
   */
  readonly INVALID_GRANT: "INVALID_GRANT";
  readonly INTERNAL_ERROR: "INTERNAL_ERROR";
  /** No session is held: sign in first. */
  readonly NOT_SIGNED_IN: "NOT_SIGNED_IN";
  /** The request did not reach the server or its answer did not arrive (`details.reason: "timeout"` for a timeout). The session is kept. */
  readonly NETWORK_ERROR: "NETWORK_ERROR";
  /** The server answered something that is not Lanyard's API (a proxy's error page, say). */
  readonly INVALID_RESPONSE: "INVALID_RESPONSE";
  /** The app's `AbortSignal` cancelled the call, or the person cancelled a redirect sign-in at the provider (`details.reason: "cancelled"`). */
  readonly ABORTED: "ABORTED";
  /** No WebAuthn here, or the person dismissed the passkey sheet (`details.name`, such as `NotAllowedError`). */
  readonly PASSKEY_UNAVAILABLE: "PASSKEY_UNAVAILABLE";
  /** The live feed stopped: the account opened more streams than the server allows, and this one was the oldest. */
  readonly STREAM_REPLACED: "STREAM_REPLACED";
};

/** One of `ErrorCode`'s values. */
export type ErrorCodeName = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Every failure of the SDK: a server's refusal (its catalogue code, HTTP status, message and details) or the client's
 * own (`NOT_SIGNED_IN`, `NETWORK_ERROR`, …, with status 0).
 *
 * ```js
 * try {
 *   await lanyard.link({ provider: "google", idToken });
 * } catch (error) {
 *   if (error instanceof LanyardError && error.code === ErrorCode.PROVIDER_CONFLICT) {
 *     show(error.details.reason === "identity_in_use" ? "That Google account has its own account" : error.message);
 *   } else throw error;
 * }
 * ```
 */
export declare class LanyardError extends Error {
  constructor(code: string, message?: string, extra?: { status?: number; details?: Record<string, any>; requestId?: string | null; retryAfter?: number | null; cause?: unknown });
  readonly name: "LanyardError";
  /** One of `ErrorCode`, or a code a newer server sends. */
  readonly code: ErrorCodeName | (string & {});
  /** The HTTP status; 0 when the server did not answer. */
  readonly status: number;
  /** The server's `details`: `reason`, `field`, `attempts_left`, `merged_into`, `retry_after`… (empty when none). */
  readonly details: Record<string, any>;
  /** The server's request id, to quote in a support request. */
  readonly requestId: string | null;
  /** Seconds to wait, for `RATE_LIMITED` and `SERVICE_UNAVAILABLE`. */
  readonly retryAfter: number | null;
  /** `ErrorCode` again, on the class. */
  static readonly codes: typeof ErrorCode;
  /** The error a non-2xx answer stands for. */
  static fromAnswer(status: number, body: unknown, headers: Headers | null): LanyardError;
}

/**
 * A storage kept in memory: nothing survives a reload, and no other tab sees it.
 *
 * ```js
 * const lanyard = createClient({ url, storage: new MemoryStorage() });   // or storage: "memory"
 * ```
 */
export declare class MemoryStorage implements Storage {
  readonly length: number;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
  clear(): void;
  key(index: number): string | null;
  [name: string]: any;
}

/** Splits a `text/event-stream` into events as its text arrives (what the live feed reads the stream with). */
export declare class EventStreamParser {
  /**
   * The events `text` completes.
   *
   * ```js
   * const parser = new EventStreamParser();
   * parser.feed("event: ready\ndata: {}\n\n");   // [{ event: "ready", id: null, data: "{}" }]
   * ```
   */
  feed(text: string): { event: string; id: string | null; data: string }[];
}

/**
 * A storage the app provides: `localStorage`'s three calls, answering at once or with a promise (an IndexedDB
 * wrapper, say). Tabs that share it share the session.
 */
export interface SessionStorage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/** What makes and uses passkeys, in WebAuthn's JSON (the browser's `navigator.credentials` unless the app gives one). */
export interface PasskeyAuthenticator {
  create(options: PublicKeyCredentialCreationOptionsJSON, extra?: { signal?: AbortSignal }): Promise<RegistrationResponseJSON>;
  get(options: PublicKeyCredentialRequestOptionsJSON, extra?: { signal?: AbortSignal; mediation?: CredentialMediationRequirement }): Promise<AuthenticationResponseJSON>;
}

/** `createClient`'s settings. */
export interface ClientOptions {
  /** The Lanyard server, such as `https://auth.example.com`. */
  url: string;
  /**
   * Where the session is kept: `localStorage` by default where there is one (tabs of the origin share it), `"memory"`
   * (this page only), or the app's own.
   */
  storage?: SessionStorage | "memory";
  /** Whether tabs coordinate (lock, storage events, BroadcastChannel); on for any storage but memory. */
  crossTab?: boolean;
  /** Milliseconds before a request without an answer fails with `NETWORK_ERROR` (30 000). */
  timeout?: number;
  /** Milliseconds a refresh request may take (10 000). */
  refreshTimeout?: number;
  /** Milliseconds a tab waits for another tab's refresh before it takes the lock over (5 000; keep it under the server's reuse grace). */
  lockTimeout?: number;
  /** The `fetch` requests go through (the global one by default). */
  fetch?: typeof fetch;
  /** Makes and uses passkeys; `navigator.credentials` by default. */
  passkeyAuthenticator?: PasskeyAuthenticator;
}

/** A sign-in method's name: `apple`, `google`, `email`, `passkey`, or an OpenID Connect provider the server offers. */
export type ProviderName = "apple" | "google" | "email" | "passkey" | (string & {});

/** One sign-in method of an account. */
export interface Identity {
  provider: ProviderName;
  email: string | null;
  email_verified: boolean;
  is_private_email: boolean;
  linked_at: string;
  last_sign_in_at: string | null;
  primary: boolean;
  [field: string]: any;
}

/** The account, as the server describes it. */
export interface User {
  id: string;
  created_at: string;
  is_anonymous: boolean;
  display_name: string | null;
  email: string | null;
  identities: Identity[];
  [field: string]: any;
}

/** `GET /v1/users/me`: the user with its methods and the recovery nudge. */
export interface Me extends User {
  linked_providers: ProviderName[];
  recovery?: { methods: number };
  /**
   * The id the system the app moved from knew this account by (a Firebase uid, a Supabase user id, a Clerk `user_…`),
   * and that system's name; null for an account Lanyard made itself (reference section 24).
   */
  legacy_id?: string | null;
  legacy_source?: string | null;
}

/** The session a client holds and stores: the server's session response, with `expires_at` (Unix seconds). */
export interface Session {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: User;
  linked_providers: ProviderName[];
}

/** What a sign-in answers. */
export interface SignInResult {
  session: Session;
  user: User;
  /** The account was created by this sign-in. */
  isNewUser: boolean;
  /** The guest account merged into this one by this sign-in (its data came along). */
  mergedFrom: string | null;
}

/** `signInWithRedirect`'s settings. */
export interface RedirectOptions {
  /**
   * The page the browser comes back to, where `handleRedirect()` runs: exactly one of the server's
   * `LANYARD_REDIRECT_URIS` (`lanyard dev` takes any `http://localhost:*` or `http://127.0.0.1:*` page). This page
   * without its query and fragment by default.
   */
  redirectTo?: string;
  /** `"signin"` (the default; a guest held is upgraded or merged) or `"link"` (adds the provider to the signed-in account). */
  intent?: "signin" | "link";
  /**
   * How the provider's page is opened: `location.assign` by default; a function of the URL to open it another way (a
   * popup, a desktop shell's browser); `false` to only answer the URL.
   */
  navigate?: boolean | ((url: string) => void);
}

/** What happened to the session. */
export type AuthChangeEvent =
  | "INITIAL_SESSION"
  | "SIGNED_IN"
  | "SIGNED_OUT"
  | "TOKEN_REFRESHED"
  | "USER_UPDATED"
  | "LINKED"
  | "UNLINKED"
  | "MERGED";

/** Why the client signed out (`SIGNED_OUT`'s details). */
export type SignOutReason =
  | "user_requested"
  | "account_deleted"
  | "session_ended"
  | "refresh_token_reused"
  | "account_disabled"
  | "account_merged";

/** An auth event's details. */
export interface AuthChangeDetails {
  /** `SIGNED_OUT`: why. */
  reason?: SignOutReason;
  /** `SIGNED_OUT` with `account_merged`: the account it went into. */
  into?: string;
  /** `LINKED`, `UNLINKED`: the method. */
  provider?: ProviderName;
  /** `MERGED`: the guest account merged into this one. */
  from?: string;
}

/** One signed-in device of the account. */
export interface DeviceSession {
  id: string;
  created_at: string;
  last_refreshed_at: string;
  expires_at: string;
  auth_time: string;
  method: string;
  client_ip: string | null;
  user_agent: string | null;
  current: boolean;
}

/** A record as the server stored it. */
export interface StoredRecord<Data = Record<string, any>> {
  id: string;
  collection: string;
  version: number;
  updated_at: string;
  data: Data;
  deleted?: boolean;
  group_id?: string;
  created_by?: string;
  updated_by?: string;
}

/** One page of a collection's changes. */
export interface RecordPage<Data = Record<string, any>> {
  records: (StoredRecord<Data> & { deleted?: boolean; data: Data | null })[];
  next_cursor: string | null;
  has_more: boolean;
}

/** One change of the account's feed, as the live feed delivers it. */
export interface Change<Data = Record<string, any>> {
  /** A record written or deleted, or a group, a shared collection or read access gone (drop those records). */
  kind: "record" | "group_removed" | "share_removed" | "access_removed";
  collection: string;
  id: string;
  version: number;
  updated_at: string;
  deleted: boolean;
  data: Data | null;
  group_id: string | null;
  shared_by: string | null;
  collection_cursor?: string;
  created_by?: string;
  updated_by?: string;
  /** The change's place in the feed. */
  cursor: string | null;
}

/** A page of the feed (`GET /v1/changes`). */
export interface FeedPage {
  changes: Omit<Change, "kind" | "cursor">[];
  next_cursor: string | null;
  has_more: boolean;
  removed_groups?: string[];
}

/** What `subscribe` takes beside the listener. */
export interface SubscribeOptions {
  /** Called with true once the feed has caught up and delivers changes as they happen, false while (re)connecting. */
  onLive?: (isLive: boolean) => void;
  /** Called once when the feed stops for good (`STREAM_REPLACED`, or a refusal that no retry mends). */
  onError?: (error: LanyardError) => void;
  /** Only the changes it takes. */
  filter?: (change: Change) => boolean;
}

/** A group: `role` is the caller's; `members` on `get`. */
export interface Group {
  id: string;
  name: string;
  kind: "family" | "team";
  created_at: string;
  on_owner_deleted: "transfer" | "dissolve";
  members_can_invite: boolean;
  member_count: number;
  role: GroupRole;
  members?: GroupMember[];
}

export type GroupRole = "owner" | "admin" | "member" | "viewer";

export interface GroupMember {
  user_id: string;
  display_name: string | null;
  role: GroupRole;
  joined_at: string;
  email?: string;
}

export interface GroupInvite {
  id: string;
  code?: string;
  url?: string;
  role: GroupRole;
  max_uses: number;
  uses: number;
  expires_at: string;
  created_by: string;
}

/** WebAuthn's options and responses, as JSON (Level 3). */
export type PublicKeyCredentialCreationOptionsJSON = Record<string, any>;
export type PublicKeyCredentialRequestOptionsJSON = Record<string, any>;
export type RegistrationResponseJSON = Record<string, any>;
export type AuthenticationResponseJSON = Record<string, any>;

/** A passkey of the account. */
export interface Passkey {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  backed_up: boolean;
}

/** A merge's proof of the other account. */
export type MergeProof =
  | { provider: ProviderName; idToken: string }
  | { provider: "email"; flowId: string; flowSecret: string; code: string }
  | { provider: "passkey"; credential: AuthenticationResponseJSON };

/** A merge's report (reference section 15). */
export interface MergeReport {
  merge_id: string | null;
  into: string;
  from: string;
  identities_moved: ProviderName[];
  identities_released: ProviderName[];
  records_moved: number;
  conflicts: { collection: string; id: string; group_id: string | null; winner: "current" | "other" }[];
  groups: any;
  dry_run: boolean;
  [field: string]: any;
}

/**
 * A client for one Lanyard server: make one per page and keep it.
 *
 * ```js
 * import { createClient } from "https://auth.example.com/sdk/lanyard.js";
 * const lanyard = createClient({ url: "https://auth.example.com" });
 * ```
 */
export declare function createClient(options: ClientOptions): LanyardClient;

/**
 * A nonce for Sign in with Apple or Google: `hashed` (or `raw`) goes to the provider's button, `raw` to Lanyard,
 * which accepts a token carrying either.
 *
 * ```js
 * const nonce = await createNonce();
 * AppleID.auth.init({ clientId, scope: "name email", redirectURI, usePopup: true, nonce: nonce.hashed });
 * const { authorization } = await AppleID.auth.signIn();
 * await lanyard.signInWithApple({ idToken: authorization.id_token, nonce: nonce.raw });
 * ```
 */
export declare function createNonce(): Promise<{ raw: string; hashed: string }>;

/** A client of one Lanyard server (`createClient`). Every call is safe from any tab at any time. */
export interface LanyardClient {
  /** The server's base URL. */
  readonly url: string;
  /**
   * The session as last known, or null; no request. Right after `createClient` with `localStorage`.
   *
   * ```js
   * if (lanyard.session) showHome(lanyard.user); else showSignIn();
   * ```
   */
  readonly session: Session | null;
  /** The signed-in user as last known, or null. */
  readonly user: User | null;

  /**
   * Calls `callback(event, session, details)` on every change of the session, in this tab or another, starting with
   * `INITIAL_SESSION`. It runs after the client released every lock and is not awaited, so it may await any call:
   * every call settles, and one the end of the session refused (a sign-out in another tab meanwhile) fails with
   * `NOT_SIGNED_IN` or `UNAUTHORIZED`. No call answered after a sign-out signs the browser back in.
   *
   * ```js
   * const unsubscribe = lanyard.onAuthStateChange(async (event, session, details) => {
   *   if (event === "SIGNED_OUT") showSignIn(details.reason);
   *   else if (session) render(await lanyard.me());
   * });
   * ```
   */
  onAuthStateChange(callback: (event: AuthChangeEvent, session: Session | null, details: AuthChangeDetails) => void | Promise<void>): () => void;

  /**
   * The session with a fresh access token (renewed first when it expired or is about to); null when signed out. A
   * network error keeps the session: it is answered as held.
   *
   * ```js
   * const session = await lanyard.getSession();
   * ```
   */
  getSession(): Promise<Session | null>;

  /**
   * A valid access token for the app's own backend, which verifies it with the server's JWKS.
   *
   * ```js
   * const token = await lanyard.getAccessToken();
   * await fetch("/api/notes", { headers: { Authorization: `Bearer ${token}` } });
   * ```
   */
  getAccessToken(): Promise<string>;

  /**
   * Renews the session now (one refresh across tabs; a session another tab renewed already is taken as it is).
   *
   * ```js
   * await lanyard.refreshSession();
   * ```
   */
  refreshSession(staleAccessToken?: string): Promise<Session>;

  /**
   * The providers the server offers, in its order: which buttons to show.
   *
   * ```js
   * for (const provider of await lanyard.providers()) addButton(provider.display_name);
   * ```
   */
  providers(): Promise<{ name: ProviderName; display_name: string; kind: string }[]>;

  /**
   * Signs in with a provider's ID token. A guest session held is upgraded (or merged into the account the token
   * belongs to: `mergedFrom`).
   *
   * ```js
   * await lanyard.signInWithIdToken({ provider: "microsoft", idToken, nonce: nonce.raw });
   * ```
   */
  signInWithIdToken(options: { provider: ProviderName; idToken: string; nonce?: string; givenName?: string; familyName?: string; authorizationCode?: string }): Promise<SignInResult>;

  /**
   * Sign in with Apple, from Apple JS's answer; Apple gives the name only the first time.
   *
   * ```js
   * const { authorization, user } = await AppleID.auth.signIn();
   * await lanyard.signInWithApple({ idToken: authorization.id_token, nonce: nonce.raw,
   *   firstName: user?.name?.firstName, lastName: user?.name?.lastName });
   * ```
   */
  signInWithApple(options: { idToken: string; nonce?: string; firstName?: string; lastName?: string; authorizationCode?: string }): Promise<SignInResult>;

  /**
   * Sign in with Google, from Google Identity Services' callback.
   *
   * ```js
   * google.accounts.id.initialize({ client_id, nonce: nonce.raw,
   *   callback: ({ credential }) => lanyard.signInWithGoogle({ credential, nonce: nonce.raw }) });
   * ```
   */
  signInWithGoogle(options: { idToken?: string; credential?: string; nonce?: string }): Promise<SignInResult>;

  /**
   * A guest: an account with no sign-in method yet, which keeps its data when the person signs in later.
   *
   * ```js
   * if (!lanyard.session) await lanyard.signInAnonymously();
   * ```
   */
  signInAnonymously(): Promise<SignInResult>;

  /**
   * Switching day (reference section 24): the bridge from Firebase Auth. Sends the signed-in user's current Firebase
   * ID token once (`POST /v1/auth/migrate/firebase`) and signs in with the Lanyard session it answers, as any sign-in
   * does: stored, other tabs told, `SIGNED_IN`. No sign-in screen: the account imported with that uid answers (or
   * one made from the token's Apple and Google identities; an anonymous Firebase user comes across as a guest), and
   * `me()` shows the uid as `legacy_id`.
   *
   * A signed-in (not guest) session held already crossed, or signed in another way: it is answered as is
   * (`isNewUser: false`) and nothing is sent, so an app may call this on every start until it drops the old SDK. A
   * guest held is refused (`INVALID_REQUEST`, `details.reason: "guest_session"`): the bridge cannot bring a guest's
   * data along, so bridge before starting a guest, or sign the guest out first. Throws `LanyardError`:
   * `INVALID_PROVIDER_TOKEN` (`details.reason`: `expired`, `issuer` for another project, `signature`, `malformed`…),
   * `NOT_FOUND` (`reason: "not_imported"`), `PROVIDER_CONFLICT` (its identities are another legacy account's),
   * `ACCOUNT_DISABLED`, `UNSUPPORTED_PROVIDER` (the server has no Firebase project configured).
   *
   * ```js
   * const old = getAuth().currentUser;
   * if (old && !lanyard.session) {
   *   await lanyard.migrateFromFirebase(await old.getIdToken());
   *   await signOut(getAuth()); // the old session's work is done
   * }
   * ```
   */
  migrateFromFirebase(idToken: string): Promise<SignInResult>;

  /**
   * The bridge from Supabase Auth, as `migrateFromFirebase` (the same rules for a session held): the signed-in user's
   * current access token. An anonymous Supabase user comes across as a guest; `INVALID_PROVIDER_TOKEN` with
   * `role` for the anon key, `signature` for another project's secret.
   *
   * ```js
   * const { data } = await supabase.auth.getSession();
   * if (data.session && !lanyard.session) await lanyard.migrateFromSupabase(data.session.access_token);
   * ```
   */
  migrateFromSupabase(accessToken: string): Promise<SignInResult>;

  /**
   * The bridge from Clerk, as `migrateFromFirebase` (the same rules for a session held): the signed-in user's current
   * session token. The user must have been imported (`NOT_FOUND`, `reason: "not_imported"`, otherwise);
   * `INVALID_PROVIDER_TOKEN` with `impersonation`, `pending` or `audience` (a JWT template's token).
   *
   * ```js
   * if (Clerk.session && !lanyard.session) await lanyard.migrateFromClerk(await Clerk.session.getToken());
   * ```
   */
  migrateFromClerk(sessionToken: string): Promise<SignInResult>;

  /**
   * Redirect sign-in (reference section 23): sends the browser to the provider's own page (Apple, Google, any OpenID
   * Connect provider the server offers; the emulator's page under `lanyard dev`) with PKCE. A verifier and a `state`
   * stay in the client's storage, so `redirectTo`'s page must share it (the same origin with `localStorage`, the
   * default). There, `handleRedirect()` finishes. With `intent: "link"` the provider is added to the signed-in account.
   *
   * ```js
   * appleButton.onclick = () => lanyard.signInWithRedirect("apple", { redirectTo: "https://app.example.com/signed-in" });
   * linkGoogle.onclick = () => lanyard.signInWithRedirect("google", { intent: "link" });
   * ```
   */
  signInWithRedirect(provider: ProviderName, options?: RedirectOptions): Promise<{ url: string }>;

  /**
   * On the page the provider came back to: checks the answer's `state` against the flows this browser started,
   * trades its `code` (with the stored verifier) for a session — a guest held is upgraded or merged, other tabs hear
   * the sign-in — or finishes a link; then removes `code` and `state` from the address (`history.replaceState`) and
   * forgets the verifier. Null when the address carries no redirect answer. Throws `LanyardError`: `INVALID_GRANT`
   * (start again; `details.reason`), `ABORTED` (the person cancelled at the provider), `INVALID_PROVIDER_TOKEN`,
   * `PROVIDER_UNAVAILABLE`, `PROVIDER_CONFLICT` (a link to a provider account someone else has).
   *
   * ```js
   * try {
   *   const result = await lanyard.handleRedirect();
   *   if (result) showHome(result.user);
   * } catch (error) {
   *   showSignIn(error.message);
   * }
   * ```
   */
  handleRedirect(options?: { url?: string }): Promise<SignInResult | null>;

  /**
   * The account from the server; the held user is updated, and `USER_UPDATED` told only when that changed something
   * (so a callback may call it on every event without answering its own events). An answer that arrives after this
   * browser signed out, or signed another account in, changes nothing.
   *
   * ```js
   * const me = await lanyard.me();
   * if (me.recovery?.methods === 1) suggestAddingEmail();
   * ```
   */
  me(): Promise<Me>;

  /**
   * Sets the name the account shows; null clears it.
   *
   * ```js
   * await lanyard.updateProfile({ displayName: "Ada" });
   * ```
   */
  updateProfile(options: { displayName: string | null }): Promise<User>;

  /**
   * Adds a sign-in method to the account; never signs anyone out. `PROVIDER_CONFLICT` when it is someone else's.
   *
   * ```js
   * await lanyard.link({ provider: "google", idToken: credential });
   * ```
   */
  link(options: { provider: ProviderName; idToken: string; nonce?: string }): Promise<{ linked_providers: ProviderName[]; message: string; user?: User }>;

  /**
   * Removes a sign-in method: a recent sign-in (`REAUTHENTICATION_REQUIRED`), never the last (`CANNOT_UNLINK_ONLY_PROVIDER`).
   *
   * ```js
   * await lanyard.unlink("google");
   * ```
   */
  unlink(provider: ProviderName): Promise<{ linked_providers: ProviderName[]; message: string }>;

  /**
   * Proves again who the person is with a fresh ID token of one of the account's methods; the session is renewed.
   * `NOT_SIGNED_IN` when this browser signed out while the request was on its way (the renewed session is not kept).
   *
   * ```js
   * await lanyard.reauthenticate({ provider: "apple", idToken, nonce: nonce.raw });
   * await lanyard.deleteAccount();
   * ```
   */
  reauthenticate(options: { provider: ProviderName; idToken: string; nonce?: string }): Promise<User>;

  /**
   * Merges another account of the same person into this one (`keep: "other"`: this one into it, and the client
   * takes the other's session). An ID token proves the other account with the server's nonce, so pass a function of
   * it; an email code or a passkey needs none.
   *
   * ```js
   * const report = await lanyard.merge({
   *   proof: async (nonce) => ({ provider: "google", idToken: await googleSignIn({ nonce }) }),
   *   keep: "current",
   * });
   * ```
   */
  merge(options: { proof: MergeProof | ((nonce: string) => MergeProof | Promise<MergeProof>); keep?: "current" | "other"; onConflict?: "newer" | "current" | "other"; release?: ProviderName[]; dryRun?: boolean }): Promise<MergeReport>;

  /**
   * Signs out this browser (`local`, every tab of it), every device (`global`) or every other device (`others`).
   * The browser forgets its session even when the server cannot be reached (the error is still thrown).
   *
   * ```js
   * await lanyard.signOut();
   * ```
   */
  signOut(options?: { scope?: "local" | "global" | "others" }): Promise<void>;

  /**
   * Deletes the account with its methods, sessions and data (a recent sign-in), and signs out.
   *
   * ```js
   * await lanyard.deleteAccount();
   * ```
   */
  deleteAccount(): Promise<void>;

  /**
   * One collection of records: the account's own, a group's (`{ group }`), or one a member shares with a group
   * (`{ group, member }`, read-only).
   *
   * ```js
   * const notes = lanyard.collection("notes");
   * const saved = await notes.put("n1", { text: "Buy milk" });
   * await notes.put("n1", { text: "Buy oat milk" }, { ifVersion: saved.version });
   * ```
   */
  collection<Data = Record<string, any>>(name: string, scope?: { group?: string; member?: string }): Collection<Data>;

  /**
   * Sends one request to the API with the session's bearer (a 401 refreshes once and retries once), for a route this
   * SDK has no call for. Answers the parsed JSON.
   *
   * ```js
   * const merge = await lanyard.request("GET", `/v1/users/me/merges/${id}`);
   * ```
   */
  request<T = any>(method: string, path: string, options?: { body?: unknown; query?: Record<string, string | number | null | undefined>; headers?: Record<string, string>; auth?: boolean; timeout?: number; signal?: AbortSignal }): Promise<T>;

  /**
   * Stops listening to other tabs and closes the live connection (a page that goes away needs nothing of this).
   *
   * ```js
   * lanyard.close();
   * ```
   */
  close(): void;

  /** Sign-in by a code or a link in one mail, and an address as a sign-in method. */
  readonly email: EmailAuth;
  /** Passkeys through `navigator.credentials`. */
  readonly passkeys: PasskeyAuth;
  /** The account's signed-in devices. */
  readonly sessions: Sessions;
  /** Groups: family sharing. */
  readonly groups: Groups;
  /** Live changes on one connection per client. */
  readonly changes: LiveFeed;
}

/**
 * Email: `start` sends one mail with a 6-digit code and a link; the flow finishes on this browser with the code or once
 * the link was confirmed on any device. Show the flow's `match`: the link's page asks for it.
 *
 * ```js
 * const flow = await lanyard.email.start("ada@example.com");
 * show(`Type the code from the mail, or open its link and enter ${flow.match}`);
 * await flow.verify(typedCode);          // or: await flow.awaitConfirmation();
 * ```
 */
export interface EmailAuth {
  /**
   * Sends a sign-in mail (a guest is upgraded or merged when it finishes); the same answer whether or not the address
   * has an account. `redirectTo` (one of the server's `LANYARD_EMAIL_REDIRECT_URLS`) is where the link's page sends
   * the browser, with `?flow_id=`.
   *
   * ```js
   * const flow = await lanyard.email.start(address, { redirectTo: "https://app.example.com/signed-in" });
   * ```
   */
  start(email: string, options?: { redirectTo?: string }): Promise<EmailFlow>;
  /**
   * Sends a mail that adds `email` to the signed-in account once its code is verified.
   *
   * ```js
   * const flow = await lanyard.email.link("ada@example.com");
   * await flow.verify(code);
   * ```
   */
  link(email: string): Promise<EmailFlow>;
  /**
   * Sends a mail that proves the person still holds the account's address (before unlinking or deleting).
   *
   * ```js
   * await (await lanyard.email.reauthenticate("ada@example.com")).verify(code);
   * ```
   */
  reauthenticate(email: string): Promise<EmailFlow>;
  /**
   * A flow this browser started, found again (its secret is kept in the storage until it ends): the page the link's
   * redirect opens finishes it.
   *
   * ```js
   * const flow = await lanyard.email.resume(new URL(location.href).searchParams.get("flow_id"));
   * if (flow) await flow.awaitConfirmation();
   * ```
   */
  resume(flowId: string): Promise<EmailFlow | null>;
}

/** One mail's flow, held by the browser that started it. */
export interface EmailFlow {
  readonly flowId: string;
  readonly flowSecret: string;
  /** The number to show: the link's page asks the person to enter it. */
  readonly match: number;
  readonly expiresIn: number;
  /** Seconds before another mail may be asked for. */
  readonly resendAfter: number;
  readonly intent: "signin" | "link" | "reauthenticate";
  readonly email: string;
  /**
   * Finishes with the 6-digit code; a wrong one is `INVALID_CODE` with `details.attempts_left`.
   *
   * ```js
   * const { user, isNewUser } = await flow.verify("123456");
   * ```
   */
  verify(code: string): Promise<SignInResult>;
  /**
   * Waits (a long-poll, again and again) until the link was confirmed, then finishes here; `EMAIL_NOT_CONFIRMED`
   * after `timeout` ms (the flow's life by default).
   *
   * ```js
   * const controller = new AbortController();
   * const { user } = await flow.awaitConfirmation({ signal: controller.signal });
   * ```
   */
  awaitConfirmation(options?: { timeout?: number; signal?: AbortSignal }): Promise<SignInResult>;
  /**
   * This flow's code as a merge proof of the address's account.
   *
   * ```js
   * await lanyard.merge({ proof: flow.proof(code) });
   * ```
   */
  proof(code: string): MergeProof;
}

/**
 * Passkeys through `navigator.credentials`, with the server's WebAuthn JSON.
 *
 * ```js
 * await lanyard.passkeys.register({ name: "This laptop" });
 * await lanyard.passkeys.signIn();
 * ```
 */
export interface PasskeyAuth {
  /**
   * Makes a passkey for the signed-in account and adds it (a guest is upgraded in place; a full account needs a recent
   * sign-in). `PASSKEY_UNAVAILABLE` when the person dismissed the sheet.
   *
   * ```js
   * const passkey = await lanyard.passkeys.register({ name: "Ada's laptop" });
   * ```
   */
  register(options?: { name?: string; signal?: AbortSignal }): Promise<Passkey>;
  /**
   * Signs in with a passkey the person picks (no account named); a guest's data comes along.
   *
   * ```js
   * const { user } = await lanyard.passkeys.signIn();
   * ```
   */
  signIn(options?: { signal?: AbortSignal; mediation?: CredentialMediationRequirement }): Promise<SignInResult>;
  /**
   * Proves the person is still there with one of the account's passkeys; the session is renewed.
   *
   * ```js
   * await lanyard.passkeys.reauthenticate();
   * ```
   */
  reauthenticate(options?: { signal?: AbortSignal }): Promise<User>;
  /**
   * An assertion for a fresh challenge, sent nowhere: a merge's proof.
   *
   * ```js
   * await lanyard.merge({ proof: { provider: "passkey", credential: await lanyard.passkeys.assertion() } });
   * ```
   */
  assertion(options?: { signal?: AbortSignal; mediation?: CredentialMediationRequirement }): Promise<AuthenticationResponseJSON>;
  /**
   * The account's passkeys, oldest first.
   *
   * ```js
   * const passkeys = await lanyard.passkeys.list();
   * ```
   */
  list(): Promise<Passkey[]>;
  /**
   * Renames a passkey.
   *
   * ```js
   * await lanyard.passkeys.rename(passkey.id, "Work laptop");
   * ```
   */
  rename(id: string, name: string): Promise<Passkey>;
  /**
   * Removes a passkey (a recent sign-in; never the account's last way in).
   *
   * ```js
   * await lanyard.passkeys.remove(passkey.id);
   * ```
   */
  remove(id: string): Promise<{ linked_providers: ProviderName[]; message: string }>;
}

/**
 * The account's signed-in devices.
 *
 * ```js
 * for (const device of await lanyard.sessions.list()) if (!device.current) await lanyard.sessions.revoke(device.id);
 * ```
 */
export interface Sessions {
  /**
   * The account's sessions; `current` marks this browser's.
   *
   * ```js
   * const devices = await lanyard.sessions.list();
   * ```
   */
  list(): Promise<DeviceSession[]>;
  /**
   * Signs one device out; this browser's own session signs the client out.
   *
   * ```js
   * await lanyard.sessions.revoke(lostPhone.id);
   * ```
   */
  revoke(id: string): Promise<void>;
}

/**
 * Records of one collection (reference section 7): versions for safe concurrent edits, tombstones, changes page by
 * page and live.
 *
 * ```js
 * const notes = lanyard.collection("notes");
 * const stop = notes.subscribe((change) => change.deleted ? remove(change.id) : upsert(change.id, change.data));
 * ```
 */
export interface Collection<Data = Record<string, any>> {
  readonly name: string;
  /** The group whose collection it is; null for the account's own. */
  readonly group: string | null;
  /** The member who shares it with the group; null otherwise. */
  readonly member: string | null;
  /**
   * Record `id`, or null when there is none.
   *
   * ```js
   * const note = await notes.get("n1");
   * ```
   */
  get(id: string): Promise<StoredRecord<Data> | null>;
  /**
   * Creates or replaces record `id`; with `ifVersion`, only when the stored record is still at that version
   * (`VERSION_CONFLICT` otherwise).
   *
   * ```js
   * await notes.put("n1", { text: "hi" }, { ifVersion: 3 });
   * ```
   */
  put(id: string, data: Data, options?: { ifVersion?: number }): Promise<StoredRecord<Data>>;
  /**
   * Deletes record `id`, leaving a tombstone.
   *
   * ```js
   * await notes.delete("n1");
   * ```
   */
  delete(id: string, options?: { ifVersion?: number }): Promise<void>;
  /**
   * One page of changes after `since` (none: from the start).
   *
   * ```js
   * const page = await notes.changes({ since: cursor, limit: 100 });
   * ```
   */
  changes(options?: { since?: string | null; limit?: number }): Promise<RecordPage<Data>>;
  /**
   * Every change after `since`, page after page, and the cursor to pass next time.
   *
   * ```js
   * const { records, cursor } = await notes.changesSince(localStorage.notesCursor ?? null);
   * ```
   */
  changesSince(since?: string | null): Promise<{ records: RecordPage<Data>["records"]; cursor: string | null }>;
  /**
   * This collection's changes, live, from the client's one connection (see `LiveFeed.subscribe`).
   *
   * ```js
   * const stop = notes.subscribe((change) => apply(change), { onLive: (live) => spinner.hidden = live });
   * ```
   */
  subscribe(listener: (change: Change<Data>) => void, options?: SubscribeOptions): () => void;
}

/**
 * Groups (reference section 14): create, invite with a code, join, roles, group collections, shares.
 *
 * ```js
 * const family = await lanyard.groups.create({ name: "The Smiths" });
 * const invite = await lanyard.groups.invite(family.id, { role: "member" });
 * // on another account: await lanyard.groups.join(invite.code);
 * ```
 */
export interface Groups {
  /**
   * Creates a group; the account is its owner (guests cannot create groups, but can join one).
   *
   * ```js
   * const family = await lanyard.groups.create({ name: "The Smiths", kind: "family" });
   * ```
   */
  create(options: { name: string; kind?: "family" | "team"; onOwnerDeleted?: "transfer" | "dissolve"; membersCanInvite?: boolean }): Promise<Group>;
  /**
   * The account's groups, each with the account's `role`.
   *
   * ```js
   * for (const group of await lanyard.groups.list()) console.log(group.name, group.role);
   * ```
   */
  list(): Promise<Group[]>;
  /**
   * One group with its members (a non-member gets `NOT_FOUND`).
   *
   * ```js
   * const { members } = await lanyard.groups.get(familyId);
   * ```
   */
  get(id: string): Promise<Group>;
  /**
   * Renames the group or changes its settings (owner and admins).
   *
   * ```js
   * await lanyard.groups.update(familyId, { name: "Smith family", membersCanInvite: true });
   * ```
   */
  update(id: string, options: { name?: string; onOwnerDeleted?: "transfer" | "dissolve"; membersCanInvite?: boolean }): Promise<Group>;
  /**
   * Dissolves the group with its records (the owner; a recent sign-in).
   *
   * ```js
   * await lanyard.groups.dissolve(familyId);
   * ```
   */
  dissolve(id: string): Promise<void>;
  /**
   * A new invite; its `code` and `url` are shown only now (pass them on by message or a QR code).
   *
   * ```js
   * const { code, url } = await lanyard.groups.invite(familyId, { role: "member", maxUses: 3 });
   * ```
   */
  invite(id: string, options?: { role?: Exclude<GroupRole, "owner">; maxUses?: number; expiresIn?: number }): Promise<GroupInvite>;
  /**
   * Pending invites, without their codes (owner and admins).
   *
   * ```js
   * const pending = await lanyard.groups.invites(familyId);
   * ```
   */
  invites(id: string): Promise<GroupInvite[]>;
  /**
   * Revokes an invite: its code stops working.
   *
   * ```js
   * await lanyard.groups.revokeInvite(familyId, invite.id);
   * ```
   */
  revokeInvite(id: string, inviteId: string): Promise<void>;
  /**
   * What a code (or an invite's URL) joins, before joining: `NOT_FOUND` for a wrong code, `INVITE_UNUSABLE` for a
   * spent one.
   *
   * ```js
   * const preview = await lanyard.groups.preview("K7QMX-2XPD4");
   * ```
   */
  preview(code: string): Promise<Record<string, any>>;
  /**
   * Joins the group a code (or an invite's URL) invites to; a member already gets the group as it is.
   *
   * ```js
   * const { group, role } = await lanyard.groups.join(scannedURL);
   * ```
   */
  join(code: string): Promise<{ group: Group; role: GroupRole }>;
  /**
   * Changes a member's role (the owner; ownership moves by `transfer`).
   *
   * ```js
   * await lanyard.groups.setRole(familyId, member.user_id, "admin");
   * ```
   */
  setRole(id: string, userId: string, role: Exclude<GroupRole, "owner">): Promise<GroupMember>;
  /**
   * Whether the other members see this account's email (never an Apple relay address).
   *
   * ```js
   * await lanyard.groups.shareEmail(familyId, true);
   * ```
   */
  shareEmail(id: string, share: boolean): Promise<GroupMember>;
  /**
   * Removes a member (the owner anyone; admins members and viewers).
   *
   * ```js
   * await lanyard.groups.removeMember(familyId, member.user_id);
   * ```
   */
  removeMember(id: string, userId: string): Promise<void>;
  /**
   * Leaves the group; the owner gets `OWNER_MUST_TRANSFER`.
   *
   * ```js
   * await lanyard.groups.leave(familyId);
   * ```
   */
  leave(id: string): Promise<void>;
  /**
   * Hands the group to another member, who becomes owner; this account becomes an admin (a recent sign-in).
   *
   * ```js
   * await lanyard.groups.transfer(familyId, partner.user_id);
   * ```
   */
  transfer(id: string, userId: string): Promise<Group>;
  /**
   * Sets who reads and writes one of the group's collections (owner and admins).
   *
   * ```js
   * await lanyard.groups.setPolicy(familyId, "chores", { read: "viewer", write: "author" });
   * ```
   */
  setPolicy(id: string, collection: string, policy: { read?: "viewer" | "member" | "admin"; write?: "member" | "admin" | "owner" | "author" }): Promise<Record<string, any>>;
  /**
   * The policy in force for one of the group's collections.
   *
   * ```js
   * const { read, write } = await lanyard.groups.policy(familyId, "chores");
   * ```
   */
  policy(id: string, collection: string): Promise<Record<string, any>>;
  /**
   * Shares one of this account's own collections with the group, read-only for the others.
   *
   * ```js
   * await lanyard.groups.share(familyId, "locations");
   * ```
   */
  share(id: string, collection: string): Promise<Record<string, any>>;
  /**
   * Stops sharing a collection; the others' feeds get `share_removed`.
   *
   * ```js
   * await lanyard.groups.unshare(familyId, "locations");
   * ```
   */
  unshare(id: string, collection: string): Promise<void>;
  /**
   * The collections members share with the group.
   *
   * ```js
   * const shared = await lanyard.groups.shares(familyId);
   * ```
   */
  shares(id: string): Promise<Record<string, any>[]>;
  /**
   * One of the group's collections, with the personal collection's calls (under the collection's policy).
   *
   * ```js
   * await lanyard.groups.collection(familyId, "chores").put("dishes", { done: false });
   * ```
   */
  collection<Data = Record<string, any>>(id: string, name: string): Collection<Data>;
  /**
   * A collection `member` shares with the group (read-only).
   *
   * ```js
   * const where = await lanyard.groups.sharedCollection(familyId, kid.user_id, "locations").get("now");
   * ```
   */
  sharedCollection<Data = Record<string, any>>(id: string, member: string, name: string): Collection<Data>;
}

/**
 * The account's change feed (reference section 13) on one connection per client, shared by every subscriber: read with
 * `fetch` (it carries the bearer), resumed with `Last-Event-ID` from the last change delivered (kept in the storage per
 * account), reconnected with growing pauses, refreshed when the server says the token expired.
 *
 * ```js
 * const stop = lanyard.changes.subscribe((change) => console.log(change.collection, change.id, change.deleted));
 * ```
 */
export interface LiveFeed {
  /** Whether the connection has caught up and delivers changes as they happen. */
  readonly isLive: boolean;
  /** How many subscribers share the connection. */
  readonly subscriberCount: number;
  /**
   * Calls `listener` with each change: where this browser left off for the account (the beginning the first time),
   * then live. The connection opens with the first subscriber, closes with the last, and follows the session (a
   * sign-out closes it, a sign-in reopens it for that account).
   *
   * ```js
   * const stop = lanyard.changes.subscribe(apply, { onLive: (live) => badge.textContent = live ? "Live" : "Syncing" });
   * ```
   */
  subscribe(listener: (change: Change) => void, options?: SubscribeOptions): () => void;
  /**
   * One page of the feed after `since`; with `wait` (seconds, ≤ 30) a long-poll when nothing is new.
   *
   * ```js
   * const page = await lanyard.changes.list({ since: "now" });
   * ```
   */
  list(options?: { since?: string | null; limit?: number; wait?: number }): Promise<FeedPage>;
  /**
   * Closes the connection and forgets every subscriber.
   *
   * ```js
   * lanyard.changes.close();
   * ```
   */
  close(): void;
}
