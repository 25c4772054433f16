/**
 * What a command sends (path, query, body) and how a reply maps to its output, with no server:
 * the whole CLI runs in-process with its requests going to undici's MockAgent (Io.dispatcher),
 * network shut off. What needs a real exchange or the process (paging against the sandbox,
 * signals, pipes, a pty) stays end to end in the other files.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { MockAgent } from 'undici';
import { RESOURCES } from '../src/catalogue/index.js';
import { runCli, type RunOptions, type RunResult } from './helpers.js';

const ORIGIN = 'https://api.example.test';
const ENV = { CARECTL_BASE_URL: ORIGIN, CARECTL_USER: 'user', CARECTL_PASSWORD: 'secret', XDG_CONFIG_HOME: '/nonexistent/carectl-test-config' };

type Row = Record<string, unknown>;

interface Sent {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string | undefined;
}

/**
 * A service that answers every GET of a list with the records `held` has for that resource (none
 * unless given), on one page; it records what was sent.
 */
class MockService {
  readonly agent = new MockAgent();
  readonly sent: Sent[] = [];
  constructor(private readonly held: Record<string, Row[]> = {}) {
    this.agent.disableNetConnect();
    this.agent
      .get(ORIGIN)
      .intercept({ path: () => true, method: () => true })
      .reply((request) => {
        const url = new URL(request.path, ORIGIN);
        const body = request.body === undefined || request.body === null ? undefined : Buffer.from(request.body as string | Uint8Array).toString();
        this.sent.push({ method: request.method, path: url.pathname, query: url.searchParams, body });
        return { statusCode: 200, data: JSON.stringify(this.reply(url)), responseOptions: { headers: { 'content-type': 'application/json' } } };
      })
      .persist();
  }

  private reply(url: URL): unknown {
    const [, , name = '', id] = url.pathname.split('/');
    const spec = RESOURCES.find((resource) => resource.path === name);
    const records = this.held[name] ?? [];
    if (id !== undefined) return { [spec?.envelope.single ?? name]: records.find((r) => r.id === id) };
    const wanted = url.searchParams.getAll('id');
    return { [spec?.envelope.list ?? name]: wanted.length ? records.filter((r) => wanted.includes(String(r.id))) : records };
  }

