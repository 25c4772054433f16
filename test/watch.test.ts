/**
 * --watch: the list, then every record that appears or moves, once, as polls find it; against the
 * model server whose data changes between polls, with the injected clock (no real waits).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openSandbox, runCli, scratchFolder } from './helpers.js';
import { ModelServer, NOW, modelData, type ModelRecord, modelEnv } from './model-server.js';
import type { Io } from '../src/core/io.js';

const env = modelEnv;

/**
 * A clock whose sleeps pass at once, each running the next step of `script` (the world between two
 * polls, given a time two seconds before the next poll: a record dated in the second a poll starts
 * comes again in the next, at-least-once); past its end, Ctrl-C.
 */
function scripted(script: Array<(now: number) => void>, stop: AbortController): { now: () => number; sleep: Io['sleep']; slept: number[] } {
  let time = NOW;
  const slept: number[] = [];
  return {
    now: () => time,
    sleep: async (ms, signal) => {
      slept.push(ms);
      time += ms;
      const step = script.shift();
      if (step) step(time - 2000);
      else stop.abort();
      await new Promise((resolve) => setImmediate(resolve));
      if (signal?.aborted) throw signal.reason;
    },
    slept,
  };
}

const sorted = (ids: string[]): string[] => [...ids].sort();

const idsOf = (ndjson: string): string[] =>
  ndjson
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: string }).id);

