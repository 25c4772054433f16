/**
 * Keeping credentials out of everything carectl prints. A service or a proxy may echo what it
 * received (an error page quoting the Authorization header, a message naming the password), and
 * a URL may carry `user:password@`: the transport passes every error message and trace line it
 * makes through here, and the CLI passes the message it prints once more.
 */
import { ExactNumber } from '../core/exact-json.js';

/** What a secret is replaced with. */
export const REDACTED = '[redacted]';

/**
 * Shorter secrets are replaced only where they stand as a whole token (a value of their own, a
 * word between spaces or punctuation): replacing every "ab" inside other words would hide more
 * than it protects, but an echoed short password is still a password.
 */
const MIN_SECRET_LENGTH = 3;
/** In records, where a replaced word is lost data, a secret must be longer still to be replaced inside words. */
const MIN_SECRET_LENGTH_IN_DATA = 8;

/**
 * The forms in which a Basic credential can be echoed: the password as given and percent-encoded
 * (in a URL), `user:password` in Base64 with and without its padding, and the whole header value.
 */
export function basicCredentialForms(user: string, password: string): string[] {
  const forms: string[] = [];
  if (password !== '') forms.push(password, encodeURIComponent(password), JSON.stringify(password).slice(1, -1));
  const base64 = Buffer.from(`${user}:${password}`).toString('base64');
  forms.push(`Basic ${base64}`, base64, base64.replace(/=+$/, ''), Buffer.from(`${user}:${password}`).toString('base64url'));
  return unique(forms);
}

/**
 * What replaces one secret in a text: every occurrence when it is at least `minLength` long, else
 * only where it stands as a whole token (no letter or digit right before or after it).
 */
function replacerOf(secret: string, minLength: number): (text: string) => string {
  if (secret.length >= minLength) return (text) => (text.includes(secret) ? text.split(secret).join(REDACTED) : text);
  const token = new RegExp(`(?<![\\p{L}\\p{N}])${secret.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'gu');
  return (text) => (text.includes(secret) ? text.replace(token, REDACTED) : text);
}

/** The replacers of the non-empty secrets, longest first, so a form that contains another (`Basic <base64>`) goes whole. */
function replacers(secrets: readonly string[], minLength: number): Array<(text: string) => string> {
  return unique(secrets.filter((secret) => secret !== ''))
    .sort((a, b) => b.length - a.length)
    .map((secret) => replacerOf(secret, minLength));
}

/** The URL as text without its `user:password@` part. */
export function stripUserinfo(url: URL | string): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : new URL(url.href);
  } catch {
    return typeof url === 'string' ? stripUserinfoInText(url) : String(url);
  }
  if (parsed.username === '' && parsed.password === '') return parsed.href;
  parsed.username = '';
  parsed.password = '';
  return parsed.href;
}

/** `scheme://user:pw@host` anywhere in a text loses its userinfo (`scheme://host`). */
function stripUserinfoInText(text: string): string {
  // The userinfo ends at the @ before the host; it holds no /, ? or # (they would end the authority).
  return text.replace(USERINFO, '$1');
}

const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi;
/** Userinfo with a password (`user:pw@`): the form worth rewriting inside data. */
const USERINFO_WITH_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@:"]*:[^\s/?#@"]*@/gi;

/** The text with every secret replaced by [redacted] (see replacerOf) and every URL's credentials removed. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = stripUserinfoInText(text);
  for (const replace of replacers(secrets, MIN_SECRET_LENGTH)) out = replace(out);
  // Whatever the header held, an echoed Authorization value is a credential.
  return out.replace(/\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:Basic|Bearer)\s+)[A-Za-z0-9+/=._~-]+/gi, `$1${REDACTED}`);
}

/**
 * Redacts an error's message in place and returns the error (any other value unchanged): for the
 * one place the CLI prints a failure.
 */
export function redactError<T>(err: T, secrets: readonly string[] = []): T {
  if (err instanceof Error) {
    const clean = redact(err.message, secrets);
    if (clean !== err.message) err.message = clean;
  }
  return err;
}

/**
 * A value parsed from a reply, with secrets replaced in its decoded strings (keys and values), a
 * short one as a whole token (see replacerOf). JSON may write any character as `\uXXXX` (Python
 * does for non-ASCII), `/` as `\/` (PHP does), and must write `"` and `\` as `\"` and `\\`: a raw
 * text with any backslash escape is always walked, as its strings differ from their raw form.
 * Any other is walked only when it holds a secret or URL credentials as they are, so an ordinary
 * page costs a substring search per secret. Only the objects that change are copied.
 */
export function redactReply(value: unknown, rawText: string, secrets: readonly string[]): unknown {
  const escaped = rawText.includes('\\');
  const present = escaped ? secrets : secrets.filter((secret) => secret !== '' && rawText.includes(secret));
  if (!escaped && present.length === 0 && !hasUserinfoWithPassword(rawText)) return value;
  const replace = replacers(present, MIN_SECRET_LENGTH_IN_DATA);
  const clean = (text: string): string => {
    let out = text.includes('@') ? text.replace(USERINFO_WITH_PASSWORD, '$1') : text;
    for (const one of replace) out = one(out);
    return out;
  };
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return clean(node);
    if (node === null || typeof node !== 'object' || node instanceof ExactNumber) return node;
    if (Array.isArray(node)) {
      let copy: unknown[] | undefined;
      node.forEach((item: unknown, i) => {
        const cleaned = walk(item);
        if (cleaned !== item) (copy ??= [...node])[i] = cleaned;
      });
      return copy ?? node;
    }
    let changed = false;
    const entries = Object.entries(node as Record<string, unknown>).map(([key, item]) => {
      const entry = [clean(key), walk(item)] as const;
      changed ||= entry[0] !== key || entry[1] !== item;
      return entry;
    });
    return changed ? Object.fromEntries(entries) : node;
  };
  return walk(value);
}

/**
 * Whether some `scheme://user:pw@` is in the text: a look at each `://` (a page holds a few dozen
 * links), where a regular expression over the whole page would cost more than parsing it.
 */
function hasUserinfoWithPassword(text: string): boolean {
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 3)) {
    let colon = false;
    for (let i = at + 3; i < text.length; i++) {
      const c = text[i]!;
      if (c === '@') {
        if (colon) return true;
        break;
      }
      if (c === ':') colon = true;
      else if (c === '/' || c === '?' || c === '#' || c === '"' || c === ' ' || c === '\\' || c === '\n') break;
    }
  }
  return false;
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