  run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    return runCli(argv, { ...options, env: { ...ENV, ...options.env }, dispatcher: this.agent });
  }

  /** The query of the first request to the command's own resource (a --channel NAME is looked up first). */
  async firstQuery(argv: string[]): Promise<URLSearchParams> {
    const from = this.sent.length;
    const result = await this.run([...argv, '--limit', '1', '--quiet']);
    assert.equal(result.code, 0, result.stderr);
    const own = this.sent.slice(from).find((s) => s.path.split('/')[2] === argv[0]);
    assert.ok(own, `no request to ${argv[0]}: ${this.sent.map((s) => s.path).join(', ')}`);
    return own.query;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

const CHANNELS: Row[] = [{ id: '202', name: 'Acme Facebook', type: 'facebook' }];
const TAGS: Row[] = [{ id: '7005', name: 'praise-follow-up', is_active: true }];

describe('filters become parameters', () => {
  let service: MockService;
  beforeEach(() => {
    service = new MockService({ channels: CHANNELS, tags: TAGS });
  });
  afterEach(() => service.close());

  test('FROM..TO is _gte=FROM and _lt= the day after TO (whole days under every reading of a date-only bound)', async () => {
    const q = await service.firstQuery(['conversations', 'list', '--status', 'closed', '--oldest', '2026-01-01..2026-03-31', '--parallel', '1']);
    assert.equal(q.get('oldest_sort_date_gte'), '2026-01-01');
    assert.equal(q.get('oldest_sort_date_lt'), '2026-04-01');
    assert.equal(q.get('oldest_sort_date_lte'), null);
  });

  test('explicit bounds and relative dates', async () => {
    const q = await service.firstQuery(['conversations', 'list', '--status', 'closed', '--newest', 'gt:2026-02-01,lt:2026-02-10']);
    assert.equal(q.get('newest_sort_date_gt'), '2026-02-01');
    assert.equal(q.get('newest_sort_date_lt'), '2026-02-10');
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const week = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
    const r = await service.firstQuery(['users', 'list', '--last-login', '1w..today']);
    assert.equal(r.get('last_login_gte'), week);
    assert.equal(r.get('last_login_lt'), tomorrow);
  });

  // Each flag's parameter, by name: the service ignores an unknown parameter, so a misspelt one
  // would quietly list everything.
  const sent: Array<[string[], Array<[string, string[]]>]> = [
    [
      ['conversations', 'list', '--channel', 'Acme Facebook', '--tag', '7005', '--author', 'm:1', '--assigned-to', '3001', '--priority', '--no-private'],
      [
        ['channel', ['202']],
        ['tag', ['praise-follow-up']],
        ['author', ['m:1']],
        ['assigned_to', ['3001']],
        ['is_priority', ['true']],
        ['contains_private', ['false']],
      ],
    ],
    [['conversations', 'list', '--status', 'unread'], [['status', ['unread']]]],
    [
      ['channels', 'list', '--name', 'Acme Facebook', '--type', 'facebook'],
      [
        ['name', ['Acme Facebook']],
        ['type', ['facebook']],
      ],
    ],
    // The spec names no platforms: one the demo data lacks still goes to the service.
    [['channels', 'list', '--type', 'youtube'], [['type', ['youtube']]]],
    [
      ['accounts', 'list', '--id', '1001,1003', '--name', 'Acme'],
      [
        ['id', ['1001', '1003']],
        ['name', ['Acme']],
      ],
    ],
    [['tags', 'list', '--active'], [['is_active', ['true']]]],
    [
      ['users', 'list', '--timezone', 'UTC', '--joined', '2023-01-01..2023-12-31'],
      [
        ['timezone', ['UTC']],
        ['date_joined_gte', ['2023-01-01']],
        ['date_joined_lt', ['2024-01-01']],
      ],
    ],
    [['reports', 'list', '--channel', '202'], [['channel', ['202']]]],
    [['reports', 'list', '--account', '1001'], [['account', ['1001']]]],
  ];
  for (const [argv, params] of sent) {
    test(`${argv.join(' ')} sends ${params.map(([name]) => name).join(', ')}`, async () => {
      const q = await service.firstQuery(argv);
      for (const [name, values] of params) assert.deepEqual(q.getAll(name), values, name);
    });
  }

  test('pages hold 50 records unless --page-size says otherwise', async () => {
    for (const [argv, param] of [
      [['tags', 'list'], 'page_size'],
      [['users', 'list'], 'limit'],
    ] as const) {
      const from = service.sent.length;
      assert.equal((await service.run([...argv])).code, 0);
      assert.equal(service.sent[from]!.query.get(param), '50', argv.join(' '));
    }
  });

  test('open ranges send one bound', async () => {
    const q = await service.firstQuery(['accounts', 'list', '--created', '..2026-05-01']);
    assert.equal(q.get('created_date_lt'), '2026-05-02');
    assert.equal(q.get('created_date_gte'), null);
  });

  test('repeated and switch filters', async () => {
    const q = await service.firstQuery([
      'conversations',
      'list',
      '--status',
      'unread',
      '--private',
      '--queue',
      '3,4',
      '--queue',
      '5',
      '--include',
      'content,notes',
      '--sort',
      '-newest_sort_date',
    ]);
    assert.deepEqual(q.getAll('queue_id'), ['3', '4', '5']);
    assert.deepEqual(q.getAll('include'), ['content', 'notes']);
    assert.equal(q.get('contains_private'), 'true');
    assert.equal(q.get('sort'), '-newest_sort_date');
    const t = await service.firstQuery(['tags', 'list', '--inactive']);
    assert.equal(t.get('is_active'), 'false');
  });

  test('a LIST option given twice joins its values; the same value twice is taken once', async () => {
    const joined = await service.run(['tags', 'list', '--columns', 'id', '--columns', 'name', '--limit', '1', '--quiet']);
    const once = await service.run(['tags', 'list', '--columns', 'id,name', '--limit', '1', '--quiet']);
    assert.equal(joined.code, 0, joined.stderr);
    assert.equal(joined.stdout, once.stdout);
    const fields = await service.firstQuery(['tags', 'list', '--fields', 'name', '--fields', 'is_active']);
    assert.equal(fields.get('fields'), 'name,is_active');
    const same = await service.firstQuery(['conversations', 'list', '--status', 'unread', '--status', 'unread']);
    assert.deepEqual(same.getAll('status'), ['unread']);
  });

  test('-o with CARECTL_OUTPUT set is one value given, not two', async () => {
    const out = await service.run(['tags', 'get', '7005', '-o', 'json'], { env: { CARECTL_OUTPUT: 'csv' } });
    assert.equal(out.code, 0, out.stderr);
    assert.equal((JSON.parse(out.stdout) as { id: string }).id, '7005');
  });
});

describe('conversations update: checks before anything is sent', () => {
  let service: MockService;
  beforeEach(() => {
    service = new MockService();
  });
  afterEach(() => service.close());

  const cases: Array<{ name: string; args: string[]; message: RegExp }> = [
    { name: 'closing without --close-reason', args: ['500010', '--status', 'closing'], message: /--status closing needs --close-reason/ },
    { name: 'a status the PATCH does not take', args: ['500010', '--status', 'archived'], message: /--status: "archived" is not one of on_hold, closing/ },
    {
      name: '--tags with --add-tags',
      args: ['500010', '--status', 'on_hold', '--tags', '7005', '--add-tags', '7006'],
      message: /--tags .* cannot be combined/,
    },
    {
      name: '--tags with --remove-tags',
      args: ['500010', '--status', 'on_hold', '--tags', '', '--remove-tags', '7006'],
      message: /--tags .* cannot be combined/,
    },
    { name: 'a tag both added and removed', args: ['500010', '--status', 'on_hold', '--add-tags', '7005', '--remove-tags', '7005'], message: /both name 7005/ },
    {
      name: 'an api version without PATCH',
      args: ['500010', '--status', 'on_hold', '--api-version', 'v1.1'],
      message: /--api-version: "v1.1" is not one of v1.3/,
    },
    { name: 'ids both as arguments and from stdin', args: ['500010', '-', '--status', 'on_hold'], message: /not both/ },
    {
      name: '--close-reason given twice',
      args: ['500010', '--status', 'closing', '--close-reason', 'spam', '--close-reason', 'resolved'],
      message: /^carectl: --close-reason: given twice \("spam" and "resolved"\); it takes one value\n$/,
    },
    { name: 'a dot-segment id, even in a dry run', args: ['500010', '..', '--status', 'on_hold', '--dry-run'], message: /"\.\." is not a conversation id/ },
  ];
  test('csv lines piped in as ids (a comma in an id): exit 2 naming the line, nothing sent', async () => {
    const result = await service.run(['conversations', 'update', '-', '--status', 'on_hold'], { stdin: 'id,status\n500011,unread\n' });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(
      result.stderr,
      'carectl: "id,status" is not a conversation id: ids hold no commas (one id per line or argument; a list\'s ids: --columns id)\n',
    );
    assert.equal(service.sent.length, 0, 'nothing sent');
  });
  for (const { name, args, message } of cases) {
    test(`${name}: exit 2, nothing sent`, async () => {
      const result = await service.run(['conversations', 'update', ...args], { stdin: '500011\n' });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
      assert.equal(service.sent.length, 0, 'nothing sent');
    });
  }
});

describe('api: the request as given', () => {
  let service: MockService;
  let folder: string;
  beforeEach(() => {
    service = new MockService();
    folder = mkdtempSync(join(tmpdir(), 'carectl-api-'));
  });
  afterEach(async () => {
    await service.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const usage: Array<[string[], RegExp]> = [
    [['api', 'v1.3/tags', '-X', 'POST', '-d', '{not json'], /^carectl: --data: not valid JSON \(at line 1, column 2\)\n$/],
    [['api', 'v1.3/tags', '-d', '@missing.json'], /--data: cannot read missing\.json: ENOENT/],
    [['api', 'v1.3/tags', '-X', 'GET', '-d', '{}'], /GET does not take/],
    [['api', 'v1.3/tags', '-X', 'POST', '--paginate'], /--paginate reads next_page links with GET/],
    [['api', 'v1.3/tags', '-X', 'TRACE'], /--method: "TRACE" is not one of GET, POST, PUT, PATCH, DELETE/],
    [['api', ' '], /give a PATH/],
  ];
  for (const [argv, message] of usage) {
    test(`${argv.slice(2).join(' ') || 'an empty path'} is a usage error (exit 2), nothing sent`, async () => {
      const result = await service.run(argv, { cwd: folder });
      assert.equal(result.code, 2);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
      assert.equal(service.sent.length, 0, 'nothing sent');
    });
  }

  test('is sent byte for byte (1.0, 1e2, an integer past 2^53, spacing), as curl and gh send it', async () => {
    const written = '{ "n": 1.0, "e": 1e2, "big": 123456789012345678901234567890 }';
    const inline = await service.run(['api', 'v1.1/reports', '-d', written]);
    assert.equal(inline.code, 0, inline.stderr);
    const piped = await service.run(['api', 'v1.1/reports', '-d', '@-'], { stdin: `${written}\n` });
    assert.equal(piped.code, 0, piped.stderr);
    assert.deepEqual(
      service.sent.map((request) => request.body),
      [written, `${written}\n`],
    );
  });

  test('-d @- past 16 MiB is refused as a file that large is (exit 2), nothing sent', async () => {
    const result = await service.run(['api', 'v1.1/reports', '-d', '@-'], { stdin: `"${'x'.repeat(16 * 1024 * 1024)}"` });
    assert.equal(result.code, 2);
    assert.equal(result.stderr, 'carectl: --data: standard input is larger than 16 MiB, more than a request body carectl sends\n');
    assert.equal(service.sent.length, 0, 'nothing sent');
  });

  test('a body that is not UTF-8 (a Latin-1 file) is refused, exit 2, nothing sent; a byte order mark is left out', async () => {
    const latin1 = Buffer.from('{"name":"M\xfcller"}', 'latin1');
    writeFileSync(join(folder, 'latin1.json'), latin1);
    const fromFile = await service.run(['api', 'v1.1/reports', '-d', '@latin1.json'], { cwd: folder });
    const piped = await service.run(['api', 'v1.1/reports', '-d', '@-'], { stdin: Readable.from([latin1]), stdinTTY: false });
    for (const [out, source] of [
      [fromFile, 'latin1.json'],
      [piped, 'standard input'],
    ] as const) {
      assert.equal(out.code, 2);
      assert.equal(
        out.stderr,
        `carectl: --data: ${source} is not UTF-8 text (a Latin-1 file?); a JSON body is UTF-8: convert it first (iconv -f latin1 -t utf-8)\n`,
      );
    }
    assert.equal(service.sent.length, 0, 'nothing sent');
    writeFileSync(join(folder, 'bom.json'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"Müller"}')]));
    const bom = await service.run(['api', 'v1.1/reports', '-d', '@bom.json'], { cwd: folder });
    assert.equal(bom.code, 0, bom.stderr);
    assert.deepEqual(
      service.sent.map((request) => request.body),
      ['{"name":"Müller"}'],
    );
  });
});
