// Packs the npm package (what `npm pack` makes: a gzipped tar of `package/…`) with the module itself, not the
// symbolic link that points at it: the one copy of the code lives beside the server that serves it
// (Sources/LanyardServer/Resources/sdk/lanyard.js). Prints the tarball's path.
// Run: node SDKs/web/scripts/pack.mjs [output folder]
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const output = resolve(process.argv[2] ?? root);
const stage = mkdtempSync(join(tmpdir(), "lanyard-web-pack-"));
try {
  const folder = join(stage, "package");
  mkdirSync(folder);
  copyFileSync(join(root, "package.json"), join(folder, "package.json"));
  for (const file of manifest.files) copyFileSync(realpathSync(join(root, file)), join(folder, file));
  const name = `${manifest.name.replace(/^@/, "").replace("/", "-")}-${manifest.version}.tgz`;
  mkdirSync(output, { recursive: true });
  execFileSync("tar", ["-czf", join(output, name), "--owner=0", "--group=0", "--numeric-owner", "-C", stage, "package"]);
  console.log(join(output, name));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