describe('--watch', () => {
  it('prints the list, then each new or moved record once as a poll finds it; a failed poll is said and retried later; Ctrl-C: 130', async () => {
    const model = new ModelServer(modelData(30, ['hours'], 5), { reading: 'whole-day', links: 'keyset' });
    await model.start();
    const stop = new AbortController();
    const moved = model.expected({ status: 'unread' })[0] as string;
    const clock = scripted(
      [
        (now) => model.data.push({ id: '600001', status: 'unread', is_priority: false, oldest: now, newest: now }),
        () => (model.variant.failWhen = () => true),
        (now) => {
          delete model.variant.failWhen;
          (model.data.find((r) => r.id === moved) as ModelRecord).newest = now;
        },
        () => undefined,
      ],
      stop,
    );
    try {
      const dir = scratchFolder('carectl-watch-');
      const first = model.expected({ status: 'unread', sort: 'newest_sort_date' });
      const args = [
        'conversations',
        'list',
        '--status',
        'unread',
        '--watch',
        '--interval',
        '5s',
        '-o',
        'ndjson',
        '--columns',
        'id',
        '--retries',
        '0',
        '--state',
        's.json',
      ];
      const result = await runCli(args, { env: env(model), now: clock.now, sleep: clock.sleep, signal: stop.signal, cwd: dir });
      assert.equal(result.code, 130, result.stderr);
      assert.deepEqual(idsOf(result.stdout), [...first, '600001', moved]);
      assert.equal(result.stderr, '--watch: poll failed (1 in a row): down (HTTP 500); still watching\ncarectl: interrupted\n');
      // The interval, twice it after the failure, then the interval again.
      assert.deepEqual(clock.slept, [5000, 5000, 10000, 5000, 5000]);
      // Committed after the last poll that completed: past the newest record it saw as it began (moved at 12:00:18).
      assert.match(readFileSync(join(dir, 's.json'), 'utf8'), /"since": "2026-06-30T12:00:19"/);
    } finally {
      await model.close();
    }
  });

  it('a poll that fails part-way says how far it got and that the next poll lists them again, and the watch goes on', async () => {
    const model = new ModelServer(modelData(3, ['hours'], 5), { reading: 'whole-day', links: 'keyset' });
    await model.start();
    const stop = new AbortController();
    const added = Array.from({ length: 12 }, (_, i) => String(600001 + i));
    const clock = scripted(
      [
        (now) => {
          for (const id of added) model.data.push({ id, status: 'unread', is_priority: false, oldest: now, newest: now });
          // The poll's first page comes; the pages after it (their links carry a skip) fail.
          model.variant.failWhen = (params) => params.has('skip');
        },
        () => delete model.variant.failWhen,
      ],
      stop,
    );
    try {
      const first = model.expected({ status: 'unread', sort: 'newest_sort_date' });
      const args = ['conversations', 'list', '--status', 'unread', '--watch', '--interval', '5s', '-o', 'ndjson', '--columns', 'id'];
      const result = await runCli([...args, '--retries', '0', '--parallel', '1', '--page-size', '5'], {
        env: env(model),
        now: clock.now,
        sleep: clock.sleep,
        signal: stop.signal,
      });
      assert.equal(result.code, 130, result.stderr);
      const said =
        /^--watch: poll failed \(1 in a row\): down \(HTTP 500\); the list stopped after (\d+) records?: the next poll lists them again; still watching\ncarectl: interrupted\n$/.exec(
          result.stderr,
        );
      assert.ok(said, result.stderr);
      const ids = idsOf(result.stdout);
      // The failed poll's first page (the new records in it), then the next poll's whole 12.
      const partly = Number(said[1]);
      assert.ok(partly > 0 && partly < added.length, result.stderr);
      assert.deepEqual(ids.slice(0, first.length), first);
      assert.deepEqual(sorted(ids.slice(first.length + partly)), added);
      assert.ok(
        ids.slice(first.length, first.length + partly).every((id) => added.includes(id)),
        ids.join(' '),
      );
    } finally {
      await model.close();
    }
  });

  it('on a terminal: table rows, with a time line before the rows of a poll that found any', async () => {
    const model = new ModelServer(modelData(3, ['hours'], 5), { reading: 'whole-day', links: 'keyset' });
    await model.start();
    const stop = new AbortController();
    const clock = scripted([(now) => model.data.push({ id: '600001', status: 'unread', is_priority: false, oldest: now, newest: now }), () => undefined], stop);
    try {
      const args = ['conversations', 'list', '--status', 'unread', '--watch', '--columns', 'id,status', '--no-color'];
      const result = await runCli(args, { env: env(model), now: clock.now, sleep: clock.sleep, signal: stop.signal, stdoutTTY: true, columns: 80 });
      assert.equal(result.code, 130, result.stderr);
      const lines = result.stdout.split('\n');
      assert.deepEqual(lines.slice(-3), ['-- 2026-06-30 12:00:30 UTC', '600001  unread', '']);
      assert.equal(lines[0], 'ID      STATUS');
    } finally {
      await model.close();
    }
  });

  it('without a filter (the union of is_priority true and false), against the sandbox: polls with no change print nothing', async () => {
    const sandbox = await openSandbox();
    const stop = new AbortController();
    const clock = scripted([() => undefined, () => undefined], stop);
    try {
      const args = ['conversations', 'list', '--watch', '--interval', '5s', '-o', 'ndjson', '--columns', 'id'];
      const result = await runCli(args, { sandbox, now: clock.now, sleep: clock.sleep, signal: stop.signal });
      const all = await runCli(['conversations', 'list', '-o', 'ndjson', '--columns', 'id'], { sandbox });
      assert.deepEqual([result.code, result.stderr], [130, 'carectl: interrupted\n']);
      assert.equal(all.code, 0, all.stderr);
      assert.deepEqual(sorted(idsOf(result.stdout)), sorted(idsOf(all.stdout)));
    } finally {
      await sandbox.close();
    }
  });

  // Issue 50 items 10 and 11, issue 48 item 3: three conversations arrive between polls, dated by
  // the service's clock (ours, or 30 s ahead of it); twelve polls.
  for (const aheadMs of [0, 30_000]) {
    it(`prints each new record once, and a poll costs about the same throughout (the service's clock ${aheadMs ? '30 s ahead of ours' : 'as ours'})`, async () => {
      const model = new ModelServer(modelData(120, ['hours'], 9), { reading: 'whole-day', links: 'keyset' });
      await model.start();
      const stop = new AbortController();
      const arrived: string[] = [];
      const perPoll: number[] = [];
      const arrive = (now: number): void => {
        perPoll.push(model.requests.length);
        for (let k = 0; k < 3; k++) {
          const id = String(700000 + arrived.length);
          const at = Math.floor((now + aheadMs) / 1000) * 1000 + k * 1000 - 3000;
          model.data.push({ id, status: 'unread', is_priority: false, oldest: at, newest: at });
          arrived.push(id);
        }
      };
      const clock = scripted(
        Array.from({ length: 12 }, () => arrive),
        stop,
      );
      try {
        const first = model.expected({ status: 'unread', sort: 'newest_sort_date' });
        const args = ['conversations', 'list', '--status', 'unread', '--watch', '--interval', '5s', '-o', 'ndjson', '--columns', 'id', '--page-size', '10'];
        const result = await runCli(args, { env: env(model), now: clock.now, sleep: clock.sleep, signal: stop.signal });
        assert.equal(result.code, 130, result.stderr);
        assert.deepEqual(idsOf(result.stdout), [...first, ...arrived]);
        // A poll reads the pages of what arrived since the margin before the last start (all of it here, a minute), and a few requests
        // more; with the service's clock ahead, one more for each record dated past our clock (within its lead), whose date is compared.
        const costs = perPoll.slice(1).map((count, i) => count - (perPoll[i] as number));
        const pages = costs.map((_, i) => Math.ceil((3 * (i + 1)) / 10));
        const lead = (i: number): number => Math.min(3 * (i + 1), (3 * aheadMs) / 5000);
        assert.ok(
          costs.every((cost, i) => cost <= (pages[i] as number) + lead(i) + 6),
          `requests per poll: ${costs.join(', ')}; pages since the margin: ${pages.join(', ')}`,
        );
      } finally {
        await model.close();
      }
    });
  }

  it('refuses -o json, --query, an interval under 5s, --interval alone, and -O: exit 2, nothing sent', async () => {
    const model = new ModelServer(modelData(3, ['hours'], 5), { reading: 'whole-day', links: 'keyset' });
    await model.start();
    try {
      const base = ['conversations', 'list', '--status', 'unread'];
      const cases: Array<[string[], string]> = [
        [['--watch', '-o', 'json'], 'carectl: --watch: -o json is one array, which a watch never closes; use -o ndjson\n'],
        [['--watch', '--query', '[].id'], 'carectl: --watch: --query reads the whole list, which a watch never closes; use -o ndjson\n'],
        [['--watch', '--interval', '2s'], 'carectl: --interval: at least 5s (got 2s)\n'],
        [['--interval', '10s'], 'carectl: --interval: goes with --watch\n'],
        [
          ['--watch', '-O', 'x.tsv'],
          'carectl: --watch: cannot be combined with -O/--output-file, which is renamed into place only once whole; redirect stdout instead\n',
        ],
      ];
      for (const [extra, stderr] of cases) {
        const result = await runCli([...base, ...extra], { env: env(model), cwd: scratchFolder('carectl-watch-') });
        assert.deepEqual([result.code, result.stderr], [2, stderr]);
      }
      assert.equal(model.requests.length, 0);
    } finally {
      await model.close();
    }
  });
});
