/**
 * The sandbox rehearses the field: latency on every API reply, a limit on requests in flight
 * (429 past it), api/1 on a listener of its own, and the conversations' keyset paging links.
 * Everything runs over real HTTP on loopback against a sandbox started in-process on port 0.
 */
import assert from 'node:assert/strict';
import { type IncomingHttpHeaders, request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { describe, test } from 'node:test';
import { type ConversationRecord, type Sandbox, type SandboxOptions, startSandbox } from '../src/sandbox/index.js';
import { apiRequests, runCli } from './helpers.js';
import { ANCHOR, NOON, authHeader, call, get, type Answer, type Json } from './sandbox-client.js';

/** Follows next_page to the end; returns the records and the links followed. */
async function walk(sandbox: Sandbox, first: string, key: string): Promise<{ records: Json[]; links: string[] }> {
  const records: Json[] = [];
  const links: string[] = [];
  for (let next: string | null = first; next !== null;) {
    const body: Json = await get(sandbox, next);
    records.push(...body[key]);
    next = body.paging.next_page;
    if (next !== null) links.push(next);
    assert.ok(links.length < 2000, 'paging does not end');
  }
  return { records, links };
}

function ids(records: ReadonlyArray<{ id: unknown }>): string[] {
  return records.map((record) => String(record.id));
}

function assertError(answer: Answer, status: number, message?: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(answer.body).sort(), ['message', 'status']);
  assert.equal(answer.body.status, 'error');
  assert.equal(typeof answer.body.message, 'string');
  if (message) assert.match(answer.body.message, message);
}

async function withSandbox(options: SandboxOptions, run: (sandbox: Sandbox) => Promise<void>): Promise<void> {
  const sandbox = await startSandbox({ anchor: ANCHOR, now: () => NOON, ...options });
  try {
    await run(sandbox);
  } finally {
    await sandbox.close();
  }
}

