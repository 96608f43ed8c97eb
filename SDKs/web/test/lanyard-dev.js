// Starts `lanyard dev` for a test: a temporary SQLite database, a free loopback port, the binary at $LANYARD_BINARY or
// .build/debug/lanyard, extra LANYARD_* settings from the caller. As Tests/python/lanyard_dev.py does.
import { spawn } from "node:child_process";
import { mkdtempSync, openSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repository = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

export class LanyardDev {
  static async start(settings = {}) {
    const dev = new LanyardDev();
    await dev.#start(settings);
    return dev;
  }

  async #start(settings) {
    this.folder = mkdtempSync(join(tmpdir(), "lanyard-web-"));
    this.settings = settings;
    this.port = await freePort();
    await this.#launch();
  }

  /** Starts it again after `stop()`, on the same port and data. */
  async restart() {
    await this.#launch();
  }

  async #launch() {
    const { port, settings } = this;
    const binary = process.env.LANYARD_BINARY ?? join(repository, ".build/debug/lanyard");
    const log = openSync(join(this.folder, "server.log"), "a");
    this.process = spawn(binary, ["dev"], {
      env: { ...process.env, LANYARD_PORT: String(port), LANYARD_DATA_DIR: this.folder,
        LANYARD_DATABASE_URL: `sqlite:${this.folder}/lanyard.sqlite`, LANYARD_LOG_LEVEL: "warning", ...settings },
      stdio: ["ignore", "ignore", log],
    });
    this.base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(`${this.base}/healthz`)).status === 200) return;
      } catch {
        // not yet listening
      }
      if (this.process.exitCode !== null) break;
      await new Promise((done) => setTimeout(done, 100));
    }
    this.process.kill();
    throw new Error(`lanyard dev did not start; see ${this.folder}/server.log`);
  }

  /** What Apple's or Google's SDK hands the app; the emulator signs it like the real provider. */
  async idToken(provider, sub, claims = {}) {
    const answer = await fetch(`${this.base}/_emulator/${provider}/id-token`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ sub, ...claims }) });
    if (!answer.ok) throw new Error(`id-token: ${answer.status} ${await answer.text()}`);
    return (await answer.json()).id_token;
  }

  /**
   * The old system's session token (reference section 24): `firebase`'s ID token, `supabase`'s access token, `clerk`'s
   * session token, minted by the emulator with `claims` (`identities`, `sign_in_provider`, `is_anonymous`, `email`,
   * `expires_in`, `iat`, `aud`, `iss`, `impersonated_by`…) and verified by the bridge through the production path.
   */
  async legacyToken(source, sub, claims = {}) {
    const path = { firebase: "firebase/id-token", supabase: "supabase/access-token", clerk: "clerk/session-token" }[source];
    const answer = await fetch(`${this.base}/_emulator/${path}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ sub, ...claims }) });
    if (!answer.ok) throw new Error(`${source} token: ${answer.status} ${await answer.text()}`);
    const body = await answer.json();
    return body.id_token ?? body.access_token ?? body.session_token;
  }

  /**
   * A person on the provider's page, as a browser would be: follows Lanyard's 302 to the emulator's page, submits its
   * form with `person` (`sub`, `email`, Apple's `given_name`/`family_name`, or `nonce_override`/`aud` for a token
   * that is not the flow's), follows the answer back to Lanyard's callback (Google's 302, Apple's auto-submitted
   * `form_post`) and answers where the callback sends the browser: the app's `redirect_uri?code=…&state=…`. With
   * `{ cancel: true }` the person declines instead (the provider sends `error=access_denied` to the callback).
   */
  async throughProvider(url, person = {}, { cancel = false } = {}) {
    let page = url;
    let answer = await fetch(page, { redirect: "manual" });
    for (let hops = 0; answer.status === 302 && hops < 5; hops++) {
      page = new URL(answer.headers.get("location"), page).href;
      answer = await fetch(page, { redirect: "manual" });
    }
    const html = await answer.text();
    if (answer.status !== 200 || !html.includes('id="continue"')) throw new Error(`not the provider's page: ${answer.status} ${html.slice(0, 300)}`);
    const fields = hiddenFields(html);
    let back;
    if (cancel) {
      const callback = new URL(fields.redirect_uri);
      callback.search = new URLSearchParams({ state: fields.state, error: "access_denied" }).toString();
      back = await fetch(callback, { redirect: "manual" });
    } else {
      const picked = await fetch(page, { method: "POST", redirect: "manual", body: new URLSearchParams({ ...fields, ...person }) });
      if (picked.status === 302) {
        back = await fetch(new URL(picked.headers.get("location"), page), { redirect: "manual" });
      } else {
        // Apple: a page whose script posts the form to Lanyard's callback.
        const post = await picked.text();
        const action = /<form id="form_post" method="post" action="([^"]+)"/.exec(post);
        if (!action) throw new Error(`no form_post: ${picked.status} ${post.slice(0, 300)}`);
        back = await fetch(unescapeHTML(action[1]), { method: "POST", redirect: "manual", body: new URLSearchParams(hiddenFields(post)) });
      }
    }
    if (back.status !== 302) throw new Error(`the callback answered ${back.status}: ${(await back.text()).slice(0, 300)}`);
    return back.headers.get("location");
  }

  /** The dev mailbox's newest mail to `address` (its code and link). */
  async mail(address) {
    for (let attempt = 0; attempt < 100; attempt++) {
      const answer = await fetch(`${this.base}/_emulator/mail?to=${encodeURIComponent(address)}`);
      const body = await answer.json();
      const mails = Array.isArray(body) ? body : (body.mails ?? body.messages ?? []);
      if (mails.length > 0) return mails[0];
      await new Promise((done) => setTimeout(done, 100));
    }
    throw new Error(`no mail to ${address}`);
  }

  /** The audit log through the admin API (needs LANYARD_ADMIN_KEY). */
  async audit(key, query = {}) {
    const search = new URLSearchParams({ limit: "100", ...query });
    const answer = await fetch(`${this.base}/v1/admin/audit?${search}`, { headers: { Authorization: `Bearer ${key}` } });
    if (!answer.ok) throw new Error(`audit: ${answer.status}`);
    return (await answer.json()).events;
  }

  async stop() {
    if (this.process.exitCode !== null) return;
    const exited = new Promise((done) => this.process.once("exit", done));
    this.process.kill("SIGTERM");
    await exited;
  }
}

function unescapeHTML(text) {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** A page's hidden inputs, by name. */
function hiddenFields(html) {
  return Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
    .map(([, name, value]) => [name, unescapeHTML(value)]));
}
