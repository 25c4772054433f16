/**
 * Paging links that cannot be trusted (a scripted API): empty pages are followed, loops and
 * repeated pages end the list with an error and a --resume token, links that drop the query's
 * filters are repaired where the paging style allows it, and api --paginate stops too.
 */
import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { runCli, type RunResult } from './helpers.js';
import { json, localServer, scriptedApi, type ScriptedApi, scriptedEnv, type ScriptedReply, type ScriptedRequest } from './scripted-server.js';

type Answer = (request: ScriptedRequest, params: URLSearchParams, base: string) => ScriptedReply | undefined;

/** Runs `argv` against a scripted API answering with `answer`, then closes it. */
async function against(
  answer: Answer,
  argv: string[],
  run?: (api: ScriptedApi, result: RunResult) => Promise<void>,
): Promise<{ result: RunResult; api: ScriptedApi }> {
  let base = '';
  // --channel takes a name or an id, looked up in the channels list first: not what these tests are about.
  const lookup = (request: ScriptedRequest): boolean => request.url.startsWith('/v1.3/channels?');
  const api = await scriptedApi((request) =>
    lookup(request)
      ? { json: { channels: [{ id: '202', url: 'x', name: 'Acme Facebook' }] } }
      : answer(request, new URL(request.url, 'http://x').searchParams, base),
  );
  base = api.baseUrl;
  try {
    const result = await runCli(argv, { env: scriptedEnv(api) });
    api.requests.splice(0, api.requests.length, ...api.requests.filter((request) => !lookup(request)));
    await run?.(api, result);
    return { result, api };
  } finally {
    await api.close();
  }
}

const tags = (...ids: number[]): Array<{ id: string; name: string; is_active: boolean }> =>
  ids.map((id) => ({ id: String(id), name: `t${id}`, is_active: true }));
const lines = (ids: number[]): string => ids.map((id) => `${JSON.stringify({ id: String(id), name: `t${id}`, is_active: true })}\n`).join('');
const tokenOf = (stderr: string): string | undefined => /--resume (\S+)/.exec(stderr)?.[1];

describe('paging follows what a service sends, but never loops', () => {
  test('an empty page that carries a next_page is followed', async () => {
    const { result, api } = await against(
      (_request, params, base) => {
        const skip = params.get('skip');
        if (skip === null) return { json: { tags: tags(1, 2), paging: { next_page: `${base}/v1.3/tags?fields=name%2Cis_active&page_size=50&skip=2` } } };
        if (skip === '2') return { json: { tags: [], paging: { next_page: `${base}/v1.3/tags?fields=name%2Cis_active&page_size=50&skip=3` } } };
        return { json: { tags: tags(3), paging: { next_page: null } } };
      },
      ['tags', 'list', '-o', 'ndjson'],
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, lines([1, 2, 3]));
    assert.equal(api.requests.length, 3);
  });

  test('a link back to a page already read (A→B→A) ends the list with an error and a --resume token', async () => {
    let fixed = false;
    const answer: Answer = (_request, params, base) => {
      const skip = params.get('skip');
      if (skip === null) return { json: { tags: tags(1, 2), paging: { next_page: `${base}/v1.3/tags?fields=name%2Cis_active&page_size=50&skip=2` } } };
      if (skip === '2')
        return {
          json: {
            tags: tags(3, 4),
            paging: {
              next_page: fixed ? `${base}/v1.3/tags?fields=name%2Cis_active&page_size=50&skip=4` : `${base}/v1.3/tags?fields=name%2Cis_active&page_size=50`,
            },
          },
        };
      return { json: { tags: tags(5), paging: { next_page: null } } };
    };
    await against(answer, ['tags', 'list', '-o', 'ndjson'], async (api, result) => {
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^carectl: the service sent a next_page link back to a page already read \(v1\.3\/tags\?fields=name%2Cis_active&page_size=50\); the list stopped after 4 records: to continue, run the same command with --resume \S+\n$/,
      );
      assert.equal(result.stdout, lines([1, 2, 3, 4]));
      assert.equal(api.requests.length, 2, 'the page already read is not asked for again');
      fixed = true;
      const rest = await runCli(['tags', 'list', '-o', 'ndjson', '--resume', tokenOf(result.stderr) as string], { env: scriptedEnv(api) });
      assert.equal(rest.code, 0, rest.stderr);
      assert.equal(result.stdout + rest.stdout, lines([1, 2, 3, 4, 5]));
    });
  });

  test('the same address with its query in another order is the same page', async () => {
    const { result, api } = await against(
      (_request, params, base) => {
        if (params.get('skip') === null)
          return { json: { tags: tags(1), paging: { next_page: `${base}/v1.3/tags?fields=name%2Cis_active&page_size=50&skip=1` } } };
        return { json: { tags: tags(2), paging: { next_page: `${base}/v1.3/tags?skip=1&page_size=50&fields=name%2Cis_active` } } };
      },
      ['tags', 'list', '-o', 'ndjson'],
    );
    assert.equal(result.code, 1);
    assert.match(result.stderr, /a page already read \(v1\.3\/tags\?skip=1&page_size=50&fields=name%2Cis_active\).*--resume \S+\n$/);
    assert.equal(result.stdout, lines([1, 2]));
    assert.equal(api.requests.length, 2);
  });

  test('a page that repeats the ids of the page before it is not written, and ends the list', async () => {
    const { result } = await against(
      (_request, params, base) => {
        const skip = Number(params.get('skip') ?? 0);
        return { json: { tags: tags(1, 2), paging: { next_page: `${base}/v1.3/tags?fields=name%2Cis_active&page_size=50&skip=${skip + 2}` } } };
      },
      ['tags', 'list', '-o', 'ndjson'],
    );
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^carectl: the service sent the same records as the page before it \(v1\.3\/tags\?fields=name%2Cis_active&page_size=50&skip=2\) with a link to more: paging would not end; the list stopped after 2 records: .*--resume \S+\n$/,
    );
    assert.equal(result.stdout, lines([1, 2]));
  });

  test('empty pages that go on linking end at the 50th in a row', async () => {
    const { result, api } = await against(
      (_request, params, base) => {
        const skip = Number(params.get('skip') ?? 0);
        return { json: { tags: skip === 0 ? tags(1) : [], paging: { next_page: `${base}/v1.3/tags?fields=name%2Cis_active&page_size=50&skip=${skip + 1}` } } };
      },
      ['tags', 'list', '-o', 'ndjson'],
    );
    assert.equal(result.code, 1);
    assert.match(result.stderr, /50 empty pages in a row .*--resume \S+ \(the service's skip in it counts the 50 records before it[^\n]*\)\n$/);
    assert.equal(result.stdout, lines([1]));
    assert.equal(api.requests.length, 51);
  });
});

