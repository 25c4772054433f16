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
 * In what the service sent, a secret this long is replaced wherever it stands; a shorter one only
 * where it stands as a whole token (a value of its own, a word between spaces or punctuation):
 * replacing every "ab" inside other words would hide more than it protects, but an echoed short
 * password is still a password. In carectl's own text (messages, printed commands, ids the user
 * typed) only secrets this long are looked for: a short one would rewrite carectl's own words
 * (`report` for the password `port`), and every part the service supplied was redacted already.
 */
const MIN_SECRET_LENGTH = 8;

/**
 * The forms in which a Basic credential can be echoed, as decoded text: the password as given, in
 * NFC and NFD (a service may normalise what it stores), in Base64 alone, `user:password` in Base64
 * with and without its padding, and the whole header value. Each is also found with its characters
 * escaped (see patternOf), so no percent-, JSON- or HTML-escaped form is listed.
 */
export function basicCredentialForms(user: string, password: string): string[] {
  const forms: string[] = [];
  if (password !== '') {
    const alone = Buffer.from(password).toString('base64');
    forms.push(password, password.normalize('NFC'), password.normalize('NFD'), alone, alone.replace(/=+$/, ''), Buffer.from(password).toString('base64url'));
  }
  const base64 = Buffer.from(`${user}:${password}`).toString('base64');
  forms.push(`Basic ${base64}`, base64, base64.replace(/=+$/, ''), Buffer.from(`${user}:${password}`).toString('base64url'));
  return unique(forms);
}

/**
 * A secret as a pattern that also matches it with any of its characters escaped the way text the
 * service sends may write them (a character the service echoes may stand in a URL, a JSON string,
 * a JSON string inside another one, or an HTML page; see charPattern).
 */
function patternOf(secret: string): string {
  let out = '';
  for (const char of secret) out += charPattern(char, out === '' ? FIRST_BACKSLASHES : BACKSLASHES);
  return out;
}

/**
 * One character as itself or escaped: percent-encoded (hex digits of either case, RFC 3986; a
 * space also as `+`), as a JSON escape (`\u00f6` in either case, an astral character as its
 * surrogate pair, `\"` `\\` `\/` `\n`...), or as an HTML character reference (`&#246;`,
 * `&#xF6;`, the named ones encoders write for markup: `&quot;` `&amp;` `&lt;` `&gt;` `&apos;`).
 * A JSON escape's backslash may itself be escaped (`\\u00f6`, `\\\"`: JSON in a JSON string),
 * and the character after a backslash may be HTML-escaped (`\&quot;`). `backslashes` is the
 * pattern of the backslashes before an escape.
 */
function charPattern(char: string, backslashes: string): string {
  const code = char.codePointAt(0)!;
  const literal = [
    char.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'),
    `&#0*${code};`,
    `&#[xX]0*${anyCaseHex(code.toString(16))};`,
    ...(NAMED_REFERENCES[char] ?? []),
  ];
  // An astral character is two UTF-16 code units, each its own \u escape.
  let units = '';
  for (let i = 0; i < char.length; i++) units += `${backslashes}u${anyCaseHex(char.charCodeAt(i).toString(16).padStart(4, '0'))}`;
  const percent = [...Buffer.from(char)].map((byte) => `%${anyCaseHex(byte.toString(16).padStart(2, '0'))}`).join('');
  const letter = JSON_LETTERS[char];
  const forms = [
    // JSON escapes `"`, `\` and `/` by a backslash before them.
    '"\\/'.includes(char) ? `(?:${backslashes})?(?:${literal.join('|')})` : literal.join('|'),
    ...(letter === undefined ? [] : [`${backslashes}${letter}`]),
    units,
    percent,
    ...(char === ' ' ? ['\\+'] : []),
  ];
  return `(?:${forms.join('|')})`;
}

/** The backslash of a JSON escape, doubled for each JSON string it is nested in. */
const BACKSLASHES = '\\\\+';
/**
 * Before a secret's first character, only a whole run of backslashes: tried from each of its
 * backslashes, a run would be read to its end each time, in time quadratic in its length.
 */
const FIRST_BACKSLASHES = '(?<!\\\\)\\\\+';

