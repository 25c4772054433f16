/** Paging helpers and the list runner, over an in-memory page source. */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, test } from 'node:test';
import { ApiError, InterruptedError, ListStoppedError, UsageError } from '../src/core/errors.js';
import { runList, startPoint } from '../src/api/list-run.js';
import { nextPageLink, type ListPlan, type PageSource } from '../src/api/paging.js';
import { decodeResumeToken, encodeResumeToken, resumeAsOf } from '../src/api/resume-token.js';
import type { RecordWriter } from '../src/output/index.js';

/** Pages of `size` numbered records at addresses `p<phase>/<n>`; `fail` makes one address fail once. */
function memorySource(phases: number[], size: number, fail?: string): PageSource & { fetched: string[] } {
  const fetched: string[] = [];
  let failed = false;
  return {
    fetched,
    async fetch(url) {
      fetched.push(url);
      if (url === fail && !failed) {
        failed = true;
        throw new ApiError(503, 'boom');
      }
      const [, phase, n] = /^p(\d+)\/(\d+)$/.exec(url) as RegExpExecArray;
      const total = phases[Number(phase)] as number;
      const from = Number(n) * size;
      const records = Array.from({ length: Math.max(0, Math.min(size, total - from)) }, (_, i) => ({ id: `${phase}-${from + i}` }));
      return { records, next: from + size < total ? `p${phase}/${Number(n) + 1}` : null };
    },
  };
}

function collector(): RecordWriter & { ids: string[] } {
  const ids: string[] = [];
  return {
    ids,
    write: async (record) => {
      ids.push(String(record.id));
    },
    endPage: async () => undefined,
    end: async () => undefined,
  };
}

const plan = (n: number): ListPlan => ({ phases: Array.from({ length: n }, (_, i) => `p${i}/0`) });
const expectedIds = (phases: number[]): string[] => phases.flatMap((total, phase) => Array.from({ length: total }, (_, i) => `${phase}-${i}`));

describe('nextPageLink', () => {
  test('reads paging.next_page and ignores prev_page', () => {
    assert.equal(nextPageLink({ paging: { next_page: 'http://h/x?skip=5', prev_page: 'http://h/x?skip=0' } }), 'http://h/x?skip=5');
    assert.equal(nextPageLink({ paging: { next_page: null, prev_page: 'http://h/x?skip=0' } }), null);
    assert.equal(nextPageLink({ paging: { prev_page: 'http://h/x' } }), null);
    assert.equal(nextPageLink([{ id: 1 }]), null);
    assert.equal(nextPageLink({ tags: [] }), null);
  });
});

describe('runList over pages that would not end', () => {
  test('follows empty pages that carry a next link, and stops at the 50th in a row', async () => {
    const fetched: string[] = [];
    const source: PageSource = { fetch: async (url) => (fetched.push(url), { records: [], next: `${url}x` }) };
    await assert.rejects(
      runList({ plan: { phases: ['a'] }, source, writer: collector(), start: startPoint({ phases: ['a'] }, undefined), notice: () => undefined }),
      /50 empty pages in a row \(the last: a(x){49}\)/,
    );
    assert.equal(fetched.length, 50);
  });

  test('empty pages in a row at new addresses are part of a list', async () => {
    const pages: Record<string, { records: Array<{ id: number }>; next: string | null }> = {
      a: { records: [{ id: 1 }], next: 'b' },
      b: { records: [], next: 'c' },
      c: { records: [], next: 'd' },
      d: { records: [{ id: 2 }], next: null },
    };
    const source: PageSource = { fetch: async (url) => pages[url] as { records: Array<{ id: number }>; next: string | null } };
    const writer = collector();
    await runList({ plan: { phases: ['a'] }, source, writer, start: startPoint({ phases: ['a'] }, undefined), notice: () => undefined });
    assert.deepEqual(writer.ids, ['1', '2']);
  });

  test('a phase whose first address the run already read ends the list with an error, not a wait', async () => {
    const pages: Record<string, { records: Array<{ id: number }>; next: string | null }> = {
      a: { records: [{ id: 1 }], next: 'b' },
      b: { records: [{ id: 2 }], next: null },
    };
    const source: PageSource = { fetch: async (url) => pages[url] as { records: Array<{ id: number }>; next: string | null } };
    const writer = collector();
    const twoPhases = { phases: ['a', 'b'] };
    await assert.rejects(
      runList({ plan: twoPhases, source, writer, start: startPoint(twoPhases, undefined), notice: () => undefined }),
      /a page already read \(b\)/,
    );
    assert.deepEqual(writer.ids, ['1', '2']);
  });

  test('refuses a next link that points at the same page', async () => {
    const source: PageSource = { fetch: async () => ({ records: [{ id: 1 }], next: 'a' }) };
    const writer = collector();
    await assert.rejects(
      runList({ plan: { phases: ['a'] }, source, writer, start: startPoint({ phases: ['a'] }, undefined), notice: () => undefined }),
      /a page already read \(a\)/,
    );
    assert.deepEqual(writer.ids, ['1']);
  });
});

