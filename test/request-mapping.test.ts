/**
 * What a command sends (path, query, body) and how a reply maps to its output, with no server:
 * the whole CLI runs in-process with its requests going to undici's MockAgent (Io.dispatcher),
 * network shut off. What needs a real exchange or the process (paging against the sandbox,
 * signals, pipes, a pty) stays end to end in the other files.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { MockAgent } from 'undici';
import { RESOURCES } from '../src/api/catalogue/index.js';
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
        const body = typeof request.body === 'string' ? request.body : undefined;
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
