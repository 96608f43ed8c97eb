// A software passkey authenticator for Node (the SDK's `passkeyAuthenticator` option): WebAuthn's JSON in and out,
// P-256 keys from WebCrypto, attestation "none", discoverable credentials kept in memory. What Chromium's virtual
// authenticator does in Tests/Web/test_web_sdk.py, here so every passkey call runs against a real server in Node.
import { webcrypto as crypto } from "node:crypto";

const encoder = new TextEncoder();
const base64url = (bytes) => Buffer.from(bytes).toString("base64url");
const fromBase64url = (text) => new Uint8Array(Buffer.from(text, "base64url"));
const sha256 = async (bytes) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) { out.set(part, at); at += part.length; }
  return out;
};

/** CBOR (RFC 8949) for what an attestation needs: unsigned and negative integers, byte and text strings, maps. */
function cbor(value) {
  const head = (major, length) => {
    if (length < 24) return Uint8Array.of((major << 5) | length);
    if (length < 256) return Uint8Array.of((major << 5) | 24, length);
    return Uint8Array.of((major << 5) | 25, length >> 8, length & 255);
  };
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") { const bytes = encoder.encode(value); return concat(head(3, bytes.length), bytes); }
  if (value instanceof Uint8Array) return concat(head(2, value.length), value);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return concat(head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)]));
}

/** WebCrypto's raw r‖s as the DER that WebAuthn's ES256 signatures are. */
function der(raw) {
  const integer = (bytes) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    let body = bytes.slice(start);
    if (body[0] & 0x80) body = concat(Uint8Array.of(0), body);
    return concat(Uint8Array.of(0x02, body.length), body);
  };
  const sequence = concat(integer(raw.slice(0, 32)), integer(raw.slice(32)));
  return concat(Uint8Array.of(0x30, sequence.length), sequence);
}

export class SoftwareAuthenticator {
  /** @param {string} origin the page's origin the ceremonies report */
  constructor(origin) {
    this.origin = origin;
    /** @type {{ id: Uint8Array, rpId: string, userHandle: Uint8Array, key: CryptoKey, counter: number }[]} */
    this.credentials = [];
  }

  async create(options) {
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
    const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
    const id = crypto.getRandomValues(new Uint8Array(32));
    const rpId = options.rp.id;
    this.credentials.push({ id, rpId, userHandle: fromBase64url(options.user.id), key: pair.privateKey, counter: 0 });
    const cose = new Map([[1, 2], [3, -7], [-1, 1], [-2, fromBase64url(jwk.x)], [-3, fromBase64url(jwk.y)]]);
    const authData = concat(await sha256(encoder.encode(rpId)), Uint8Array.of(0x45), new Uint8Array(4), new Uint8Array(16),
      Uint8Array.of(0, id.length), id, cbor(cose));
    const clientData = encoder.encode(JSON.stringify({ type: "webauthn.create", challenge: options.challenge, origin: this.origin }));
    return {
      id: base64url(id), rawId: base64url(id), type: "public-key", clientExtensionResults: {}, authenticatorAttachment: "platform",
      response: { clientDataJSON: base64url(clientData), attestationObject: base64url(cbor({ fmt: "none", attStmt: {}, authData })),
        transports: ["internal"] },
    };
  }

  async get(options) {
    const credential = this.credentials.findLast((c) => c.rpId === options.rpId);
    if (!credential) throw new Error("no passkey for " + options.rpId);
    credential.counter += 1;
    const counter = Uint8Array.of(0, 0, credential.counter >> 8, credential.counter & 255);
    const authData = concat(await sha256(encoder.encode(options.rpId)), Uint8Array.of(0x05), counter);
    const clientData = encoder.encode(JSON.stringify({ type: "webauthn.get", challenge: options.challenge, origin: this.origin }));
    const signed = concat(authData, await sha256(clientData));
    const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, credential.key, signed));
    return {
      id: base64url(credential.id), rawId: base64url(credential.id), type: "public-key", clientExtensionResults: {},
      authenticatorAttachment: "platform",
      response: { clientDataJSON: base64url(clientData), authenticatorData: base64url(authData), signature: base64url(der(raw)),
        userHandle: base64url(credential.userHandle) },
    };
  }
}