describe('runList', () => {
  test('walks every phase in order, nothing lost or repeated', async () => {
    const writer = collector();
    const notices: string[] = [];
    await runList({ plan: plan(2), source: memorySource([12, 7], 5), writer, start: startPoint(plan(2), undefined), notice: (m) => notices.push(m) });
    assert.deepEqual(writer.ids, expectedIds([12, 7]));
    assert.deepEqual(notices, []);
  });

  test('a failure prints a resume token that continues exactly where it stopped', async () => {
    for (const fail of ['p0/1', 'p0/2', 'p1/0', 'p1/1']) {
      const notices: string[] = [];
      const first = collector();
      const failure = await runList({
        plan: plan(2),
        source: memorySource([12, 7], 5, fail),
        writer: first,
        start: startPoint(plan(2), undefined),
        notice: (m) => notices.push(m),
      }).then(
        () => assert.fail('the list should fail'),
        (err: unknown) => err as ListStoppedError,
      );
      // In the error itself, so that --quiet (which silences notices) cannot hide it; the service's error is its cause, as it came.
      assert.match(failure.message, /^boom; the list stopped after \d+ records?$/);
      assert.ok(failure instanceof ListStoppedError && failure.cause instanceof ApiError && failure.cause.message === 'boom', String(failure));
      assert.equal(failure.exitCode, 1);
      assert.deepEqual(notices, []);
      const token = failure.resumeToken;
      assert.ok(token, `a token after failing at ${fail}`);
      const second = collector();
      await runList({ plan: plan(2), source: memorySource([12, 7], 5), writer: second, start: startPoint(plan(2), token), notice: () => undefined });
      assert.deepEqual([...first.ids, ...second.ids], expectedIds([12, 7]), `resume after ${fail}`);
    }
  });

  test('a written id holding a lone UTF-16 surrogate does not lose the token: it is printed, and names that id as it is', () => {
    const namedIds = ['0-0', '\ud800', 'a\udc00b', '\udc00\ud800', '\ud83d\ude00 %u0041', '%uD800'];
    const token = encodeResumeToken(plan(1), { phase: 0, url: 'p0/0', writtenBefore: 0, namedIds });
    assert.deepEqual(startPoint(plan(1), token).namedIds, namedIds);
  });

  test('a resumed run that fails before its first record repeats a token that names written records by id', async () => {
    const token = encodeResumeToken(plan(1), { phase: 0, url: 'p0/0', writtenBefore: 0, namedIds: ['0-0', '0-1'] });
    const failure = await runList({
      plan: plan(1),
      source: memorySource([12], 5, 'p0/0'),
      writer: collector(),
      start: startPoint(plan(1), token),
      notice: () => undefined,
    }).then(
      () => assert.fail('the list should fail'),
      (err: unknown) => err as ListStoppedError,
    );
    assert.equal(failure.resumeToken, token, failure.message);
    // And it leaves those records out.
    const rest = collector();
    await runList({ plan: plan(1), source: memorySource([12], 5), writer: rest, start: startPoint(plan(1), token), notice: () => undefined });
    assert.deepEqual(rest.ids, expectedIds([12]).slice(2));
  });

  test('a token that keeps a keyset skip over more records than it names says that the skip counts', async () => {
    // Keyset links where every record shares one second: the skip counts from the list's start.
    const phase = 'p0?d_gte=2020-01-01';
    const source: PageSource = {
      async fetch(url) {
        const skip = Number(new URLSearchParams(url.split('?')[1]).get('skip') ?? 0);
        const records = Array.from({ length: Math.min(50, 300 - skip) }, (_, i) => ({ id: `r${skip + i}` }));
        return { records, next: skip + 50 < 300 ? `p0?d_gte=2026-01-01T00:00:00&skip=${skip + 50}` : null };
      },
    };
    for (const [limit, counts] of [
      [60, false],
      [120, true],
    ] as const) {
      const notices: string[] = [];
      const start = startPoint({ phases: [phase] }, undefined);
      await runList({ plan: { phases: [phase] }, source, writer: collector(), start, limit, notice: (m) => notices.push(m) });
      assert.equal(
        /the service's skip in it counts the 100 records before it under the link's date bound: /.test(notices.join('\n')),
        counts,
        notices.join('\n'),
      );
    }
  });

  test('--limit in the middle of a page resumes inside that page', async () => {
    for (const limit of [1, 3, 5, 6, 12, 13]) {
      const notices: string[] = [];
      const first = collector();
      await runList({
        plan: plan(2),
        source: memorySource([12, 7], 5),
        writer: first,
        start: startPoint(plan(2), undefined),
        limit,
        notice: (m) => notices.push(m),
      });
      assert.equal(first.ids.length, limit);
      const token = /--resume (\S+)/.exec(notices[0] ?? '')?.[1] as string;
      const rest = collector();
      await runList({ plan: plan(2), source: memorySource([12, 7], 5), writer: rest, start: startPoint(plan(2), token), notice: () => undefined });
      assert.deepEqual([...first.ids, ...rest.ids], expectedIds([12, 7]), `limit ${limit}`);
    }
  });

  test('no notice when the limit ends exactly with the list', async () => {
    const notices: string[] = [];
    await runList({
      plan: plan(1),
      source: memorySource([10], 5),
      writer: collector(),
      start: startPoint(plan(1), undefined),
      limit: 10,
      notice: (m) => notices.push(m),
    });
    assert.deepEqual(notices, []);
  });

  test('says how it ended as a value: whole with its count, or at --limit with the token its notice gives', async () => {
    const run = (limit: number) => {
      const notices: string[] = [];
      const ended = runList({
        plan: plan(2),
        source: memorySource([12, 7], 5),
        writer: collector(),
        start: startPoint(plan(2), undefined),
        limit,
        notice: (m) => notices.push(m),
      });
      return ended.then((end) => ({ end, notices }));
    };
    assert.deepEqual((await run(19)).end, { ended: 'complete', written: 19 });
    assert.deepEqual((await run(100)).end, { ended: 'complete', written: 19 });
    const { end, notices } = await run(7);
    assert.equal(end.ended, 'limit');
    assert.equal(end.written, 7);
    assert.ok(end.ended === 'limit' && notices.length === 1 && notices[0]?.endsWith(`--resume ${end.token}`), notices.join('\n'));
  });
});