/** The JSON escapes by a letter: `\n` for a newline. */
const JSON_LETTERS: Readonly<Partial<Record<string, string>>> = { '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't' };

/** The named character references HTML escaping writes (HTML also knows the upper-case legacy ones). */
const NAMED_REFERENCES: Readonly<Record<string, readonly string[]>> = {
  '"': ['&quot;', '&QUOT;'],
  '&': ['&amp;', '&AMP;'],
  '<': ['&lt;', '&LT;'],
  '>': ['&gt;', '&GT;'],
  "'": ['&apos;'],
};

/** Hex digits as a pattern matching them in either case. */
function anyCaseHex(digits: string): string {
  return digits.replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`);
}

/**
 * One expression for every non-empty secret, longest first (so `Basic <base64>` goes whole): one
 * at least `minLength` long matches anywhere, a shorter one only as a whole token (no letter or
 * digit right before or after it). Undefined when there is no secret. Made only for a text
 * mayHoldSecret lets through (exported for the test that compares the two).
 */
export function matcherOf(secrets: readonly string[], minLength: number): RegExp | undefined {
  const made = matchers.get(secrets);
  if (made?.has(minLength)) return made.get(minLength);
  const matcher = buildMatcher(secrets, minLength);
  matchers.set(secrets, (made ?? new Map<number, RegExp | undefined>()).set(minLength, matcher));
  return matcher;
}

/** Each transport's secrets are matched on every reply: their expression is made once. */
const matchers = new WeakMap<readonly string[], Map<number, RegExp | undefined>>();

function buildMatcher(secrets: readonly string[], minLength: number): RegExp | undefined {
  const sorted = unique(secrets.filter((secret) => secret !== '')).sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return undefined;
  const alternatives = sorted.map((secret) => (secret.length >= minLength ? patternOf(secret) : `(?<![\\p{L}\\p{N}])${patternOf(secret)}(?![\\p{L}\\p{N}])`));
  return new RegExp(alternatives.join('|'), 'gu');
}

/**
 * Whether a text may hold one of the secrets in a form patternOf matches: false only where the
 * expression would find none, so that an ordinary text never makes the expression (compiling it
 * is the largest cost of a lookup after node's own start). One pass of scannerOf's expression
 * finds each secret as it is and each escape (each form patternOf writes starts with `\`, `&`,
 * `%` or `+`), which names the character it could stand for. Without a secret as it is, one can
 * be there only with some of its characters escaped: each run of its characters no escape stands
 * for must then be in the text as it is.
 */
export function mayHoldSecret(text: string, secrets: readonly string[]): boolean {
  const scanner = scannerOf(secrets);
  if (scanner === undefined) return false;
  const escaped: Escaped = { codes: new Set(), bytes: new Set() };
  scanner.lastIndex = 0;
  for (let found = scanner.exec(text); found !== null; found = scanner.exec(text)) {
    if (found[1] !== undefined) return true;
    ESCAPE.lastIndex = found.index;
    const escape = ESCAPE.exec(text);
    if (escape !== null) noteEscape(escaped, escape);
    // The escape is looked at, not consumed: a secret may start inside its form (`amp;` of `&amp;`).
    scanner.lastIndex = found.index + 1;
  }
  return secrets.some((secret) => {
    const runs = secret === '' ? [secret] : literalRuns(secret, escaped);
    return (runs.length !== 1 || runs[0] !== secret) && runs.every((run) => text.includes(run));
  });
}

/** The characters escapes in a text could stand for: code points and UTF-16 units, and percent-encoded bytes. */
interface Escaped {
  codes: Set<number>;
  bytes: Set<number>;
}

/**
 * Each form of patternOf that is not the character itself, at a character scannerOf found: one
 * backslash at a time (the last of a run carries the `u` or letter), so that looking at each
 * backslash of a run stays linear.
 */
const ESCAPE = /\\(?:u([0-9A-Fa-f]{4})|([bfnrt"/]))?|&#(?:0*(\d+)|[xX]0*([0-9A-Fa-f]+));|&(quot|QUOT|amp|AMP|lt|LT|gt|GT|apos);|%([0-9A-Fa-f]{2})|\+/y;

/**
 * Per set of secrets, one expression for one pass: a secret as it is, or a character an escape
 * starts with. Only the secrets that hold no other are looked for: where none is, neither is one
 * that holds it (`Basic <base64>` holds `<base64>`).
 */
function scannerOf(secrets: readonly string[]): RegExp | undefined {
  if (scanners.has(secrets)) return scanners.get(secrets);
  const nonEmpty = unique(secrets.filter((secret) => secret !== ''));
  const innermost = nonEmpty.filter((secret) => !nonEmpty.some((other) => other !== secret && secret.includes(other)));
  const literals = innermost.map((secret) => secret.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'));
  const scanner = literals.length === 0 ? undefined : new RegExp(`(${literals.join('|')})|[\\\\&%+]`, 'g');
  scanners.set(secrets, scanner);
  return scanner;
}

const scanners = new WeakMap<readonly string[], RegExp | undefined>();

/** What one escape could stand for. */
function noteEscape(escaped: Escaped, escape: RegExpExecArray): void {
  // By index: destructuring the match runs the array iterator, an allocation an escape on every page.
  const form = escape[0];
  const unit = escape[1];
  const letter = escape[2];
  const decimal = escape[3];
  const hex = escape[4];
  const name = escape[5];
  const byte = escape[6];
  if (form.startsWith('\\')) escaped.codes.add(0x5c);
  if (form === '+') escaped.codes.add(0x20);
  else if (byte !== undefined) escaped.bytes.add(parseInt(byte, 16));
  const code = unit ?? hex;
  if (code !== undefined) escaped.codes.add(parseInt(code, 16));
  if (decimal !== undefined) escaped.codes.add(Number(decimal));
  const char = (letter && (JSON_ESCAPED[letter] ?? letter)) || (name && NAMED_CHARACTERS[name.toLowerCase()]);
  if (char) escaped.codes.add(char.charCodeAt(0));
}

/** The character each JSON escape by a letter stands for (the inverse of JSON_LETTERS). */
const JSON_ESCAPED: Readonly<Partial<Record<string, string>>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
/** The character each named reference of NAMED_REFERENCES stands for, by its lower-case name. */
const NAMED_CHARACTERS: Readonly<Partial<Record<string, string>>> = { quot: '"', amp: '&', lt: '<', gt: '>', apos: "'" };

/** The runs of a secret's characters that no escape in the text could stand for (see mayHoldSecret). */
function literalRuns(secret: string, escaped: Escaped): string[] {
  if (escaped.codes.size === 0 && escaped.bytes.size === 0) return [secret];
  const { codes, bytes } = escaped;
  // Cut out of the secret between the characters an escape could stand for, not built a character at a time (on every page).
  const runs: string[] = [];
  let start = 0;
  for (let at = 0; at < secret.length;) {
    // An astral character's \u escapes start with its first UTF-16 unit, its percent-encoding with its first byte.
    const code = secret.codePointAt(at)!;
    const width = code > 0xffff ? 2 : 1;
    const stoodFor = codes.has(code) || codes.has(secret.charCodeAt(at)) || (bytes.size > 0 && bytes.has(firstUtf8Byte(code)));
    if (stoodFor) {
      if (at > start) runs.push(secret.slice(start, at));
      start = at + width;
    }
    at += width;
  }
  if (secret.length > start) runs.push(secret.slice(start));
  return runs;
}

/**
 * The first byte of a code point in UTF-8, as Buffer.from writes it (a lone surrogate as U+FFFD),
 * without making a buffer for each character of each secret on every page (issue 47).
 */
export function firstUtf8Byte(code: number): number {
  if (code < 0x80) return code;
  if (code < 0x800) return 0xc0 | (code >> 6);
  if (code >= 0xd800 && code <= 0xdfff) return 0xef;
  return code < 0x10000 ? 0xe0 | (code >> 12) : 0xf0 | (code >> 18);
}

/** The text with every secret replaced (see matcherOf). */
function replaceSecrets(text: string, secrets: readonly string[], minLength: number): string {
  if (!mayHoldSecret(text, secrets)) return text;
  const matcher = matcherOf(secrets, minLength);
  return matcher ? text.replace(matcher, REDACTED) : text;
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

/**
 * Text the service or a proxy supplied, with every secret replaced by [redacted] (see matcherOf)
 * and every URL's credentials removed.
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  const out = replaceSecrets(stripUserinfoInText(text), secrets, MIN_SECRET_LENGTH);
  // Whatever the header held, an echoed Authorization value is a credential.
  return out.replace(/\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:Basic|Bearer)\s+)[A-Za-z0-9+/=._~-]+/gi, `$1${REDACTED}`);
}

/** carectl's own text: URL credentials and the long secrets only (see MIN_SECRET_LENGTH). */
export function redactOwnText(text: string, secrets: readonly string[] = []): string {
  return redact(text, longSecrets(secrets));
}

/** The secrets long enough to look for in carectl's own text. */
export function longSecrets(secrets: readonly string[]): string[] {
  return secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH);
}

/**
 * Redacts an error's message in place and returns the error (any other value unchanged): for the
 * one place the CLI prints a failure, as carectl's own text.
 */
export function redactError<T>(err: T, secrets: readonly string[] = []): T {
  if (err instanceof Error) {
    const clean = redactOwnText(err.message, secrets);
    if (clean !== err.message) err.message = clean;
  }
  return err;
}

/**
 * A value parsed from a reply, with secrets replaced in its decoded strings (keys and values), a
 * short one as a whole token (see matcherOf). JSON may write any character as `\uXXXX` (Python
 * does for non-ASCII), `/` as `\/` (PHP does), and must write `"` and `\` as `\"` and `\\`: a raw
 * text with any backslash escape is always walked, as its strings differ from their raw form.
 * Any other is walked only when its raw text holds a secret (in any form patternOf matches) or URL
 * credentials, so an ordinary page costs one search of its text. Only the objects that change are copied.
 */
export function redactReply(value: unknown, rawText: string, secrets: readonly string[]): unknown {
  // Without a backslash, every string of the reply stands in the raw text as it is.
  if (!rawText.includes('\\') && !holdsSecret(rawText, secrets) && !hasUserinfoWithPassword(rawText)) return value;
  const clean = (text: string): string => replaceSecrets(text.includes('@') ? text.replace(USERINFO_WITH_PASSWORD, '$1') : text, secrets, MIN_SECRET_LENGTH);
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

/** Whether the text holds a secret (see matcherOf). */
function holdsSecret(text: string, secrets: readonly string[]): boolean {
  return mayHoldSecret(text, secrets) && text.search(matcherOf(secrets, MIN_SECRET_LENGTH)!) !== -1;
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
