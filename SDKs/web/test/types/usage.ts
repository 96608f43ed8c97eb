// Compiled by `tsc -p SDKs/web/tsconfig.json` (test/package.test.js runs it): every call of the declared API used as
// the guide shows it. A declaration that drifts from these uses fails the build; test/package.test.js checks that
// each declared call exists on the module at run time.
import {
  createClient, createNonce, ErrorCode, EventStreamParser, LanyardError, MemoryStorage, version,
  type AuthChangeEvent, type Change, type LanyardClient, type Session, type SignInResult,
} from "../../lanyard.js";

async function everything(): Promise<void> {
  const lanyard: LanyardClient = createClient({ url: "https://auth.example.com", storage: new MemoryStorage(), lockTimeout: 5000 });
  createClient({ url: "https://auth.example.com", storage: "memory" });
  const events: AuthChangeEvent[] = [];
  const stop: () => void = lanyard.onAuthStateChange(async (event, session, details) => {
    events.push(event);
    if (event === "SIGNED_OUT") console.log(details.reason);
    if (session) console.log(session.user.id, await lanyard.getAccessToken());
  });
  stop();
  const session: Session | null = await lanyard.getSession();
  console.log(session?.expires_at, lanyard.user?.is_anonymous, version);
  const nonce = await createNonce();
  const result = await lanyard.signInWithGoogle({ credential: "token", nonce: nonce.raw });
  console.log(result.isNewUser, result.mergedFrom, result.user.id);
  await lanyard.signInWithApple({ idToken: "t", nonce: nonce.raw, firstName: "Ada", lastName: "L" });
  await lanyard.signInWithIdToken({ provider: "microsoft", idToken: "t" });
  await lanyard.signInAnonymously();
  const { url } = await lanyard.signInWithRedirect("apple", { redirectTo: "https://app.example.com/in", navigate: false });
  await lanyard.signInWithRedirect("google", { intent: "link", navigate: (to) => window.open(to) });
  await lanyard.signInWithRedirect("microsoft");
  const returned = await lanyard.handleRedirect({ url });
  if (returned) console.log(returned.user.display_name, returned.mergedFrom);
  await lanyard.handleRedirect();
  const me = await lanyard.me();
  console.log(me.linked_providers, me.recovery?.methods);
  const crossed: SignInResult = await lanyard.migrateFromFirebase("firebase-id-token");
  console.log(crossed.isNewUser, crossed.user.is_anonymous);
  await lanyard.migrateFromSupabase("supabase-access-token");
  await lanyard.migrateFromClerk("clerk-session-token");
  const legacyID: string | null | undefined = me.legacy_id;
  console.log(legacyID ?? me.id, me.legacy_source);
  await lanyard.updateProfile({ displayName: null });
  await lanyard.link({ provider: "google", idToken: "t" });
  await lanyard.unlink("google");
  await lanyard.reauthenticate({ provider: "apple", idToken: "t" });
  const report = await lanyard.merge({ proof: async (n) => ({ provider: "google", idToken: n }), keep: "other", dryRun: true });
  console.log(report.records_moved);
  const flow = await lanyard.email.start("ada@example.com", { redirectTo: "https://app.example.com/in" });
  console.log(flow.match, flow.flowId);
  await flow.verify("123456");
  await flow.awaitConfirmation({ timeout: 1000 });
  await lanyard.merge({ proof: flow.proof("123456") });
  await lanyard.email.link("a@b.c");
  await lanyard.email.reauthenticate("a@b.c");
  const resumed = await lanyard.email.resume("flow");
  if (resumed) await resumed.awaitConfirmation();
  const passkey = await lanyard.passkeys.register({ name: "laptop" });
  await lanyard.passkeys.rename(passkey.id, "work");
  await lanyard.passkeys.signIn();
  await lanyard.passkeys.reauthenticate();
  await lanyard.merge({ proof: { provider: "passkey", credential: await lanyard.passkeys.assertion() } });
  console.log((await lanyard.passkeys.list()).map((p) => p.name));
  await lanyard.passkeys.remove(passkey.id);
  for (const device of await lanyard.sessions.list()) if (!device.current) await lanyard.sessions.revoke(device.id);
  const notes = lanyard.collection<{ text: string }>("notes");
  const saved = await notes.put("n1", { text: "hi" });
  await notes.put("n1", { text: "ho" }, { ifVersion: saved.version });
  const note = await notes.get("n1");
  console.log(note?.data.text);
  const page = await notes.changes({ since: null, limit: 10 });
  console.log(page.has_more, page.next_cursor);
  const all = await notes.changesSince();
  console.log(all.cursor);
  const unsubscribe = notes.subscribe((change: Change<{ text: string }>) => console.log(change.data?.text), { onLive: (live) => console.log(live) });
  unsubscribe();
  await notes.delete("n1", { ifVersion: 2 });
  const feed = await lanyard.changes.list({ since: "now", wait: 5 });
  console.log(feed.next_cursor, lanyard.changes.isLive, lanyard.changes.subscriberCount);
  lanyard.changes.subscribe((change) => console.log(change.kind, change.cursor), { onError: (error) => console.log(error.code) })();
  const family = await lanyard.groups.create({ name: "Smiths", kind: "family" });
  const invite = await lanyard.groups.invite(family.id, { role: "member", maxUses: 2 });
  await lanyard.groups.preview(invite.code!);
  const joined = await lanyard.groups.join(invite.url!);
  console.log(joined.role, (await lanyard.groups.list()).length, (await lanyard.groups.get(family.id)).members);
  await lanyard.groups.update(family.id, { membersCanInvite: true });
  await lanyard.groups.invites(family.id);
  await lanyard.groups.revokeInvite(family.id, invite.id);
  await lanyard.groups.setRole(family.id, "u", "admin");
  await lanyard.groups.shareEmail(family.id, true);
  await lanyard.groups.removeMember(family.id, "u");
  await lanyard.groups.transfer(family.id, "u");
  await lanyard.groups.setPolicy(family.id, "chores", { write: "author" });
  await lanyard.groups.policy(family.id, "chores");
  await lanyard.groups.share(family.id, "locations");
  await lanyard.groups.shares(family.id);
  await lanyard.groups.unshare(family.id, "locations");
  await lanyard.groups.collection(family.id, "chores").put("c1", { done: false });
  await lanyard.groups.sharedCollection(family.id, "u", "locations").get("l1");
  await lanyard.groups.leave(family.id);
  await lanyard.groups.dissolve(family.id);
  console.log((await lanyard.providers())[0].display_name);
  await lanyard.request("GET", "/v1/users/me/merges/x");
  await lanyard.refreshSession();
  await lanyard.signOut({ scope: "others" });
  await lanyard.deleteAccount();
  lanyard.close();
  try {
    await lanyard.me();
  } catch (error) {
    if (error instanceof LanyardError && error.code === ErrorCode.NOT_SIGNED_IN) console.log(error.status, error.details, error.retryAfter);
    console.log(LanyardError.codes.VERSION_CONFLICT);
  }
  console.log(new EventStreamParser().feed("data: x\n\n")[0].data);
}
void everything;