describe('resume tokens', () => {
  test('do not depend on the page size: a --limit run continues with the page size of the resuming run', () => {
    const small = { phases: ['v1.3/tags?fields=name&page_size=5'] };
    const large = { phases: ['v1.3/tags?fields=name&page_size=50'] };
    const token = encodeResumeToken(small, { phase: 0, url: 'v1.3/tags?fields=name&page_size=5&skip=5', writtenBefore: 2 });
    assert.deepEqual(decodeResumeToken(large, token), { phase: 0, url: 'v1.3/tags?fields=name&page_size=50&skip=5', writtenBefore: 2 });
    const users = { phases: ['v1.2/users?fields=email&limit=5'] };
    const usersToken = encodeResumeToken(users, { phase: 0, url: 'v1.2/users?limit=5&offset=5', writtenBefore: 0 });
    assert.equal(decodeResumeToken({ phases: ['v1.2/users?fields=email&limit=50'] }, usersToken).url, 'v1.2/users?limit=50&offset=5');
    // An api/1 page_token is the service's own and is never touched; only page_size changes.
    const notes = { phases: ['api/1/annotations?page_size=5'] };
    const tokenToken = encodeResumeToken(notes, { phase: 0, url: 'api/1/annotations?page_size=5&page_token=YW5u-_', writtenBefore: 0 });
    assert.equal(decodeResumeToken({ phases: ['api/1/annotations?page_size=50'] }, tokenToken).url, 'api/1/annotations?page_size=50&page_token=YW5u-_');
  });

  test('carry the moment relative dates were resolved at', () => {
    const token = encodeResumeToken({ phases: ['p0/0'], asOf: 1_700_000_000_000 }, { phase: 0, url: 'p0/0', writtenBefore: 0 });
    assert.equal(resumeAsOf(token), 1_700_000_000_000);
    assert.equal(resumeAsOf(encodeResumeToken(plan(1), { phase: 0, url: 'p0/0', writtenBefore: 0 })), undefined);
    assert.equal(resumeAsOf('garbage!'), undefined);
    assert.equal(resumeAsOf(undefined), undefined);
  });

  test('round-trip and stay bound to their plan', () => {
    const token = encodeResumeToken(plan(2), { phase: 1, url: 'p1/3', writtenBefore: 2 }, 'csv');
    assert.deepEqual(decodeResumeToken(plan(2), token), { phase: 1, url: 'p1/3', writtenBefore: 2, header: 'csv' });
    const withoutHeader = encodeResumeToken(plan(2), { phase: 0, url: 'p0/0', writtenBefore: 0 });
    assert.deepEqual(decodeResumeToken(plan(2), withoutHeader), { phase: 0, url: 'p0/0', writtenBefore: 0 });
    assert.throws(
      () => decodeResumeToken({ phases: ['q0/0', 'q1/0'] }, token),
      (e: unknown) => e instanceof UsageError && /different command/.test(e.message),
    );
    assert.throws(() => decodeResumeToken(plan(2), 'garbage!'), UsageError);
    assert.throws(() => decodeResumeToken(plan(2), Buffer.from('{"v":1}').toString('base64url')), UsageError);
  });

  test('keep their format: a token printed by an earlier build (version 3, carectl 0b0b5d8) is still read the same', () => {
    const twoPhases = {
      phases: [
        'v1.3/conversations?status=open&newest_sort_date_gte=2024-01-01&newest_sort_date_lt=2024-02-01&is_priority=true&page_size=50',
        'v1.3/conversations?status=open&is_priority=false&page_size=50',
      ],
      asOf: 1_700_000_000_000,
    };
    const cursor = {
      phase: 1,
      url: 'v1.4/conversations?status=open&is_priority=false&newest_sort_date_lte=2024-01-05T10:00:00Z&a=1&a=2&page_size=50&skip=100',
      writtenBefore: 3,
      sliceLastDay: 19700,
      namedIds: ['a,b', 'c|d', 'é'],
    };
    const printed =
      'M3xYWGQwRFFwMHwxfDN8MTk3MDB8Y3N2fGxveXczdjI4fHYxLjQvY29udmVyc2F0aW9uc3x-MV9sdGU9MjAyNC0wMS0wNVQxMDowMDowMFomYT0xJmE9MiZza2lwPTEwMHx8YSUyQ2IsYyU3Q2QsJUMzJUE5fHE4MFA0Y2hD';
    // Version 4 tied tokens to the service's address; a version 3 one is read without that tie.
    const printedV4 =
      'NHxpYVA5bk5HRnwxfDN8MTk3MDB8Y3N2fGxveXczdjI4fHYxLjQvY29udmVyc2F0aW9uc3x-MV9sdGU9MjAyNC0wMS0wNVQxMDowMDowMFomYT0xJmE9MiZza2lwPTEwMHx8YSUyQ2IsYyU3Q2QsJUMzJUE5fGpmamV3OURq';
    // Version 5 (now) carries the fingerprint of the query without the values of names too (issue 48 item 7).
    const printedNow =
      'NXxpYVA5bk5HRnwxfDN8MTk3MDB8Y3N2fGxveXczdjI4fHYxLjQvY29udmVyc2F0aW9uc3x-MV9sdGU9MjAyNC0wMS0wNVQxMDowMDowMFomYT0xJmE9MiZza2lwPTEwMHx8YSUyQ2IsYyU3Q2QsJUMzJUE5fE9sOTVoZXFt';
    assert.equal(encodeResumeToken(twoPhases, cursor, 'csv'), printedNow);
    for (const token of [printedNow, printedV4]) {
      assert.deepEqual(decodeResumeToken(twoPhases, token), decodeResumeToken(twoPhases, printed));
      assert.throws(() => decodeResumeToken({ ...twoPhases, origin: 'https://elsewhere.example/' }, token), /belongs to a different command/);
    }
    assert.deepEqual(decodeResumeToken({ ...twoPhases, origin: 'https://elsewhere.example/' }, printed).writtenBefore, 3);
    assert.deepEqual(decodeResumeToken(twoPhases, printed), {
      ...cursor,
      url: 'v1.4/conversations?status=open&is_priority=false&page_size=50&newest_sort_date_lte=2024-01-05T10%3A00%3A00Z&a=1&a=2&skip=100',
      header: 'csv',
    });
    assert.equal(resumeAsOf(printed), 1_700_000_000_000);
  });

  const cursorArb = fc.record({
    phase: fc.integer({ min: 0, max: 1 }),
    writtenBefore: fc.nat(500),
    end: fc.option(
      fc.integer({ min: -30000, max: 3_000_000 }).map((n) => Math.abs(n)),
      { nil: undefined },
    ),
    params: fc.array(fc.tuple(fc.constantFrom('skip', 'oldest_sort_date_gte', 'page_token', 'x|y', 'status'), fc.string({ maxLength: 12 })), { maxLength: 4 }),
    header: fc.option(fc.constantFrom('csv', 'tsv'), { nil: undefined }),
  });
  const twoPhases = {
    phases: ['v1.3/conversations?is_priority=true&page_size=50', 'v1.3/conversations?is_priority=false&page_size=50'],
    asOf: 1_780_000_000_000,
  };
  const cursorOf = (c: { phase: number; writtenBefore: number; end: number | undefined; params: Array<[string, string]> }) => {
    const url = `${twoPhases.phases[c.phase]}${c.params.map(([k, v]) => `&${new URLSearchParams([[k, v]])}`).join('')}`;
    return { phase: c.phase, url, writtenBefore: c.writtenBefore, ...(c.end !== undefined && { sliceLastDay: c.end }) };
  };

  test('round-trip any cursor (property)', () => {
    fc.assert(
      fc.property(cursorArb, (c) => {
        const cursor = cursorOf(c);
        const decoded = decodeResumeToken(twoPhases, encodeResumeToken(twoPhases, cursor, c.header));
        assert.deepEqual(decoded, { ...cursor, url: decoded.url, ...(c.header !== undefined && { header: c.header }) });
        assert.deepEqual([...new URLSearchParams(decoded.url.split('?')[1])].sort(), [...new URLSearchParams(cursor.url.split('?')[1])].sort());
      }),
      { seed: 23, numRuns: 200 },
    );
  });

  test('refuse a token cut short or with any character changed (property)', () => {
    fc.assert(
      fc.property(cursorArb, fc.nat(), fc.integer({ min: 1, max: 63 }), (c, at, shift) => {
        const token = encodeResumeToken(twoPhases, cursorOf(c), c.header);
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
        const i = at % token.length;
        const edited = token.slice(0, i) + alphabet[(alphabet.indexOf(token[i] as string) + shift) % 64] + token.slice(i + 1);
        for (const bad of [token.slice(0, i), edited]) {
          // A change in the last character's padding bits decodes to the same bytes: the same token.
          if (Buffer.from(bad, 'base64url').equals(Buffer.from(token, 'base64url'))) continue;
          assert.throws(
            () => decodeResumeToken(twoPhases, bad),
            (e: unknown) => e instanceof UsageError && /not a whole token|different command/.test(e.message),
          );
        }
      }),
      { seed: 23, numRuns: 200 },
    );
  });
});

