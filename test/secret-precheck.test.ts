/**
 * The check that spares a text the credential expression (mayHoldSecret): it may let through a
 * text without a secret, never stop one the expression would find, in any escaping.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { basicCredentialForms, firstUtf8Byte, matcherOf, mayHoldSecret, redact, redactReply } from '../src/http/redact.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
// A fixed seed in `npm test`; `FUZZ_RUNS=… node --test …` draws one (fast-check prints it with a failure).
const SEED = Number(process.env.FUZZ_SEED ?? (process.env.FUZZ_RUNS ? Date.now() % 2 ** 31 : 20261128));

const FORMS = basicCredentialForms('demo', 'sandbox-demo-password');
const finds = (text: string, secrets: readonly string[], minLength = 8): boolean => text.search(matcherOf(secrets, minLength) ?? /$^/) !== -1;

describe('mayHoldSecret', () => {
  test('ordinary replies: a list page with percent-encoded links, dates with +, a name with \\" all pass without the expression', () => {
    for (const text of [
      '{"paging":{"next_page":"http://127.0.0.1:1/v1.3/conversations?fields=status%2Cis_priority&oldest_sort_date_gte=2025-11-29T05%3A51%3A38&skip=1"}}',
      'created 2026-01-05T10:00:00+00:00, C++ &amp; more',
      '=HYPERLINK("http://evil.example","x")',
      '{"name":"=HYPERLINK(\\"http://evil.example\\",\\"x\\")"}',
    ]) {
      assert.equal(mayHoldSecret(text, FORMS), false, text);
      assert.equal(finds(text, FORMS), false, text);
    }
  });

  test('each escaping of a secret passes it on to the expression', () => {
    const password = 'Sup3r "Secret"/pässwörd+42 😀';
    const forms = basicCredentialForms('bot', password);
    const hex = (c: string): string => c.codePointAt(0)!.toString(16);
    for (const text of [
      password,
      encodeURIComponent(password).replace(/%[0-9A-F]{2}/g, (byte) => byte.toLowerCase()),
      password.replaceAll(' ', '+'),
      JSON.stringify(password).slice(1, -1),
      JSON.stringify(JSON.stringify(password)),
      password.replace(/[^\x20-\x7e]/gu, (c) =>
        c
          .split('')
          .map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`)
          .join(''),
      ),
      password.replaceAll('/', '\\/'),
      password.replaceAll('"', '&quot;').replaceAll('ä', '&#228;').replaceAll('ö', '&#X00F6;'),
      [...password].map((c) => `&#x${hex(c)};`).join(''),
      password.normalize('NFD'),
      Buffer.from(password).toString('base64'),
      `echo: Basic ${Buffer.from(`bot:${password}`).toString('base64')}`,
    ]) {
      assert.ok(finds(text, forms), text);
      assert.ok(mayHoldSecret(text, forms), text);
    }
  });

  test('a secret whose characters are all escaped is passed on, whatever the runs', () => {
    assert.ok(mayHoldSecret('%61%62', ['ab']));
    assert.ok(finds('%61%62', ['ab']));
  });

  test('a secret that starts inside the form of an escape is found (one pass, escapes looked at, not consumed)', () => {
    for (const [text, secret] of [
      ['&amp;xyzzy', 'amp;xyzzy'],
      ['%4142cdef', '4142cdef'],
      ['\\u00e9clair', 'u00e9clair'],
      ['a+b+secret', 'b+secret'],
    ] as const) {
      assert.ok(finds(text, [secret]), text);
      assert.ok(mayHoldSecret(text, [secret]), text);
    }
  });

  test('a run of backslashes counts each: the last one carries the escape after it', () => {
    const text = `${'\\'.repeat(100_000)}u0073ecret`;
    assert.ok(mayHoldSecret(text, ['secret']));
    assert.equal(mayHoldSecret(`${'\\'.repeat(100_000)}ecret`, ['secret']), false);
  });
});

/** How a character may stand in text the service sent (the forms the expression knows). */
function escapings(char: string): string[] {
  const code = char.codePointAt(0)!;
  const units = [...Array(char.length).keys()].map((i) => char.charCodeAt(i).toString(16).padStart(4, '0'));
  const named: Record<string, string[]> = { '"': ['&quot;', '&QUOT;', '\\&quot;'], '&': ['&amp;', '&AMP;'], '<': ['&lt;'], '>': ['&GT;'], "'": ['&apos;'] };
  const letters: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\b': '\\\\b' };
  return [
    char,
    [...Buffer.from(char)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
    [...Buffer.from(char)].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join(''),
    units.map((u) => `\\u${u}`).join(''),
    units.map((u) => `\\\\\\u${u.toUpperCase()}`).join(''),
    `&#${code};`,
    `&#00${code};`,
    `&#x${code.toString(16)};`,
    `&#X0${code.toString(16).toUpperCase()};`,
    ...(char === ' ' ? ['+'] : []),
    ...('"\\/'.includes(char) ? [`\\${char}`, `\\\\\\${char}`] : []),
    ...(named[char] ?? []),
    ...(letters[char] === undefined ? [] : [letters[char]]),
  ];
}

const ALPHABET = ['a', 'B', 's', '0', '7', ' ', '+', '/', '=', '%', '&', '#', ';', '\\', '"', "'", '<', 'u', 'x', 'ä', 'ö', '😀', '\n', '\t', '\b', ':'];
const textOf = (minLength: number, maxLength: number) => fc.array(fc.constantFrom(...ALPHABET), { minLength, maxLength }).map((chars) => chars.join(''));
/** Noise around the echoes: characters and whole escapes of characters that are not in the secret. */
const noise = fc.oneof(textOf(0, 6), fc.constantFrom('%2C', '%3A', '&amp;', '&#39;', '\\u00e9', '\\"', '&#x4E2D;', '+00:00', '\\\\n'));

/** A piece of one of the secrets (often the whole), each character in one of its escapings. */
const echo = (secrets: string[]) =>
  fc
    .record({ which: fc.nat(), from: fc.nat(), length: fc.nat(), choices: fc.array(fc.nat(), { minLength: 40, maxLength: 40 }), whole: fc.boolean() })
    .map(({ which, from, length, choices, whole }) => {
      const chars = [...secrets[which % secrets.length]!];
      const start = whole ? 0 : from % chars.length;
      const piece = whole ? chars : chars.slice(start, start + 1 + (length % (chars.length - start)));
      return piece.map((char, i) => escapings(char)[choices[i % choices.length]! % escapings(char).length]).join('');
    });

describe('mayHoldSecret against the expression (property)', () => {
  test('never false where the expression finds a secret, nor where redact or redactReply would change a text', () => {
    let found = 0;
    const property = fc.property(
      fc.record({ user: textOf(0, 4), password: textOf(1, 12) }).chain(({ user, password }) => {
        const secrets = basicCredentialForms(user, password);
        return fc.record({ secrets: fc.constant(secrets), parts: fc.array(fc.oneof(noise, echo(secrets)), { maxLength: 5 }) });
      }),
      ({ secrets, parts }) => {
        const text = parts.join('');
        const hit = finds(text, secrets) || finds(text, secrets, 1);
        if (hit) found++;
        if (!mayHoldSecret(text, secrets)) assert.ok(!hit, `${JSON.stringify(text)} ${JSON.stringify(secrets)}`);
        // What the expression alone makes of the text, as before the check (no `@`: no URL credentials in these texts).
        const matcher = matcherOf(secrets, 8)!;
        assert.equal(redact(text, secrets), text.replace(matcher, '[redacted]'));
        assert.deepEqual(redactReply({ text }, JSON.stringify({ text }), secrets), { text: text.replace(matcher, '[redacted]') });
      },
    );
    fc.assert(property, { numRuns: RUNS, seed: SEED });
    // The echoes are built to match: a generator that stopped making them would test nothing.
    assert.ok(found > RUNS / 4, `only ${found} of ${RUNS} texts held a secret`);
  });
});

test('firstUtf8Byte is the first byte Buffer.from writes, for every code point and lone surrogate', () => {
  for (let code = 0; code <= 0x10ffff; code += code < 0x11000 ? 1 : 0x3f) {
    const char = String.fromCodePoint(code);
    assert.equal(firstUtf8Byte(char.codePointAt(0)!), Buffer.from(char)[0], `U+${code.toString(16)}`);
  }
});