/** Resolves once the sandbox has received `count` requests in all (they are recorded on arrival). */
async function arrivals(sandbox: Sandbox, count: number): Promise<void> {
  for (let tries = 0; sandbox.requests.length < count; tries++) {
    assert.ok(tries < 2000, `the sandbox received ${sandbox.requests.length} of ${count} requests`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface Held {
  /** Ends the request's body: the sandbox then answers it. */
  release(): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>;
  /** Gives up: closes the connection without ever finishing the request. */
  abandon(): void;
}

/**
 * A GET whose headers are sent and whose (chunked) body is left open: the sandbox has it in
 * flight, and cannot answer it, until release(). No timing is involved.
 */
function hold(sandbox: Sandbox, path: string, base = sandbox.baseUrl): Held {
  const outgoing = request(base + path, { agent: false, headers: { authorization: authHeader(sandbox), 'transfer-encoding': 'chunked' } });
  const answer = new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
    outgoing.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
  });
  answer.catch(() => undefined);
  outgoing.flushHeaders();
  return {
    release: () => {
      outgoing.end();
      return answer;
    },
    abandon: () => void outgoing.destroy(),
  };
}

/** Resolves once the request recorded at `index` has its reply finished (its status set). */
async function finished(sandbox: Sandbox, index: number): Promise<void> {
  for (let tries = 0; sandbox.requests[index]?.status === 0 || sandbox.requests[index] === undefined; tries++) {
    assert.ok(tries < 2000, `request ${index} is still unanswered`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await new Promise((resolve) => setImmediate(resolve));
}

/**
 * The sandbox's waits (its `sleep`), held until the test ends them: a reply's latency lasts
 * exactly as long as the test says, on a loaded machine as on a quiet one.
 */
function heldWaits(): { sleep: (ms: number) => Promise<void>; waiting(count: number): Promise<void>; endAll(): void } {
  const held: Array<() => void> = [];
  let changed = (): void => undefined;
  let open = false;
  return {
    sleep: (ms) => {
      assert.ok(ms > 0);
      if (open) return Promise.resolve();
      const wait = new Promise<void>((resolve) => held.push(resolve));
      changed();
      return wait;
    },
    /** Resolves once `count` waits are held. */
    async waiting(count) {
      while (held.length < count) await new Promise<void>((resolve) => (changed = resolve));
    },
    /** Ends the waits held, and holds none from now on. */
    endAll: () => {
      open = true;
      held.splice(0).forEach((end) => end());
    },
  };
}

describe('sandbox latency', () => {
  test('every reply of the API listener comes no sooner than latencyMs: lists, records, errors', async () => {
    const latencyMs = 60;
    await withSandbox({ latencyMs }, async (sandbox) => {
      const answers = [
        await call(sandbox, '/v1.3/tags?page_size=3'),
        await call(sandbox, '/v1.3/conversations?is_priority=true&page_size=2'),
        await call(sandbox, '/api/1/annotation-types'),
        await call(sandbox, '/v1.3/tags', { auth: false }),
        await call(sandbox, '/v1.3/tags/no-such-tag'),
      ];
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 200, 200, 401, 404],
      );
      for (const answer of answers) assert.ok(answer.elapsed >= latencyMs, `a reply came after ${answer.elapsed.toFixed(1)} ms`);
    });
  });

  test('concurrent requests each wait the latency, on real timers even with an injected clock', async () => {
    // The injected clock stands still (now: () => NOON): the latency runs on real timers all the same.
    await withSandbox({ latencyMs: 60 }, async (sandbox) => {
      const answers = await Promise.all([1, 2, 3].map(() => call(sandbox, '/v1.3/queues?page_size=1')));
      for (const answer of answers) {
        assert.equal(answer.status, 200);
        assert.ok(answer.elapsed >= 60, `a reply came after ${answer.elapsed.toFixed(1)} ms`);
      }
      assert.deepEqual(
        sandbox.requests.map((r) => r.status),
        [200, 200, 200],
      );
    });
  });

  test('a reply is worked out on arrival and travels for the latency, as a distant service answers concurrent requests side by side', async () => {
    // One thread working out replies only after their latency would queue concurrent replies
    // behind each other, which no distant service does: the reply shows the state at arrival.
    const latency = heldWaits();
    await withSandbox({ latencyMs: 400, sleep: latency.sleep }, async (sandbox) => {
      const conversation = sandbox.data.conversations.find((c) => c.status !== 'closed') as ConversationRecord;
      const before = conversation.status;
      const pending = call(sandbox, `/v1.3/conversations/${conversation.id}?fields=status`);
      await latency.waiting(1);
      conversation.status = 'closed';
      latency.endAll();
      const answer = await pending;
      assert.equal(answer.body.conversation.status, before);
    });
  });

  test('close() does not wait for delayed replies: the pending request is cut off', { timeout: 20_000 }, async () => {
    const sandbox = await startSandbox({ anchor: ANCHOR, latencyMs: 600_000 });
    const pending = call(sandbox, '/v1.3/tags').then(
      () => 'answered',
      () => 'cut off',
    );
    await arrivals(sandbox, 1);
    await sandbox.close();
    assert.equal(await pending, 'cut off');
    assert.equal(sandbox.requests[0]!.status, 0, 'logged as not answered');
  });
});

describe('sandbox rate limit', () => {
  test('429 with Retry-After: 1 and the error body exactly while more than N requests are in flight, none at or below N', async () => {
    await withSandbox({ rateLimit: 3 }, async (sandbox) => {
      const held = [hold(sandbox, '/v1.3/tags?page_size=1'), hold(sandbox, '/v1.3/queues?page_size=1'), hold(sandbox, '/v1.3/teams?page_size=1')];
      await arrivals(sandbox, 3);
      // Three in flight: a fourth is one too many, every time.
      for (const path of ['/v1.3/tags', '/v1.1/reports?page_size=1', '/v1.3/tags', '/v1.3/no-such-resource']) {
        const refused = await call(sandbox, path);
        assertError(refused, 429, /too many/i);
        assert.equal(refused.headers.get('retry-after'), '1');
      }
      // One of the three answered: two in flight, so a third (this one) is within the limit.
      const first = await held[0]!.release();
      assert.equal(first.status, 200, first.body);
      await finished(sandbox, 0);
      assert.equal((await call(sandbox, '/v1.3/tags?page_size=2')).status, 200);
      // Three in flight again (two held, one more held): the next is refused.
      held.push(hold(sandbox, '/v1.3/tags?page_size=4'));
      await arrivals(sandbox, 9);
      assert.equal((await call(sandbox, '/v1.3/tags')).status, 429);
      for (const one of held.slice(1)) assert.equal((await one.release()).status, 200);
      for (let index = 0; index < sandbox.requests.length; index++) await finished(sandbox, index);
      // All done: nothing is in flight any more, so requests one after another all pass.
      for (let round = 0; round < 5; round++) assert.equal((await call(sandbox, '/v1.3/tags?page_size=1')).status, 200);
      // The 429s are logged as such, so a bench can count their share.
      const statuses = sandbox.requests.map((r) => r.status);
      assert.deepEqual(statuses.filter((status) => status === 429).length, 5);
      assert.deepEqual(statuses.filter((status) => status === 200).length, 10);
      assert.ok(sandbox.requests.every((r) => r.listener === 'api'));
    });
  });

  test("latency counts as in flight: a request arriving during another one's delay is refused, after the delay too", async () => {
    const latency = heldWaits();
    await withSandbox({ rateLimit: 1, latencyMs: 200, sleep: latency.sleep }, async (sandbox) => {
      const first = call(sandbox, '/v1.3/tags?page_size=1');
      await latency.waiting(1);
      // The first is in its delay: the second is one too many, and its 429 waits the delay too.
      const second = call(sandbox, '/v1.3/tags?page_size=1');
      const delayed = await Promise.race([second.then(() => 'answered at once'), latency.waiting(2).then(() => 'delayed')]);
      assert.equal(delayed, 'delayed', 'the 429 is a reply like any other: it comes after the latency');
      latency.endAll();
      assertError(await second, 429);
      assert.equal((await second).headers.get('retry-after'), '1');
      assert.equal((await first).status, 200);
      await finished(sandbox, 1);
      assert.equal((await call(sandbox, '/v1.3/tags?page_size=1')).status, 200);
      assert.deepEqual(
        sandbox.requests.map((r) => r.status),
        [200, 429, 200],
      );
    });
  });

  test('a burst of concurrent requests: the first N to arrive are served, the rest get 429', async () => {
    // Every reply waits until all six have arrived: none leaves before the last arrives.
    const latency = heldWaits();
    await withSandbox({ rateLimit: 2, latencyMs: 400, sleep: latency.sleep }, async (sandbox) => {
      const calls = Array.from({ length: 6 }, (_, index) => call(sandbox, `/v1.3/tags?page_size=${index + 1}`));
      await arrivals(sandbox, 6);
      latency.endAll();
      const answers = await Promise.all(calls);
      const byUrl = new Map(answers.map((answer, index) => [`/v1.3/tags?page_size=${index + 1}`, answer.status]));
      // Arrival order is the log's order, whatever order fetch sent them in.
      assert.deepEqual(
        sandbox.requests.map((r) => byUrl.get(r.url)),
        [200, 200, 429, 429, 429, 429],
      );
      assert.deepEqual(
        sandbox.requests.map((r) => r.status),
        [200, 200, 429, 429, 429, 429],
      );
    });
  });

  test('a client that gives up on a request frees its place', async () => {
    await withSandbox({ rateLimit: 2 }, async (sandbox) => {
      const held = [hold(sandbox, '/v1.3/tags'), hold(sandbox, '/v1.3/queues')];
      await arrivals(sandbox, 2);
      assert.equal((await call(sandbox, '/v1.3/tags')).status, 429);
      held[0]!.abandon();
      // The sandbox learns of the closed connection on its own time: ask until it has (bounded).
      let status = 429;
      for (let tries = 0; status === 429 && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        status = (await call(sandbox, '/v1.3/tags')).status;
      }
      assert.equal(status, 200);
      assert.equal((await held[1]!.release()).status, 200);
      assert.equal(sandbox.requests[0]!.status, 0, 'the abandoned request is logged as not answered');
    });
  });

  test('refuses a rate limit below 1 and a negative latency', async () => {
    await assert.rejects(startSandbox({ rateLimit: 0 }), RangeError);
    await assert.rejects(startSandbox({ rateLimit: 1.5 }), RangeError);
    await assert.rejects(startSandbox({ latencyMs: -1 }), RangeError);
  });
});

describe('sandbox annotations port', () => {
  test('api/1 is served on its own origin, with links and record urls there; the main port answers 404 for it', async () => {
    await withSandbox({ annotationsPort: 0 }, async (sandbox) => {
      const main = new URL(sandbox.baseUrl);
      const own = new URL(sandbox.annotationsUrl);
      assert.equal(own.hostname, main.hostname);
      assert.notEqual(own.port, main.port);
      assert.notEqual(sandbox.annotationsUrl, sandbox.downloadBaseUrl);
      for (const [endpoint, key, records] of [
        ['annotation-types', 'annotationtypes', sandbox.data.annotationTypes],
        ['annotations', 'annotations', sandbox.data.annotations],
      ] as const) {
        const { records: walked, links } = await walk(sandbox, `${sandbox.annotationsUrl}/api/1/${endpoint}?page_size=3`, key);
        assert.deepEqual(ids(walked), ids(records), endpoint);
        assert.ok(links.length >= 2, endpoint);
        for (const link of links) assert.ok(link.startsWith(`${sandbox.annotationsUrl}/api/1/${endpoint}?`), link);
        for (const record of walked) assert.equal(record.url, `${sandbox.annotationsUrl}/api/1/${endpoint}/${encodeURIComponent(record.id)}`);
        assert.equal((await get(sandbox, walked[0].url))[key === 'annotations' ? 'annotation' : 'annotationtype'].id, walked[0].id);
        assertError(await call(sandbox, `/api/1/${endpoint}`), 404);
        assertError(await call(sandbox, `/api/1/${endpoint}/${encodeURIComponent(walked[0].id)}`), 404);
      }
      // The versioned API stays on the main port only.
      assert.equal((await call(sandbox, '/v1.3/tags')).status, 200);
      assertError(await call(sandbox, `${sandbox.annotationsUrl}/v1.3/tags`), 404);
      assertError(await call(sandbox, `${sandbox.annotationsUrl}/`), 404);
    });
  });

  test('the annotations port asks for the same Basic credentials and logs its requests as "annotations"', async () => {
    await withSandbox({ annotationsPort: 0 }, async (sandbox) => {
      const url = `${sandbox.annotationsUrl}/api/1/annotations`;
      const missing = await call(sandbox, url, { auth: false });
      assertError(missing, 401);
      assert.equal(missing.headers.get('www-authenticate'), 'Basic realm="carectl-sandbox"');
      const wrong = await fetch(url, { headers: { authorization: authHeader(sandbox, 'wrong') } });
      assert.equal(wrong.status, 401);
      await wrong.text();
      assert.equal((await call(sandbox, url)).status, 200);
      await call(sandbox, '/v1.3/tags');
      assert.deepEqual(
        sandbox.requests.map((r) => [r.listener, r.url, r.status]),
        [
          ['annotations', '/api/1/annotations', 401],
          ['annotations', '/api/1/annotations', 401],
          ['annotations', '/api/1/annotations', 200],
          ['api', '/v1.3/tags', 200],
        ],
      );
      assert.deepEqual(
        apiRequests(sandbox).map((r) => r.url),
        ['/v1.3/tags'],
        "helpers' apiRequests() still means the main listener",
      );
    });
  });

  test('latency, rate limit and faults apply there too; the limit counts both API listeners together', async () => {
    await withSandbox({ annotationsPort: 0, latencyMs: 60, rateLimit: 1 }, async (sandbox) => {
      const delayed = await call(sandbox, `${sandbox.annotationsUrl}/api/1/annotation-types`);
      assert.equal(delayed.status, 200);
      assert.ok(delayed.elapsed >= 60, `the reply came after ${delayed.elapsed.toFixed(1)} ms`);
      await finished(sandbox, 0);
      const held = hold(sandbox, '/v1.3/tags');
      await arrivals(sandbox, 2);
      const refused = await call(sandbox, `${sandbox.annotationsUrl}/api/1/annotations`);
      assertError(refused, 429);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.equal((await held.release()).status, 200);
      assert.deepEqual(
        sandbox.requests.map((r) => [r.listener, r.status]),
        [
          ['annotations', 200],
          ['api', 200],
          ['annotations', 429],
        ],
      );
    });
    await withSandbox({ annotationsPort: 0, faults: { rate: 1, kinds: ['503'] } }, async (sandbox) => {
      assertError(await call(sandbox, `${sandbox.annotationsUrl}/api/1/annotations`), 503);
    });
  });

  test('without annotationsPort, api/1 stays on the main port and annotationsUrl is baseUrl', async () => {
    await withSandbox({}, async (sandbox) => {
      assert.equal(sandbox.annotationsUrl, sandbox.baseUrl);
      const body = await get(sandbox, '/api/1/annotations?page_size=2');
      assert.ok(body.paging.next_page.startsWith(`${sandbox.baseUrl}/api/1/annotations?`));
      assert.deepEqual(
        sandbox.requests.map((r) => r.listener),
        ['api'],
      );
    });
  });

  test('a taken annotations port fails the start with EADDRINUSE, naming that listener', async () => {
    const occupant = createServer();
    await new Promise<void>((resolve) => occupant.listen(0, '127.0.0.1', resolve));
    const { port } = occupant.address() as AddressInfo;
    try {
      await assert.rejects(startSandbox({ annotationsPort: port }), (error: NodeJS.ErrnoException & { listener?: string }) => {
        assert.equal(error.code, 'EADDRINUSE');
        assert.equal(error.listener, 'annotations');
        return true;
      });
    } finally {
      await new Promise((resolve) => occupant.close(resolve));
    }
  });
});

type SortField = 'oldest_sort_date' | 'newest_sort_date';
const SORTS = ['oldest_sort_date', '-oldest_sort_date', 'newest_sort_date', '-newest_sort_date'] as const;

function fieldOf(sort: string): SortField {
  return sort.replace(/^-/, '') as SortField;
}

function dateOf(conversation: ConversationRecord, field: SortField): number {
  return field === 'oldest_sort_date' ? conversation.oldestMs : conversation.newestMs;
}

/** The order the service promises: by the sort date, ties by id; descending is the exact reverse. */
function ordered(conversations: readonly ConversationRecord[], sort: string): ConversationRecord[] {
  const field = fieldOf(sort);
  const ascending = [...conversations].sort((a, b) => dateOf(a, field) - dateOf(b, field) || a.seq - b.seq);
  return sort.startsWith('-') ? ascending.reverse() : ascending;
}

/** `YYYY-MM-DDTHH:MM:SS`, as the links write dates. */
function datetime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

/**
 * Walks from the first page and checks every next_page link against the records before it: the
 * keyset bound is the last record's sort date, skip the number of records at that date so far.
 */
async function walkKeyset(sandbox: Sandbox, first: string, sort: string): Promise<{ records: Json[]; links: URL[] }> {
  const field = fieldOf(sort);
  const side = sort.startsWith('-') ? 'lte' : 'gte';
  const { records, links } = await walk(sandbox, first, 'conversations');
  const urls = links.map((link) => new URL(link));
  let seen = 0;
  for (const link of urls) {
    assert.ok(link.search.includes(`${field}_${side}=`), `${link}`);
    const bound = link.searchParams.get(`${field}_${side}`)!;
    assert.match(link.search, new RegExp(`${field}_${side}=\\d{4}-\\d{2}-\\d{2}T\\d{2}%3A\\d{2}%3A\\d{2}(&|$)`), 'colons URL-encoded');
    assert.equal(link.searchParams.get('sort'), sort);
    // The page before this link ends with a record dated `bound`; skip counts that date's records so far.
    const pageSize = Number(link.searchParams.get('page_size'));
    seen += pageSize;
    const before = records.slice(0, seen).map((record) => sandbox.data.byId.conversations.get(record.id)!);
    assert.equal(bound, datetime(dateOf(before[before.length - 1]!, field)));
    assert.equal(link.searchParams.get('skip'), String(before.filter((c) => datetime(dateOf(c, field)) === bound).length), `${link}`);
  }
  return { records, links: urls };
}

describe('sandbox conversation keyset paging', () => {
  test('next_page has the documented form: the sort date of the last record, URL-encoded, then skip, sort and page_size', async () => {
    await withSandbox({}, async (sandbox) => {
      const body = await get(sandbox, '/v1.3/conversations?is_priority=true&page_size=4');
      const expected = ordered(
        sandbox.data.conversations.filter((c) => c.is_priority),
        'oldest_sort_date',
      );
      assert.deepEqual(ids(body.conversations), ids(expected.slice(0, 4)));
      const date = expected[3]!.oldestMs;
      const skip = expected.slice(0, 4).filter((c) => c.oldestMs === date).length;
      assert.equal(
        body.paging.next_page,
        `${sandbox.baseUrl}/v1.3/conversations?is_priority=true&page_size=4&oldest_sort_date_gte=${datetime(date).replace(/:/g, '%3A')}&skip=${skip}&sort=oldest_sort_date`,
      );
      const descending = await get(sandbox, '/v1.2/conversations?status=unread&sort=-newest_sort_date&page_size=3&fields=status');
      const unread = ordered(
        sandbox.data.conversations.filter((c) => c.status === 'unread'),
        '-newest_sort_date',
      );
      const last = unread[2]!.newestMs;
      assert.equal(
        descending.paging.next_page,
        `${sandbox.baseUrl}/v1.2/conversations?status=unread&sort=-newest_sort_date&page_size=3&fields=status&newest_sort_date_lte=${datetime(last).replace(/:/g, '%3A')}&skip=${unread.slice(0, 3).filter((c) => c.newestMs === last).length}`,
      );
      assert.equal(typeof descending.paging.prev_page, 'string');
    });
  });

  test("the link replaces the query's bounds on the keyset side and keeps the other side as given", async () => {
    await withSandbox({}, async (sandbox) => {
      const cases = [
        [
          'oldest_sort_date',
          'oldest_sort_date_gt=2023-09-01&oldest_sort_date_lt=2024-03-01',
          'gte',
          { oldest_sort_date_lt: '2024-03-01' },
          ['oldest_sort_date_gt'],
        ],
        ['oldest_sort_date', 'oldest_sort_date_gte=2023-09-01&oldest_sort_date_lte=2024-03-01', 'gte', { oldest_sort_date_lte: '2024-03-01' }, []],
        [
          '-oldest_sort_date',
          'oldest_sort_date_gte=2023-09-01&oldest_sort_date_lt=2024-03-01',
          'lte',
          { oldest_sort_date_gte: '2023-09-01' },
          ['oldest_sort_date_lt'],
        ],
        ['newest_sort_date', 'newest_sort_date_gte=2023-09-01&newest_sort_date_lte=2024-03-01', 'gte', { newest_sort_date_lte: '2024-03-01' }, []],
        ['-newest_sort_date', 'newest_sort_date_gt=2023-09-01&newest_sort_date_lte=2024-03-01', 'lte', { newest_sort_date_gt: '2023-09-01' }, []],
        // A filter on the other date field stays as given; the keyset bound is on the sort field.
        [
          'oldest_sort_date',
          'newest_sort_date_gte=2023-09-01&newest_sort_date_lt=2024-03-01',
          'gte',
          { newest_sort_date_gte: '2023-09-01', newest_sort_date_lt: '2024-03-01' },
          [],
        ],
        [
          '-newest_sort_date',
          'oldest_sort_date_gte=2023-09-01&oldest_sort_date_lte=2024-03-01',
          'lte',
          { oldest_sort_date_gte: '2023-09-01', oldest_sort_date_lte: '2024-03-01' },
          [],
        ],
      ] as const;
      for (const [sort, bounds, side, kept, gone] of cases) {
        const first = `/v1.3/conversations?is_priority=false&${bounds}&sort=${sort}&page_size=20&fields=status`;
        const body = await get(sandbox, first);
        const link = new URL(body.paging.next_page);
        for (const [name, value] of Object.entries(kept)) assert.equal(link.searchParams.get(name), value, `${sort} ${bounds}: ${name}`);
        for (const name of gone) assert.equal(link.searchParams.get(name), null, `${sort} ${bounds}: ${name}`);
        assert.match(link.searchParams.get(`${fieldOf(sort)}_${side}`)!, /T/, `${sort} ${bounds}`);
        assert.equal(link.searchParams.getAll(`${fieldOf(sort)}_${side}`).length, 1);
        assert.equal(link.searchParams.get('fields'), 'status');
        assert.equal(link.searchParams.get('is_priority'), 'false');
        // Following the links gives exactly what the query asks for.
        const params = new URLSearchParams(bounds);
        const inRange = (c: ConversationRecord): boolean =>
          [...params].every(([name, value]) => {
            const ms = dateOf(c, name.startsWith('oldest') ? 'oldest_sort_date' : 'newest_sort_date');
            const day = Date.parse(`${value}T00:00:00Z`);
            const modifier = name.slice(name.lastIndexOf('_') + 1);
            return modifier === 'gte' ? ms >= day : modifier === 'gt' ? ms >= day + 86_400_000 : modifier === 'lt' ? ms < day : ms < day + 86_400_000;
          });
        const expected = ordered(
          sandbox.data.conversations.filter((c) => !c.is_priority && inRange(c)),
          sort,
        );
        assert.ok(expected.length > 40, `${sort} ${bounds}: several pages`);
        const { records } = await walkKeyset(sandbox, first, sort);
        assert.deepEqual(ids(records), ids(expected), `${sort} ${bounds}`);
      }
    });
  });

  test('following next_page from the first page yields every conversation exactly once, in order, for each sort', async () => {
    await withSandbox({}, async (sandbox) => {
      let tied = 0;
      for (const sort of SORTS) {
        for (const priority of [true, false]) {
          const expected = ordered(
            sandbox.data.conversations.filter((c) => c.is_priority === priority),
            sort,
          );
          const { records, links } = await walkKeyset(sandbox, `/v1.3/conversations?is_priority=${priority}&sort=${sort}&page_size=7`, sort);
          assert.deepEqual(ids(records), ids(expected), `${sort} is_priority=${priority}`);
          tied += links.filter((link) => Number(link.searchParams.get('skip')) > 1).length;
        }
      }
      assert.ok(tied > 0, 'some page ended inside a run of records sharing a sort date');
    });
  });

  test('more records at one sort date than a page holds: every one exactly once, in order, both fields and directions', async () => {
    await withSandbox({}, async (sandbox) => {
      // Before the first list request (the sorted indexes are built then): 120 and 55 unprioritised
      // conversations share one oldest and one newest sort date each.
      const crowd = sandbox.data.conversations.filter((c) => !c.is_priority && c.seq > 500100);
      const one = Date.parse('2024-02-20T11:58:34Z');
      const other = Date.parse('2024-04-02T08:00:00Z');
      crowd.slice(0, 120).forEach((c) => Object.assign(c, { oldestMs: one, newestMs: one }));
      crowd.slice(120, 175).forEach((c) => Object.assign(c, { oldestMs: other, newestMs: other + 3_600_000 }));
      for (const sort of SORTS) {
        for (const pageSize of [7, 50]) {
          const expected = ordered(
            sandbox.data.conversations.filter((c) => !c.is_priority),
            sort,
          );
          const { records, links } = await walkKeyset(sandbox, `/v1.3/conversations?is_priority=false&sort=${sort}&page_size=${pageSize}`, sort);
          assert.deepEqual(ids(records), ids(expected), `${sort} page_size=${pageSize}`);
          // Consecutive links inside the crowd carry the same date with a growing skip.
          const side = sort.startsWith('-') ? 'lte' : 'gte';
          const atOne = links.filter((link) => link.searchParams.get(`${fieldOf(sort)}_${side}`) === '2024-02-20T11:58:34');
          assert.ok(atOne.length >= (pageSize === 7 ? 16 : 2), `${sort} page_size=${pageSize}: ${atOne.length} links at the crowded date`);
          const skips = atOne.map((link) => Number(link.searchParams.get('skip')));
          assert.deepEqual(
            skips,
            [...skips].sort((a, b) => a - b),
          );
          assert.ok(skips[skips.length - 1]! > pageSize, `${sort} page_size=${pageSize}: skip ${skips.join(',')} goes past one page`);
        }
      }
    });
  });

  test('a first request with its own skip keeps working, and its links go on from there', async () => {
    await withSandbox({}, async (sandbox) => {
      const expected = ordered(
        sandbox.data.conversations.filter((c) => c.is_priority),
        'oldest_sort_date',
      );
      const body = await get(sandbox, '/v1.3/conversations?is_priority=true&page_size=5&skip=3');
      assert.deepEqual(ids(body.conversations), ids(expected.slice(3, 8)));
      const { records } = await walk(sandbox, body.paging.next_page, 'conversations');
      assert.deepEqual(ids(records), ids(expected.slice(8)));
      const bounded = ordered(
        sandbox.data.conversations.filter((c) => c.is_priority && c.oldestMs >= Date.parse('2024-01-01T00:00:00Z')),
        '-oldest_sort_date',
      );
      const { records: all } = await walk(
        sandbox,
        '/v1.3/conversations?is_priority=true&oldest_sort_date_gte=2024-01-01&sort=-oldest_sort_date&page_size=6&skip=10',
        'conversations',
      );
      assert.deepEqual(ids(all), ids(bounded.slice(10)));
      const empty = await get(sandbox, `/v1.3/conversations?is_priority=true&skip=${expected.length}`);
      assert.deepEqual(empty.conversations, []);
      assert.equal(empty.paging.next_page, null);
      assert.equal(typeof empty.paging.prev_page, 'string');
    });
  });

  test("datetime bounds are accepted as links write them; users' YYYY-MM-DD still works; the two fields stay apart", async () => {
    await withSandbox({}, async (sandbox) => {
      const target = ordered(
        sandbox.data.conversations.filter((c) => c.is_priority),
        'oldest_sort_date',
      )[20]!;
      const from = datetime(target.oldestMs);
      const exact = await get(sandbox, `/v1.3/conversations?is_priority=true&oldest_sort_date_gte=${encodeURIComponent(from)}&page_size=50`);
      assert.deepEqual(
        ids(exact.conversations),
        ids(
          ordered(
            sandbox.data.conversations.filter((c) => c.is_priority && c.oldestMs >= target.oldestMs),
            'oldest_sort_date',
          ).slice(0, 50),
        ),
      );
      // The raw colon is read the same as %3A.
      const raw = await get(sandbox, `/v1.3/conversations?is_priority=true&oldest_sort_date_gte=${from}&page_size=50`);
      assert.deepEqual(ids(raw.conversations), ids(exact.conversations));
      const day = await get(sandbox, `/v1.3/conversations?is_priority=true&oldest_sort_date_gte=${from.slice(0, 10)}&page_size=50`);
      assert.deepEqual(
        ids(day.conversations),
        ids(
          ordered(
            sandbox.data.conversations.filter((c) => c.is_priority && datetime(c.oldestMs).slice(0, 10) >= from.slice(0, 10)),
            'oldest_sort_date',
          ).slice(0, 50),
        ),
      );
      assertError(await call(sandbox, '/v1.3/conversations?is_priority=true&oldest_sort_date_gte=2024-02-20T25:00:00'), 400);
      assertError(await call(sandbox, '/v1.3/conversations?is_priority=true&oldest_sort_date_gte=2024-02-20T11%3A58'), 400);
      // Both date fields in one query is refused, unless it is a link's keyset bound (datetime, keyset side, with skip).
      const combined = /^oldest_sort_date cannot be combined with newest_sort_date$/;
      assertError(await call(sandbox, '/v1.3/conversations?is_priority=true&newest_sort_date_gte=2024-01-01&oldest_sort_date_gte=2024-02-01'), 400, combined);
      assertError(await call(sandbox, `/v1.3/conversations?is_priority=true&newest_sort_date_gte=2024-01-01&oldest_sort_date_gte=${from}`), 400, combined);
      assertError(
        await call(sandbox, `/v1.3/conversations?is_priority=true&newest_sort_date_gte=2024-01-01&oldest_sort_date_lte=${from}&skip=1`),
        400,
        combined,
      );
      assertError(
        await call(sandbox, `/v1.3/conversations?is_priority=true&newest_sort_date_gte=2024-01-01&oldest_sort_date_gte=${from}&skip=1&sort=newest_sort_date`),
        400,
        combined,
      );
      assert.equal(
        (await call(sandbox, `/v1.3/conversations?is_priority=true&newest_sort_date_gte=2024-01-01&oldest_sort_date_gte=${from}&skip=1`)).status,
        200,
      );
      assert.equal(
        (await call(sandbox, `/v1.3/conversations?is_priority=true&newest_sort_date_gte=2024-01-01&oldest_sort_date_lte=${from}&skip=1&sort=-oldest_sort_date`))
          .status,
        200,
      );
    });
  });
});

/** Runs `carectl sandbox ARGS` in-process until the banner is out; stop() ends it like Ctrl-C. */
async function carectlSandbox(args: string[]): Promise<{ banner: string; stop(): Promise<{ code: number; stderr: string }> }> {
  const controller = new AbortController();
  let output = '';
  let shown!: () => void;
  const bannerOut = new Promise<void>((resolve) => (shown = resolve));
  const running = runCli(['sandbox', ...args], {
    signal: controller.signal,
    onStdout: (chunk) => {
      output += chunk;
      if (output.includes('\n\n')) shown();
    },
  });
  const ended = await Promise.race([bannerOut.then(() => undefined), running]);
  assert.equal(ended, undefined, `carectl sandbox ended early: ${JSON.stringify(ended)}`);
  return {
    banner: output,
    stop: async () => {
      controller.abort();
      return running;
    },
  };
}

/** A Sandbox-shaped handle on the addresses a banner printed, for the helpers above. */
function fromBanner(banner: string): Sandbox {
  const base = /listening on (http:\/\/\S+)/.exec(banner)![1]!;
  return {
    baseUrl: base,
    annotationsUrl: /^api\/1 \(annotation types, annotations\) on (http:\/\/\S+)$/m.exec(banner)?.[1] ?? base,
    user: /^user: (.*)$/m.exec(banner)![1]!,
    password: /^password: (.*)$/m.exec(banner)![1]!,
  } as Sandbox;
}

describe('carectl sandbox --latency, --rate-limit, --annotations-port', () => {
  test('the options reach the server, and the banner gives the annotations address', async () => {
    const run = await carectlSandbox(['--latency', '300ms', '--rate-limit', '1', '--annotations-port', '0']);
    let stopped = false;
    try {
      const sandbox = fromBanner(run.banner);
      assert.notEqual(sandbox.annotationsUrl, sandbox.baseUrl, run.banner);
      assert.match(
        run.banner,
        /^carectl sandbox listening on http:\/\/127\.0\.0\.1:\d+ \(report downloads on http:\/\/127\.0\.0\.1:\d+\)\napi\/1 \(annotation types, annotations\) on http:\/\/127\.0\.0\.1:\d+\nuser: /,
      );
      const annotations = await call(sandbox, `${sandbox.annotationsUrl}/api/1/annotations`);
      assert.equal(annotations.status, 200);
      assert.ok(annotations.elapsed >= 300, `the reply came after ${annotations.elapsed.toFixed(1)} ms`);
      assert.ok(annotations.body.paging.next_page.startsWith(`${sandbox.annotationsUrl}/api/1/annotations?`));
      assertError(await call(sandbox, '/api/1/annotations'), 404);
      // Two requests held: whichever arrives first stays in flight until it is let go, so the
      // other is one too many. The later one is let go (and answered) first.
      const first = hold(sandbox, '/v1.3/tags');
      const second = hold(sandbox, '/v1.3/queues');
      const answers = [await second.release(), await first.release()];
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 429]);
      const refused = answers.find((answer) => answer.status === 429)!;
      assert.equal(refused.headers['retry-after'], '1');
      assert.match(JSON.parse(refused.body).message, /too many/i);
      const result = await run.stop();
      stopped = true;
      assert.equal(result.code, 130, result.stderr);
    } finally {
      if (!stopped) await run.stop();
    }
  });

  test('without --annotations-port the banner has no api/1 line and api/1 stays on --port', async () => {
    const run = await carectlSandbox(['--port', '0']);
    try {
      assert.doesNotMatch(run.banner, /api\/1/);
      const sandbox = fromBanner(run.banner);
      assert.equal((await call(sandbox, '/api/1/annotation-types')).status, 200);
    } finally {
      await run.stop();
    }
  });

  test('--report-delay sets how long a new report takes', async () => {
    const run = await carectlSandbox(['--port', '0', '--report-delay', '1ms']);
    try {
      const sandbox = fromBanner(run.banner);
      const created = await call(sandbox, '/v1.1/reports', {
        method: 'POST',
        body: JSON.stringify({ account: '1001', format: 'csv', date_type: 'created_date', date_from: '2026-06-01', date_to: '2026-06-07' }),
      });
      assert.ok(created.status < 300, JSON.stringify(created.body));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const id = String(created.body.report?.id ?? created.body.id);
      // The default delay is 3 s: only the flag makes it ready 50 ms later.
      const report = await get(sandbox, `/v1.1/reports/${id}?fields=generated_date,download`);
      assert.match(String((report.report ?? report).download), /^http:\/\//, JSON.stringify(report));
    } finally {
      await run.stop();
    }
  });

  test('bad values: one line naming the flag, exit 2, nothing started', async () => {
    for (const [flag, value] of [
      ['--latency', '5'],
      ['--latency', '0ms'],
      ['--latency', 'soon'],
      ['--rate-limit', '0'],
      ['--rate-limit', '2.5'],
      ['--rate-limit', 'many'],
      ['--annotations-port', '-1'],
      ['--annotations-port', '65536'],
      ['--annotations-port', 'x'],
      ['--report-delay', 'soon'],
      ['--report-delay', '5'],
    ] as const) {
      const result = await runCli(['sandbox', flag, value]);
      assert.equal(result.code, 2, `${flag} ${value}: ${result.stderr}`);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, new RegExp(`^carectl: ${flag}: [^\n]*\n$`), `${flag} ${value}`);
    }
  });

  test('--annotations-port N already in use: one line naming that flag, exit 1', async () => {
    const occupant = createServer();
    await new Promise<void>((resolve) => occupant.listen(0, '127.0.0.1', resolve));
    const { port } = occupant.address() as AddressInfo;
    try {
      const result = await runCli(['sandbox', '--annotations-port', String(port)]);
      assert.equal(result.code, 1);
      assert.equal(result.stderr, `carectl: sandbox: port ${port} is already in use; choose another --annotations-port, or 0 for a free one\n`);
      assert.equal(result.stdout, '');
    } finally {
      await new Promise((resolve) => occupant.close(resolve));
    }
  });
});