describe('a stop signal and what a token may name (issue 33)', () => {
  test('a stop ends the list before its next record, whatever was read ahead, with a token that continues it', async () => {
    const stop = new AbortController();
    const writer = collector();
    const write = writer.write;
    // The first record's write stops the run; the rest of its page is in memory already.
    writer.write = async (record) => {
      await write(record);
      stop.abort();
    };
    const twoPhases = plan(1);
    const error = await runList({
      plan: twoPhases,
      source: memorySource([10], 10),
      writer,
      start: startPoint(twoPhases, undefined),
      signal: stop.signal,
      notice: () => undefined,
    }).catch((err: unknown) => err as Error);
    assert.ok(error instanceof ListStoppedError && error.cause instanceof InterruptedError, String(error));
    assert.equal(error.exitCode, 130);
    assert.deepEqual(writer.ids, ['0-0']);
    const token = error.resumeToken as string;
    const rest = collector();
    await runList({ plan: twoPhases, source: memorySource([10], 10), writer: rest, start: startPoint(twoPhases, token), notice: () => undefined });
    assert.deepEqual(rest.ids, expectedIds([10]).slice(1));
  });

  test('a token whose address was edited (a filter, the path) is refused, though its checksum holds', () => {
    const rules = { style: 'skip' as const };
    const listing = { phases: ['v1.3/conversations?status=unread&page_size=50'], rules, origin: 'https://a.example/' };
    const at = (url: string): string => encodeResumeToken(listing, { phase: 0, url, writtenBefore: 0 });
    assert.equal(
      decodeResumeToken(listing, at('v1.3/conversations?status=unread&page_size=50&skip=100')).url,
      'v1.3/conversations?status=unread&page_size=50&skip=100',
    );
    for (const [url, why] of [
      ['v1.3/conversations?status=closed&page_size=50&skip=100', /changes status in the query/],
      ['v1.1/reports?status=unread&page_size=50', /goes to another path \(v1\.1\/reports\)/],
      ['v1.3/conversations?page_size=50', /drops status from the query/],
      ['v1.3/conversations?status=unread&status=closed&page_size=50', /changes status in the query/],
    ] as const) {
      assert.throws(
        () => decodeResumeToken(listing, at(url)),
        (err: Error) => err instanceof UsageError && /^--resume: the token's address /.test(err.message) && why.test(err.message),
        url,
      );
    }
  });

  test('a token belongs to the service it was printed against', () => {
    const listing = { phases: ['v1.3/tags?page_size=50'], rules: { style: 'skip' as const }, origin: 'https://a.example/' };
    const token = encodeResumeToken(listing, { phase: 0, url: 'v1.3/tags?page_size=50&skip=100', writtenBefore: 0 });
    assert.equal(decodeResumeToken(listing, token).url, 'v1.3/tags?page_size=50&skip=100');
    assert.throws(
      () => decodeResumeToken({ ...listing, origin: 'https://b.example/' }, token),
      /^UsageError: --resume: the token belongs to a different command; run the same command that printed it \(the same resource and filters\) against the same service \(https:\/\/b\.example\/\)$/,
    );
  });
});
