/** Credentials echoed by a service in any JSON escaping, or short, are never printed. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { basicCredentialForms, redact, redactError, redactReply } from '../src/http/redact.js';
import { fakeClock, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

const PASSWORD = 'Sup3r-Secret/pässwörd+42';
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
/** Python's json.dumps: every non-ASCII character as \uXXXX. */
const pythonJson = (value: unknown): string => JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** PHP's json_encode: / as \/ (and non-ASCII as \uXXXX). */
const phpJson = (value: unknown): string => pythonJson(value).replaceAll('/', '\\/');

describe('secrets echoed with JSON escapes', () => {
  let api: ScriptedApi;
  let style: (value: unknown) => string = pythonJson;
  // A password with a '/' and non-ASCII letters, a Base64 form with a '/', and a proxy's credential.
  const env = (extra: Record<string, string> = {}) => ({ ...scriptedEnv(api), CARECTL_PASSWORD: PASSWORD, ...extra });
  before(async () => {
    api = await scriptedApi((request) => {
      const key = decodeURIComponent(/tags\/([^/?]+)/.exec(request.url)?.[1] ?? '');
      const echo = { 'bot:secret-key': 'k', note: PASSWORD, auth: basic('bot', PASSWORD), proxy: basic('puser', 'se??cret-proxy'), [PASSWORD]: 'as a key' };
      return { text: style({ tag: { id: key, name: 'echo', ...echo } }) };
    });
  });
  after(() => api.close());

  for (const [name, escaping] of [
    ['Python (\\u00e4)', pythonJson],
    ['PHP (\\/)', phpJson],
  ] as const) {
    test(`${name}: every decoded string and key holding a credential is redacted`, async () => {
      style = escaping;
      const out = await runCli(['tags', 'get', '7001', '-o', 'json'], {
        env: env({ HTTPS_PROXY: 'http://puser:se%3F%3Fcret-proxy@127.0.0.1:9', NO_PROXY: '127.0.0.1' }),
      });
      assert.equal(out.code, 0, out.stderr);
      const record = JSON.parse(out.stdout) as Record<string, unknown>;
      assert.deepEqual(record, {
        id: '7001',
        name: 'echo',
        'bot:secret-key': 'k',
        note: '[redacted]',
        auth: '[redacted]',
        proxy: '[redacted]',
        '[redacted]': 'as a key',
      });
      for (const secret of [PASSWORD, 'pässwörd', basic('bot', PASSWORD).slice(6), basic('puser', 'se??cret-proxy').slice(6)])
        assert.ok(!out.stdout.includes(secret), secret);
    });
  }
});

describe('short passwords', () => {
  test('redactReply: a short password as a whole value or word is replaced, inside another word it is not', () => {
    const value = { a: 'hunter2', b: 'login hunter2, then', c: 'hunter22 and xhunter2', hunter2: 1 };
    assert.deepEqual(redactReply(value, JSON.stringify(value), ['hunter2']), {
      a: '[redacted]',
      b: 'login [redacted], then',
      c: 'hunter22 and xhunter2',
      '[redacted]': 1,
    });
    assert.deepEqual(redactReply({ a: 'x', b: 'a b' }, '{"a":"x","b":"a b"}', ['ab']), { a: 'x', b: 'a b' });
  });

  test('redact: even a one- or two-character password, as a whole token only', () => {
    assert.equal(redact('wrong password: q7 for bot (q7x)', ['q7']), 'wrong password: [redacted] for bot (q7x)');
  });

  test('carectl: a 7-character password echoed as a value is not printed', async () => {
    const api = await scriptedApi(() => ({ json: { tag: { id: '1', name: 'echo', note: 'pw7Char', about: 'pw7Chars is longer' } } }));
    try {
      const out = await runCli(['tags', 'get', '1', '-o', 'ndjson'], { env: { ...scriptedEnv(api), CARECTL_PASSWORD: 'pw7Char' } });
      assert.equal(out.stdout, '{"id":"1","name":"echo","note":"[redacted]","about":"pw7Chars is longer"}\n');
    } finally {
      await api.close();
    }
  });
});