/** A conversation record with just an id (the scripted service ignores fields). */
const conversations = (...ids: number[]): Array<{ id: string }> => ids.map((id) => ({ id: String(id) }));
const idLines = (ids: number[]): string => ids.map((id) => `${JSON.stringify({ id: String(id) })}\n`).join('');

describe('a next_page link that drops or changes the query is never followed as it is', () => {
  const argv = [
    'conversations',
    'list',
    '--status',
    'unread',
    '--channel',
    '202',
    '--oldest',
    '2026-01-01..2026-01-31',
    '--fields',
    'status',
    '-o',
    'ndjson',
    '--parallel',
    '1',
  ];
  const query = 'status=unread&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-02-01&channel=202&fields=status';
  for (const [what, link] of [
    [
      'changes a filter',
      'v1.3/conversations?status=closed&channel=202&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-02-01&fields=status&page_size=50&skip=2',
    ],
    [
      'adds a value',
      'v1.3/conversations?status=unread&channel=202&channel=203&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-02-01&fields=status&page_size=50&skip=2',
    ],
    [
      'widens the date range',
      'v1.3/conversations?status=unread&channel=202&oldest_sort_date_gte=2025-01-01&oldest_sort_date_lt=2026-02-01&fields=status&page_size=50&skip=2',
    ],
    [
      'adds a parameter carectl does not know (utm_src: it cannot tell a harmless one from one that widens the list)',
      'v1.3/conversations?status=unread&channel=202&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-02-01&fields=status&page_size=50&skip=2&utm_src=api',
    ],
    [
      'numbers its pages (page=2)',
      'v1.3/conversations?status=unread&channel=202&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-02-01&fields=status&page_size=50&page=2',
    ],
  ] as const) {
    test(`skip paging: a link that ${what} ends the list with an error and a --resume token`, async () => {
      let answered = 0;
      const { result, api } = await against((_request, params, base) => {
        answered++;
        const skip = Number(params.get('skip') ?? 0);
        const next = link.startsWith('http:') || link.startsWith('/') ? link : `${base}/${link}`;
        return { json: { conversations: conversations(skip + 1, skip + 2), paging: { next_page: skip === 0 ? next : null } } };
      }, argv);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^carectl: the service sent a next_page link that (drops \w+ from the query|changes \w+ in the query|adds \w+ to the query|widens the query's oldest_sort_date range)(, [^(]*)? \(.*\): its pages could be another list, so the list stops here \(carectl follows only links that keep the query, moving the cursor or tightening a date bound; if every link of this service does this, report it to its operators\); the list stopped after 2 records: to continue, run the same command with --resume \S+\n$/,
      );
      assert.equal(result.stdout, idLines([1, 2]));
      assert.equal(answered, 1);
      assert.equal(api.requests[0]!.url, `/v1.3/conversations?${query}&page_size=50`);
    });
  }

  for (const [what, link] of [
    ['drops a filter', 'v1.3/conversations?status=unread&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-02-01&fields=status&page_size=50&skip=2'],
    ['drops fields and the page size', 'v1.3/conversations?status=unread&channel=202&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-02-01&skip=2'],
    ['is written http:/… and drops a filter', 'http:/v1.3/conversations?status=unread&fields=status&page_size=50&skip=2'],
    ['is relative and drops a filter', '/v1.3/conversations?status=unread&fields=status&page_size=50&skip=2'],
    // RFC 3986: relative to the page it came on (/v1.3/conversations?…), so the same path.
    ['is relative to its page, adds the default sort and drops a filter', 'conversations?status=unread&fields=status&sort=oldest_sort_date&skip=2'],
  ] as const) {
    test(`skip paging: a link that ${what} is followed with what it lost given back`, async () => {
      const { result, api } = await against((_request, params, base) => {
        const skip = Number(params.get('skip') ?? 0);
        const next = link.startsWith('v1.3/') ? `${base}/${link}` : link;
        return { json: { conversations: conversations(skip + 1, skip + 2), paging: { next_page: skip === 0 ? next : null } } };
      }, argv);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, idLines([1, 2, 3, 4]));
      const second = new URL(api.requests[1]!.url, 'http://x').searchParams;
      for (const [key, value] of new URLSearchParams(`${query}&page_size=50`)) assert.deepEqual(second.getAll(key), [value], key);
      assert.equal(second.get('skip'), '2');
    });
  }

  test('a link on the same service whose path starts like a scheme (v1.3:x/…) is another path, not another origin: its token resumes', async () => {
    const link =
      'v1.3:x/conversations?status=unread&channel=202&oldest_sort_date_gte=2026-01-01&oldest_sort_date_lt=2026-02-01&fields=status&page_size=50&skip=2';
    const refusal = /^carectl: the service sent a next_page link that goes to another path \(v1\.3:x\/conversations\)/;
    await against(
      (_request, _params, base) => ({ json: { conversations: conversations(1, 2), paging: { next_page: `${base}/${link}` } } }),
      argv,
      async (api, result) => {
        assert.equal(result.code, 1);
        assert.match(result.stderr, refusal);
        assert.equal(result.stdout, idLines([1, 2]));
        // The token belongs to this service (a link taken for another origin tied it to 'null'): the resumed run meets the same link.
        const resumed = await runCli([...argv, '--resume', tokenOf(result.stderr) as string], { env: scriptedEnv(api) });
        assert.equal(resumed.code, 1, resumed.stderr);
        assert.match(resumed.stderr, refusal);
      },
    );
  });

  test('skip paging: a keyset link (a tighter date bound, the default sort) is followed as given', async () => {
    const keyset =
      'v1.3/conversations?status=unread&channel=202&fields=status&oldest_sort_date_gte=2026-01-20T10%3A00%3A00&oldest_sort_date_lt=2026-02-01&sort=oldest_sort_date&page_size=50&skip=1';
    const { result, api } = await against((request, _params, base) => {
      const first = !request.url.includes('skip=');
      return { json: { conversations: first ? conversations(1, 2) : conversations(3), paging: { next_page: first ? `${base}/${keyset}` : null } } };
    }, argv);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, idLines([1, 2, 3]));
    assert.equal(api.requests[1]!.url, `/${keyset}`);
  });

  test('token paging: a link that changes the query ends the list with an error and a token', async () => {
    let fixed = false;
    const answer: Answer = (request, params, base) => {
      const token = params.get('page_token');
      const types = (...ids: number[]): unknown[] => ids.map((id) => ({ id: String(id), name: `n${id}`, format: 'short', is_active: true }));
      if (token === null)
        return {
          json: {
            annotationtypes: types(1, 2),
            paging: { next_page: `${base}/api/1/annotation-types?page_size=50&page_token=AA${fixed ? '' : '&is_active=true'}` },
          },
        };
      assert.equal(request.url, '/api/1/annotation-types?page_size=50&page_token=AA');
      return { json: { annotationtypes: types(3), paging: { next_page: null } } };
    };
    await against(answer, ['annotation-types', 'list', '--columns', 'id', '--no-header'], async (api, result) => {
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^carectl: the service sent a next_page link that adds is_active to the query \(api\/1\/annotation-types\?page_size=50&page_token=AA&is_active=true\): its pages could be another list, so the list stops here \(carectl follows only links that keep the query, moving the cursor or tightening a date bound; if every link of this service does this, report it to its operators\); the list stopped after 2 records: to continue, run the same command with --resume \S+\n$/,
      );
      assert.equal(result.stdout, '1\n2\n');
      assert.equal(api.requests.length, 1);
      fixed = true;
      const rest = await runCli(['annotation-types', 'list', '--columns', 'id', '--no-header', '--resume', tokenOf(result.stderr) as string], {
        env: scriptedEnv(api),
      });
      assert.equal(rest.code, 0, rest.stderr);
      assert.equal(result.stdout + rest.stdout, '1\n2\n3\n');
    });
  });
});

