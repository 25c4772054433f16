/**
 * `--limit N` / `--resume` chains, and whole lists read in parallel, against a live service
 * (test/live-server.ts) whose data changes with every request, under the three readings of
 * next_page: every stable record printed exactly once, nothing printed twice unless its sort date
 * moved, nothing printed that never matched.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { fakeClock, runCli } from './helpers.js';
import { NOW } from './model-server.js';
import { LiveServer, type Reading } from './live-server.js';

const TOKEN = /--resume '?([A-Za-z0-9_-]+)'?/;

const liveEnv = (live: LiveServer): Record<string, string> => ({
  CARECTL_BASE_URL: live.baseUrl,
  CARECTL_USER: 'bot',
  CARECTL_PASSWORD: 'live-secret',
  XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
});

/** A --limit chain resumed to the end: the ids printed, in order. */
async function chain(live: LiveServer, argv: string[], limit: number, between?: (printed: string[]) => void): Promise<string[]> {
  const env = liveEnv(live);
  const clock = fakeClock(NOW);
  const ids: string[] = [];
  let resume: string | undefined;
  for (let round = 0; round < 100; round++) {
    const result = await runCli([...argv, '--limit', String(limit), ...(resume ? ['--resume', resume] : [])], { env, now: clock.now, sleep: clock.sleep });
    assert.equal(result.code, 0, result.stderr);
    const printed = result.stdout.split(/\r?\n/).filter((line) => line !== '' && line !== 'id');
    ids.push(...printed);
    between?.(printed);
    resume = TOKEN.exec(result.stderr)?.[1];
    if (!resume) return ids;
  }
  throw new Error('the --limit chain did not end');
}

/** Each stable record once, nothing twice unless its sort date moved, nothing that never matched. */
function assertWhole(live: LiveServer, stable: Set<string>, ids: string[], what: string): void {
  const moved = live.movedIds();
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  const missing = [...stable].filter((id) => !counts.has(id));
  const twice = [...counts].filter(([id, n]) => n > 1 && !moved.has(id)).map(([id]) => id);
  const never = ids.filter((id) => !live.everUnread.has(id));
  assert.deepEqual({ missing, twice, never }, { missing: [], twice: [], never: [] }, what);
}

async function check(reading: Reading, seed: number, limit: number, descending: boolean): Promise<void> {
  const live = new LiveServer(reading, seed);
  await live.start();
  try {
    const stable = live.stableIds();
    const argv = ['conversations', 'list', '--status', 'unread', '-o', 'csv', '--columns', 'id', '--page-size', '20', '--parallel', '1'];
    const ids = await chain(live, [...argv, ...(descending ? ['--sort', '-oldest_sort_date'] : [])], limit);
    assertWhole(live, stable, ids, `${reading} --limit ${limit}${descending ? ' descending' : ''}`);
  } finally {
    await live.close();
  }
}

describe('--limit chains on a live service (issue 33)', () => {
  for (const reading of ['keyset', 'snapshot', 'plain'] as const) {
    for (const descending of [false, true]) {
      test(`${reading} links${descending ? ', descending' : ''}: each stable record once, nothing twice, nothing that never matched`, async () => {
        for (const limit of [7, 50, 120]) await check(reading, 33 + limit, limit, descending);
      });
    }
  }

  test('any seed and --limit, any reading (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Reading>('keyset', 'snapshot', 'plain'),
        fc.integer({ min: 1, max: 1e6 }),
        fc.integer({ min: 5, max: 130 }),
        fc.boolean(),
        check,
      ),
      { seed: 33, numRuns: 12 },
    );
  });

  for (const reading of ['snapshot', 'plain'] as const) {
    test(`${reading} links, --limit 120 with pages of 50: the 20 written past the service's cursor leave before the resume, none lost`, async () => {
      const live = new LiveServer(reading, 120, 400);
      await live.start();
      try {
        const stable = live.stableIds();
        const argv = ['conversations', 'list', '--status', 'unread', '-o', 'csv', '--columns', 'id', '--page-size', '50', '--parallel', '1'];
        // The client closes the last 20 it printed (those on the page the token stops in) before going on.
        const ids = await chain(live, argv, 120, (printed) => live.closeIds(printed.slice(-20)));
        assert.deepEqual(
          [...stable].filter((id) => !ids.includes(id)),
          [],
        );
        assert.equal(new Set(ids).size, ids.length);
      } finally {
        await live.close();
      }
    });
  }
});

test('plain skip links, a --limit 50 chain past 100 records that closes what it printed: the tokens past 100 say what they risk', async () => {
  const live = new LiveServer('plain', 7, 304);
  await live.start();
  try {
    const env = liveEnv(live);
    const clock = fakeClock(NOW);
    const argv = ['conversations', 'list', '--status', 'unread', '-o', 'csv', '--columns', 'id', '--page-size', '50', '--parallel', '1', '--limit', '50'];
    const notes: boolean[] = [];
    let resume: string | undefined;
    for (let round = 0; round < 10 && (round === 0 || resume); round++) {
      const result = await runCli([...argv, ...(resume ? ['--resume', resume] : [])], { env, now: clock.now, sleep: clock.sleep });
      assert.equal(result.code, 0, result.stderr);
      live.closeIds(result.stdout.split(/\r?\n/).filter((line) => line !== '' && line !== 'id'));
      resume = TOKEN.exec(result.stderr)?.[1];
      if (resume)
        notes.push(
          / \(the service's skip in it counts the \d+ records before it, more than a token names: for each record that leaves the list before it in between, one after it may be passed over\)\n$/.test(
            result.stderr,
          ),
        );
    }
    // Within the first 100 the token names every record before it (skip 0): nothing to say.
    assert.deepEqual(notes, [false, false, true]);
  } finally {
    await live.close();
  }
});

describe('whole lists in parallel on a live service', () => {
  // Four months of records (its burst at the first second within its first page): with keyset links the list is cut into day
  // slices once its first page gives a position.
  for (const reading of ['keyset', 'snapshot', 'plain'] as const) {
    test(`${reading} links: each stable record once, nothing twice, nothing that never matched`, async () => {
      for (const seed of [1, 2, 3]) {
        const live = new LiveServer(reading, seed, 250, { days: 120, hours: 120 * 24 });
        await live.start();
        try {
          const stable = live.stableIds();
          const clock = fakeClock(NOW);
          const argv = ['conversations', 'list', '--status', 'unread', '-o', 'csv', '--columns', 'id', '--page-size', '50'];
          const result = await runCli(argv, { env: liveEnv(live), now: clock.now, sleep: clock.sleep });
          assert.equal(result.code, 0, result.stderr);
          assertWhole(
            live,
            stable,
            result.stdout.split(/\r?\n/).filter((line) => line !== '' && line !== 'id'),
            `${reading}, seed ${seed}`,
          );
          const sent = live.requests.map((url) => new URL(url, 'http://x').searchParams);
          const cut = sent.filter((params) => params.has('oldest_sort_date_lt')).length;
          // Keyset links give a position to cut from; snapshot and plain-skip links none: one chain, as --parallel 1 reads it.
          if (reading === 'keyset') assert.ok(cut >= 3, 'the list was cut');
          else assert.equal(cut, 0, 'no position to cut from: read as one chain');
        } finally {
          await live.close();
        }
      }
    });
  }
});