describe('carectl api -d @FILE that is not JSON', () => {
  test('the error says where it stopped, never what the file holds; nothing is sent', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'carectl-data-'));
    writeFileSync(path.join(folder, 'password.txt'), 'hunter2-from-a-file\n');
    writeFileSync(path.join(folder, 'cut.json'), '{"name":\n "hunter2-cut" 1}');
    const api = await scriptedApi(() => ({ json: {} }));
    try {
      for (const [file, where] of [
        ['password.txt', ''],
        ['cut.json', ' \\(at line 2, column 16\\)'],
      ] as const) {
        const out = await runCli(['api', 'v1.3/tags', '-X', 'POST', '-d', `@${file}`], { env: scriptedEnv(api), cwd: folder });
        assert.equal(out.code, 2);
        assert.match(out.stderr, new RegExp(`^carectl: --data: ${file.replace('.', '\\.')} is not valid JSON${where}\\n$`));
        assert.ok(!out.stderr.includes('hunter2'), out.stderr);
      }
      assert.equal(api.requests.length, 0);
    } finally {
      await api.close();
      rmSync(folder, { recursive: true });
    }
  });
});

describe('secrets with characters JSON escapes (review D1)', () => {
  const QUOTED = 'Pa"ss\\word-2024xyz';
  test('redactReply: a password with " and \\ echoed by plain JSON.stringify is replaced in the decoded value', () => {
    const value = { name: QUOTED, note: `bad password ${QUOTED}` };
    assert.deepEqual(redactReply(value, JSON.stringify(value), [QUOTED]), { name: '[redacted]', note: 'bad password [redacted]' });
  });

  test('carectl: the password and a proxy password with " and \\ echoed in plain JSON are not printed', async () => {
    const PROXY = 'pr"oxy-secret-99';
    const api = await scriptedApi(() => ({ text: JSON.stringify({ tag: { id: '1', name: QUOTED, note: PROXY, short: 'hunter"7' } }) }));
    try {
      const out = await runCli(['tags', 'get', '1', '-o', 'json'], {
        env: { ...scriptedEnv(api), CARECTL_PASSWORD: QUOTED, HTTPS_PROXY: 'http://puser:pr%22oxy-secret-99@127.0.0.1:9', NO_PROXY: '127.0.0.1' },
      });
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(JSON.parse(out.stdout), { id: '1', name: '[redacted]', note: '[redacted]', short: 'hunter"7' });
      const short = await runCli(['tags', 'get', '1', '-o', 'json'], { env: { ...scriptedEnv(api), CARECTL_PASSWORD: 'hunter"7' } });
      assert.equal((JSON.parse(short.stdout) as { short: string }).short, '[redacted]');
    } finally {
      await api.close();
    }
  });
});

describe('other echo forms (review D2, D3)', () => {
  const pct = (text: string): string => encodeURIComponent(text).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());
  test('redact and redactReply: lower-case percent-encoding, the Base64 of the password alone, its NFC and NFD forms', () => {
    const nfd = PASSWORD.normalize('NFD');
    assert.notEqual(nfd, PASSWORD);
    const echoes = [
      pct(PASSWORD),
      Buffer.from(PASSWORD).toString('base64'),
      Buffer.from(PASSWORD).toString('base64').replace(/=+$/, ''),
      nfd,
      `x=${pct(PASSWORD)}&y=1`,
      'auth=Basic%20' + pct(Buffer.from(`bot:${PASSWORD}`).toString('base64')),
    ];
    const forms = basicCredentialForms('bot', PASSWORD);
    for (const echo of echoes) {
      assert.doesNotMatch(redact(`said ${echo}.`, forms), /42|p%c3|U3Vw|Secret/, echo);
      const value = { name: echo };
      assert.doesNotMatch(JSON.stringify(redactReply(value, JSON.stringify(value), forms)), /42|p%c3|U3Vw|Secret/, echo);
    }
  });

  test('carectl: a lower-case percent-encoded echo in data and in a next_page link is not printed', async () => {
    const api = await scriptedApi((request) =>
      request.url.includes('page=2')
        ? { json: { tags: [] } }
        : { json: { tags: [{ id: '1', name: pct(PASSWORD) }], next_page: `${'/v1.3/tags?page=2'}&x=${pct(PASSWORD)}` } },
    );
    try {
      const out = await runCli(['tags', 'list', '-o', 'json', '--verbose'], { env: { ...scriptedEnv(api), CARECTL_PASSWORD: PASSWORD } });
      for (const text of [out.stdout, out.stderr]) assert.ok(!/p%c3%a4ssw/i.test(text), text);
      assert.match(out.stdout, /"name": "\[redacted\]"/);
    } finally {
      await api.close();
    }
  });
});