describe('conversations list without --status or --priority (the union of two queries)', () => {
  test('prints a conversation once when its priority changed between the two queries', async () => {
    const { result, api } = await against(
      (_request, params) => {
        const priority = params.get('is_priority');
        // 3 moved from priority to not while the list ran, and shows in both queries.
        return { json: { conversations: conversations(...(priority === 'true' ? [1, 2, 3] : [3, 4, 5])), paging: { next_page: null } } };
      },
      ['conversations', 'list', '-o', 'ndjson', '--fields', 'status'],
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, idLines([1, 2, 3, 4, 5]));
    // The two queries' first pages, their last: what --parallel 1 sends, nothing cut.
    assert.equal(api.requests.length, 2);
  });

  test('--sort there is a usage error and sends nothing', async () => {
    const { result, api } = await against(() => ({ json: {} }), ['conversations', 'list', '--sort', '-oldest_sort_date']);
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      'carectl: --sort: add --status or --priority/--no-priority; without them the list joins two queries, one after the other, which cannot be merged by a date the service does not return\n',
    );
    assert.equal(api.requests.length, 0);
  });
});

describe('api --paginate does not trust paging links to end', () => {
  it('follows empty pages, and stops at the 50th in a row and at a link back to a page already read', async () => {
    const server = await localServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? '1');
      // page 2 links back to page 1 under /loop, and to an ever-further empty page under /empty
      const next = req.url?.startsWith('/loop') ? `/loop?page=${page === 2 ? 1 : page + 1}` : `/empty?page=${page + 1}`;
      json(res, 200, { items: page > 2 && req.url?.startsWith('/empty') ? [] : [{ page }], paging: { next_page: next } });
    });
    try {
      const env = { CARECTL_BASE_URL: server.url, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' };
      const empty = await runCli(['api', 'empty?page=1', '--paginate'], { env });
      assert.equal(empty.code, 1);
      assert.match(
        empty.stderr,
        /^carectl: the service sent 50 empty pages in a row \(the last: .*\/empty\?page=52\) with a link to more: paging would not end\n$/,
      );
      assert.equal(empty.stdout.trimEnd().split('\n').length, 51, 'the empty pages before the 50th are printed, that one is not');
      const loop = await runCli(['api', 'loop?page=1', '--paginate'], { env });
      assert.equal(loop.code, 1);
      assert.match(loop.stderr, /next_page link back to a page already read/);
      assert.equal(loop.stdout.trimEnd().split('\n').length, 2);
    } finally {
      await server.close();
    }
  });

  it('resolves a relative link against the page it came on (RFC 3986), not the base address', async () => {
    const server = await localServer((req, res) => {
      const skip = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('skip') ?? '0');
      json(res, 200, { tags: [{ skip }], paging: { next_page: skip < 2 ? `tags?page_size=1&skip=${skip + 1}` : null } });
    });
    try {
      const result = await runCli(['api', 'v1.3/tags?page_size=1', '--paginate'], {
        env: { CARECTL_BASE_URL: server.url, CARECTL_USER: 'u', CARECTL_PASSWORD: 'p' },
      });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(
        server.requests.map((request) => request.url),
        ['/v1.3/tags?page_size=1', '/v1.3/tags?page_size=1&skip=1', '/v1.3/tags?page_size=1&skip=2'],
      );
    } finally {
      await server.close();
    }
  });
});
