// Verifying a webhook delivery as Standard Webhooks specifies it: webhook-signature holds
// "v1," and the base64 HMAC-SHA256 of "webhook-id.webhook-timestamp.body" under the
// secret's key (whsec_ and base64); two of them, space-separated, for a day after a
// rotation.

/** A delivery whose signature or timestamp does not hold: reject it (answer 400). */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string {
  let v: string | string[] | undefined | null;
  if (typeof (headers as Headers).get === "function") {
    v = (headers as Headers).get(name);
  } else {
    const entry = Object.entries(headers).find(([k]) => k.toLowerCase() === name);
    v = entry?.[1];
  }
  if (Array.isArray(v)) v = v[0];
  if (v === undefined || v === null) throw new WebhookVerificationError(`missing header ${name}`);
  return v;
}

function base64(bytes: ArrayBuffer): string {
  let s = "";
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s);
}

function equal(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The delivery's JSON body, once its signature is checked against secret and its
 * timestamp is within toleranceSeconds (default 300) of now; throws
 * WebhookVerificationError otherwise. Pass the body exactly as received, before parsing.
 */
export async function verifyWebhook(
  secret: string,
  headers: HeaderSource,
  body: string | Uint8Array,
  options: { toleranceSeconds?: number; now?: Date } = {},
): Promise<unknown> {
  const raw = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  const ts = Number(timestamp);
  if (!Number.isInteger(ts)) throw new WebhookVerificationError("webhook-timestamp is not a number");
  const now = (options.now ?? new Date()).getTime() / 1000;
  if (Math.abs(now - ts) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError("webhook-timestamp is too old or too new");
  }
  let key: Uint8Array<ArrayBuffer>;
  try {
    key = Uint8Array.from(atob(secret.startsWith("whsec_") ? secret.slice(6) : secret), (c) => c.charCodeAt(0));
  } catch {
    throw new WebhookVerificationError("the secret is not whsec_ and base64");
  }
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + raw.length);
  signed.set(prefix);
  signed.set(raw, prefix.length);
  const hmacKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const expected = base64(await crypto.subtle.sign("HMAC", hmacKey, signed));
  for (const sig of signatures.split(" ")) {
    const [version, value] = [sig.slice(0, sig.indexOf(",")), sig.slice(sig.indexOf(",") + 1)];
    if (version === "v1" && equal(value, expected)) return JSON.parse(new TextDecoder().decode(raw));
  }
  throw new WebhookVerificationError("no signature matches");
}