describe("short passwords: echoes of the credentials, never carectl's own words (review D5)", () => {
  test("redactError leaves carectl's own text alone for a short password, still redacts a long one", () => {
    const own = (password: string): string =>
      redactError(new Error('report 60001 is still queued; keep waiting with: carectl reports wait 60001'), basicCredentialForms('bot', password)).message;
    for (const password of ['port', 'wait', '60001', 'reports'])
      assert.equal(own(password), 'report 60001 is still queued; keep waiting with: carectl reports wait 60001', password);
    assert.equal(redactError(new Error('sent it-is-a-long-secret back'), basicCredentialForms('bot', 'it-is-a-long-secret')).message, 'sent [redacted] back');
  });

  test("an error body echoing a short password: the echo is redacted, carectl's words around it are not", async () => {
    const api = await scriptedApi(() => ({ status: 400, json: { status: 'error', message: 'wrong password HTTP for bot' } }));
    try {
      const out = await runCli(['tags', 'get', '1'], { env: { ...scriptedEnv(api), CARECTL_PASSWORD: 'HTTP' } });
      assert.equal(out.stderr, 'carectl: wrong password [redacted] for bot (HTTP 400)\n');
    } finally {
      await api.close();
    }
  });

  test('a record whose id equals a short password: the id check holds, and stderr says what was replaced', async () => {
    const api = await scriptedApi((request) => {
      if (request.url.includes('reports')) return { json: { report: { id: '60001', url: 'x' } } };
      return { json: { tag: { id: '7001', name: 'admin@example.com 2024-01-05' } } };
    });
    try {
      const tag = await runCli(['tags', 'get', '7001', '-o', 'ndjson'], { env: { ...scriptedEnv(api), CARECTL_PASSWORD: '7001' } });
      assert.equal(tag.code, 0, tag.stderr);
      assert.equal(tag.stdout, '{"id":"[redacted]","name":"admin@example.com 2024-01-05"}\n');
      assert.match(tag.stderr, /holds the password .*\[redacted\]/);
      const clock = fakeClock();
      const wait = await runCli(['reports', 'wait', '60001', '--timeout', '1s'], {
        env: { ...scriptedEnv(api), CARECTL_PASSWORD: '60001' },
        now: clock.now,
        sleep: clock.sleep,
      });
      assert.equal(wait.code, 6, wait.stderr);
      assert.match(wait.stderr, /keep waiting with: carectl reports wait 60001\n$/);
    } finally {
      await api.close();
    }
  });
});

