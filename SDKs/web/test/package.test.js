// The package's layout and its agreements with the server: one copy of the module (the server's resource, which the
// package links to and packs as a file), the same version, every error code of the server's catalogue, declarations
// that compile and name only calls the module has.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as sdk from "../lanyard.js";

const here = dirname(fileURLToPath(import.meta.url));
const web = resolve(here, "..");
const repository = resolve(web, "../..");
const resource = join(repository, "Sources/LanyardServer/Resources/sdk/lanyard.js");

test("the package's module is the server's resource itself, not a copy", () => {
  assert.ok(lstatSync(join(web, "lanyard.js")).isSymbolicLink(), "SDKs/web/lanyard.js is a link to the one copy");
  assert.equal(realpathSync(join(web, "lanyard.js")), realpathSync(resource));
  const manifest = readFileSync(join(repository, "Package.swift"), "utf8");
  assert.match(manifest, /\.copy\("Resources\/sdk"\)/, "Package.swift copies Resources/sdk into the server's bundle");
});

test("the packed package carries the module as a file, byte for byte the server's", () => {
  const folder = mkdtempSync(join(tmpdir(), "lanyard-web-test-"));
  try {
    const tarball = execFileSync("node", [join(web, "scripts/pack.mjs"), folder], { encoding: "utf8" }).trim();
    const listing = execFileSync("tar", ["-tvzf", tarball], { encoding: "utf8" });
    assert.match(listing, /^-.* package\/lanyard\.js$/m, "a regular file, not a link");
    assert.match(listing, /package\/lanyard\.d\.ts$/m);
    assert.match(listing, /package\/package\.json$/m);
    execFileSync("tar", ["-xzf", tarball, "-C", folder]);
    assert.ok(readFileSync(join(folder, "package/lanyard.js")).equals(readFileSync(resource)));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test("the module, the package and the server name one version", () => {
  const swift = readFileSync(join(repository, "Sources/LanyardWire/LanyardVersion.swift"), "utf8");
  const server = /static let current = "([^"]+)"/.exec(swift)[1];
  assert.equal(sdk.version, server);
  assert.equal(JSON.parse(readFileSync(join(web, "package.json"), "utf8")).version, server);
});

test("every error code of the server's catalogue is reachable by name", () => {
  const openapi = JSON.parse(readFileSync(join(repository, "Sources/LanyardServer/Resources/openapi.json"), "utf8"));
  const codes = openapi.components.schemas.Error.properties.error.properties.code.enum;
  assert.ok(codes.length >= 28);
  for (const code of codes) {
    assert.equal(sdk.ErrorCode[code], code, `ErrorCode.${code}`);
    assert.match(readFileSync(join(web, "lanyard.d.ts"), "utf8"), new RegExp(`readonly ${code}: "${code}"`), `lanyard.d.ts declares ${code}`);
  }
  assert.equal(sdk.LanyardError.codes, sdk.ErrorCode);
  const error = sdk.LanyardError.fromAnswer(409, { error: { code: "PROVIDER_CONFLICT", message: "In use", details: { reason: "identity_in_use" }, request_id: "r1" } }, new Headers());
  assert.ok(error instanceof Error && error instanceof sdk.LanyardError);
  assert.deepEqual([error.code, error.status, error.message, error.details.reason, error.requestId], ["PROVIDER_CONFLICT", 409, "In use", "identity_in_use", "r1"]);
  const page = sdk.LanyardError.fromAnswer(502, null, new Headers({ "Retry-After": "3" }));
  assert.deepEqual([page.code, page.status, page.retryAfter], ["INVALID_RESPONSE", 502, 3]);
});

test("the declarations compile with the guide's uses (tsc), and every declared call exists on the module", () => {
  execFileSync("tsc", ["-p", join(web, "tsconfig.json")], { stdio: "pipe" });
  const declarations = readFileSync(join(web, "lanyard.d.ts"), "utf8");
  const client = sdk.createClient({ url: "http://127.0.0.1:1", storage: "memory" });
  const collection = client.collection("notes");
  const objects = { LanyardClient: client, EmailAuth: client.email, PasskeyAuth: client.passkeys, Sessions: client.sessions,
    Groups: client.groups, LiveFeed: client.changes, Collection: collection };
  for (const [name, object] of Object.entries(objects)) {
    const body = new RegExp(`export interface ${name}\\b[^{]*\\{([\\s\\S]*?)\\n\\}`).exec(declarations)[1];
    const members = [...body.matchAll(/^  (?:readonly )?([a-zA-Z]+)[<(?:]/gm)].map((m) => m[1]);
    assert.ok(members.length > 0, name);
    for (const member of members) assert.notEqual(object[member], undefined, `${name}.${member} is declared and exists`);
  }
  client.close();
});