describe('a password echoed JSON-escaped in a JSON string, or HTML-escaped (field test F2)', () => {
  /** json.dumps with ensure_ascii: ASCII as itself, `"` `\` escaped, every other character as \uXXXX (astral: a surrogate pair). */
  const asciiJson = (text: string, hex: (h: string) => string = (h) => h): string =>
    JSON.stringify(text)
      .slice(1, -1)
      .replace(/[\u0080-\uffff]/g, (c) => `\\u${hex(c.charCodeAt(0).toString(16).padStart(4, '0'))}`);
  /** Python's html.escape. */
  const htmlEscape = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;' })[c]!);
  /** How the password stands in a string the service sent, once that string is decoded. */
  const forms: [string, (pw: string) => string][] = [
    ['\\u escapes, lower-case hex', (pw) => asciiJson(pw)],
    ['\\u escapes, upper-case hex', (pw) => asciiJson(pw, (h) => h.toUpperCase())],
    ['JSON in JSON (w\\\\u00f6rd\\\\\\"x)', (pw) => JSON.stringify(asciiJson(pw)).slice(1, -1)],
    ['PHP JSON in JSON (\\\\\\/)', (pw) => JSON.stringify(asciiJson(pw).replaceAll('/', '\\/')).slice(1, -1)],
    ['HTML named references', htmlEscape],
    ["PHP's htmlspecialchars (&#039;)", (pw) => htmlEscape(pw).replaceAll('&#x27;', '&#039;')],
    ['HTML decimal references', (pw) => [...pw].map((c) => `&#${c.codePointAt(0)};`).join('')],
    ['HTML hexadecimal references', (pw) => [...pw].map((c) => `&#X${c.codePointAt(0)!.toString(16).toUpperCase()};`).join('')],
    ['JSON escapes inside HTML', (pw) => htmlEscape(asciiJson(pw))],
  ];
  const PASSWORDS = ['S3cr/t+p@ss wörd"x', 'pässwort99', 'Emoji😀pass', `Tag<b>&'q'\\9`];

  test('each form changes a password, so each test below can fail', () => {
    for (const [name, form] of forms)
      assert.ok(
        PASSWORDS.some((password) => form(password) !== password),
        name,
      );
  });

  for (const [name, form] of forms) {
    test(`${name}: not printed in an error message (stderr), whatever the password`, async () => {
      let message = '';
      const api = await scriptedApi(() => ({ status: 401, text: JSON.stringify({ status: 'error', message }) }));
      try {
        for (const password of PASSWORDS) {
          message = `pw ${form(password)} refused`;
          const out = await runCli(['tags', 'get', '1', '--retries', '0'], { env: { ...scriptedEnv(api), CARECTL_PASSWORD: password } });
          assert.equal(out.code, 3, out.stderr);
          assert.equal(out.stderr, 'carectl: pw [redacted] refused (HTTP 401)\n', password);
        }
      } finally {
        await api.close();
      }
    });
  }

  test('every form: not printed on stdout of carectl api, and stderr says a password was redacted', async () => {
    const password = 'S3cr/t+p@ss wörd"x';
    const echo = Object.fromEntries(forms.map(([name, form]) => [name, `pw=${form(password)};`]));
    const api = await scriptedApi(() => ({
      text: JSON.stringify({ tag: { id: '1', inner: JSON.stringify({ pw: password }).replace('ö', '\\u00f6'), ...echo } }),
    }));
    try {
      const out = await runCli(['api', 'v1.3/tags/1'], { env: { ...scriptedEnv(api), CARECTL_PASSWORD: password } });
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(JSON.parse(out.stdout), {
        tag: { id: '1', inner: '{"pw":"[redacted]"}', ...Object.fromEntries(forms.map(([name]) => [name, 'pw=[redacted];'])) },
      });
      assert.match(out.stderr, /holds the password/);
    } finally {
      await api.close();
    }
  });

  test('login: the refusal does not print the echoed password', async () => {
    const password = 'pässwort99';
    const api = await scriptedApi(() => ({
      status: 401,
      text: JSON.stringify({ status: 'error', message: JSON.stringify({ message: `bad pw ${asciiJson(password)}` }) }),
    }));
    try {
      const out = await runCli(['login', '--base-url', api.baseUrl, '--user', 'bot', '--password-stdin'], {
        env: { XDG_CONFIG_HOME: '/nonexistent/carectl-test-config', CARECTL_PASSWORD: undefined },
        stdin: `${password}\n`,
      });
      assert.notEqual(out.code, 0);
      assert.match(out.stderr, /refused these credentials.*bad pw \[redacted\]/);
      assert.ok(!/p.{0,8}u00e4ssw/.test(out.stderr), out.stderr);
    } finally {
      await api.close();
    }
  });

  test('conversations update: a failed row on stdout does not print the echoed password', async () => {
    const password = 'Emoji😀pass';
    const api = await scriptedApi((request) =>
      request.method === 'PATCH'
        ? { status: 422, text: JSON.stringify({ status: 'error', message: `pw ${JSON.stringify(asciiJson(password)).slice(1, -1)}` }) }
        : { json: { conversation: { id: '500001', url: 'x', tags: [] } } },
    );
    try {
      const out = await runCli(
        ['conversations', 'update', '500001', '--status', 'on_hold', '-o', 'tsv', '--no-header', '--columns', 'id,result', '--retries', '0'],
        {
          env: { ...scriptedEnv(api), CARECTL_PASSWORD: password },
        },
      );
      assert.equal(out.code, 1, out.stderr);
      assert.equal(out.stdout, '500001\trefused: pw [redacted] (HTTP 422)\n');
    } finally {
      await api.close();
    }
  });

  test('a short password: an escaped echo is replaced as a whole token, not inside another word', () => {
    const forms = basicCredentialForms('bot', 'pä7');
    assert.equal(redact('pw p\\u00E47, p&#228;7 and p\\\\u00e47.', forms), 'pw [redacted], [redacted] and [redacted].');
    assert.equal(redact('xp\\u00e47 p\\u00e47x p&auml;7', forms), 'xp\\u00e47 p\\u00e47x p&auml;7');
    // Escapes that spell other characters are left alone.
    assert.equal(redact('p\\u00e57 p&#229;7 p\\\\u00e5', forms), 'p\\u00e57 p&#229;7 p\\\\u00e5');
  });
});
