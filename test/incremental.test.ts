/**
 * --state: incremental lists over "nights" against the model server (written from the spec, whose
 * data changes between runs): every record that changed comes out, none is lost, none repeated
 * beyond the at-least-once of a failed run; also with a service that reads a date-time bound as
 * its day (midnight). And the state file's own rules (another query, a bad file, --limit).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fakeClock, openSandbox, runCli, scratchFolder } from './helpers.js';
import { DAY, ModelServer, NOW, modelData, type ModelRecord, type ModelVariant } from './model-server.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;

function setup(variant: ModelVariant): { model: ModelServer; clock: ReturnType<typeof fakeClock>; folder: string } {
  const data: ModelRecord[] = modelData(40, ['hours', 'year'], 7);
  // Unread records just before the first night, within its margin: the next night must not repeat them.
  for (const [i, before] of [MINUTE, 3 * MINUTE, 4 * MINUTE].entries()) {
    data.push({ id: String(510000 + i), status: 'unread', is_priority: false, oldest: NOW - DAY, newest: NOW - before });
  }
  return { model: new ModelServer(data, variant), clock: fakeClock(NOW), folder: scratchFolder('carectl-state-') };
}

const UNREAD = ['--status', 'unread'];

async function night(model: ModelServer, clock: ReturnType<typeof fakeClock>, folder: string, extra: string[] = [], filter = UNREAD) {
  const env = { CARECTL_BASE_URL: model.baseUrl, CARECTL_USER: 'bot', CARECTL_PASSWORD: 'model-secret', XDG_CONFIG_HOME: '/nonexistent/carectl-test-config' };
  const args = ['conversations', 'list', ...filter, '--state', 'state.json', '-o', 'ndjson', '--columns', 'id', '--page-size', '4', '--retries', '0', ...extra];
  const result = await runCli(args, { env, now: clock.now, sleep: clock.sleep, cwd: folder });
  const ids = result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: string }).id);
  return { ...result, ids };
}

const unread = (model: ModelServer): string[] => model.expected({ status: 'unread' });

/** Gives a record a new message at `at`, or adds a new unread one there. */
function touch(model: ModelServer, id: string, at: number): void {
  const record = model.data.find((r) => r.id === id);
  if (record) record.newest = at;
  else model.data.push({ id, status: 'unread', is_priority: false, oldest: at, newest: at });
}

const sorted = (ids: Iterable<string>): string[] => [...ids].sort();

// Without a filter the list is the union of is_priority=true and false (spec rule 1), whose
// priority query's newest record is older than the other's newest (the records just before NOW).
for (const [variant, filter] of [
  [{ reading: 'whole-day', links: 'keyset' }, UNREAD],
  [{ reading: 'midnight', links: 'keyset', timeAsDay: true }, UNREAD],
  [{ reading: 'whole-day', links: 'keyset' }, []],
  [{ reading: 'midnight', links: 'keyset', timeAsDay: true }, []],
] as Array<[ModelVariant, string[]]>) {
  const bound = variant.timeAsDay ? 'a date-time bound read as its day' : 'date-time bounds kept';
  describe(`--state over three nights (${bound}; ${filter.length > 0 ? filter.join(' ') : 'no filter, a union'})`, () => {
    it('delivers every record that changed, none lost, none repeated beyond a failed run', async () => {
      const { model, clock, folder } = setup(variant);
      await model.start();
      try {
        const first = await night(model, clock, folder, [], filter);
        assert.equal(first.code, 0, first.stderr);
        assert.deepEqual(sorted(first.ids), sorted(filter.length > 0 ? unread(model) : model.expected({})));
        assert.equal(new Set(first.ids).size, first.ids.length);
        const state = readFileSync(join(folder, 'state.json'), 'utf8');

        // Day two: new conversations, and messages on old ones: one delivered in the margin, one
        // earlier that day, one from long ago, one just past the first night's start.
        const changedA = new Set<string>();
        const today = unread(model).filter((id) => (model.data.find((r) => r.id === id) as ModelRecord).newest >= Math.floor(NOW / DAY) * DAY);
        const old = unread(model).find((id) => (model.data.find((r) => r.id === id) as ModelRecord).newest < NOW - 2 * DAY) as string;
        for (const [id, at] of [
          ['510001', NOW + 30_000],
          [today[0] as string, NOW + 2 * HOUR],
          [old, NOW + 10 * HOUR],
          ['600001', NOW + HOUR],
          ['600002', NOW + 13 * HOUR],
        ] as const) {
          touch(model, id, at);
          changedA.add(id);
        }
        clock.advance(14 * HOUR);

        // Night two fails part-way, at the first page past night one's start: the state stays as night one left it.
        model.variant.failWhen = (params) =>
          params.get('page_size') === '4' && params.has('skip') && Date.parse(`${params.get('newest_sort_date_gte')}Z`) >= NOW;
        const failed = await night(model, clock, folder, [], filter);
        assert.equal(failed.code, 1, failed.stderr);
        assert.match(
          failed.stderr,
          /^carectl: down \(HTTP 500\); the list stopped after \d records?: the state is unchanged, so the same command lists them again\n$/,
        );
        assert.ok(failed.ids.length > 0 && failed.ids.length < changedA.size, failed.stdout);
        assert.equal(readFileSync(join(folder, 'state.json'), 'utf8'), state);
        delete model.variant.failWhen;

        // Day three: more new records and moves, one of them a record night two printed.
        const changedB = new Set<string>();
        for (const [id, at] of [
          ['600003', NOW + 20 * HOUR],
          [today[1] as string, NOW + 30 * HOUR],
          [failed.ids[0] as string, NOW + 31 * HOUR],
        ] as const) {
          touch(model, id, at);
          changedB.add(id);
        }
        clock.advance(24 * HOUR);
        const third = await night(model, clock, folder, [], filter);
        assert.equal(third.code, 0, third.stderr);
        assert.deepEqual(sorted(third.ids), sorted(new Set([...changedA, ...changedB])));
        assert.equal(new Set(third.ids).size, third.ids.length);

        // Nothing changed since: nothing comes out.
        clock.advance(HOUR);
        const quiet = await night(model, clock, folder, [], filter);
        assert.deepEqual([quiet.code, quiet.ids, quiet.stderr], [0, [], 'no conversations found\n']);
        assert.deepEqual(readdirSync(folder).sort(), ['state.json']);
      } finally {
        await model.close();
      }
    });
  });
}

describe('--state with our clock ahead of the service', () => {
  it('loses nothing changed in the minutes our clock is ahead', async () => {
    const { model, folder } = setup({ reading: 'whole-day', links: 'keyset' });
    // Ours reads 20 minutes later than the service, whose clock dates the records.
    const clock = fakeClock(NOW + 20 * MINUTE);
    await model.start();
    try {
      assert.equal((await night(model, clock, folder)).code, 0);
      touch(model, '600001', NOW + MINUTE);
      touch(model, '510000', NOW + 2 * MINUTE);
      clock.advance(HOUR);
      const next = await night(model, clock, folder);
      assert.deepEqual([next.code, sorted(next.ids)], [0, ['510000', '600001']]);
    } finally {
      await model.close();
    }
  });
});

// Issue 50 item 8: sort dates in the future (the spec does not forbid them) are the service's data.
describe('--state over records dated in the future', () => {
  it('delivers each once, whatever its date; a record that moves comes again, once', async () => {
    const data: ModelRecord[] = modelData(60, ['year', 'future'], 11).map((r) => ({ ...r, status: 'unread' }));
    data.push({ id: '590000', status: 'unread', is_priority: false, oldest: NOW, newest: Date.UTC(2100, 0, 1) });
    // Dated a few minutes ahead of our clock: the run's start must not follow it past the service's (a hostile probe lost moves so).
    data.push({ id: '590001', status: 'unread', is_priority: false, oldest: NOW, newest: NOW + 3 * MINUTE });
    const { model, folder } = { model: new ModelServer(data, { reading: 'whole-day', links: 'keyset' }), folder: scratchFolder('carectl-state-') };
    const clock = fakeClock(NOW);
    await model.start();
    try {
      const first = await night(model, clock, folder);
      assert.deepEqual([first.code, sorted(first.ids)], [0, sorted(unread(model))]);
      for (const hours of [1, 24]) {
        clock.advance(hours * HOUR);
        const again = await night(model, clock, folder);
        assert.deepEqual([again.code, again.ids, again.stderr], [0, [], 'no conversations found\n']);
      }
      const old = model.data.find((r) => r.newest < NOW - 30 * DAY) as ModelRecord;
      touch(model, old.id, clock.now() - MINUTE);
      touch(model, '600001', clock.now() - 2 * MINUTE);
      clock.advance(HOUR);
      const moved = await night(model, clock, folder);
      assert.deepEqual([moved.code, sorted(moved.ids)], [0, sorted(['600001', old.id])]);
      // A record a few minutes ahead again; then the one dated 2100 gets a message dated now.
      touch(model, '590001', clock.now() + 3 * MINUTE);
      clock.advance(MINUTE);
      assert.deepEqual((await night(model, clock, folder)).ids, ['590001']);
      touch(model, '590000', clock.now());
      clock.advance(MINUTE);
      assert.deepEqual((await night(model, clock, folder)).ids, ['590000']);
    } finally {
      await model.close();
    }
  });
});

// A hostile probe: records moved and written in one second end the list, the newest record among them;
// the service orders their tie the other way round in its descending sort, so the list's last record is not the newest it names.
for (const ignoreFar of [false, true]) {
  describe(`--state with the list ending in records of one second${ignoreFar ? ', upper bounds ignored' : ''}`, () => {
    it('the next run repeats none of them, and a later move of one comes once', async () => {
      const data: ModelRecord[] = modelData(12, ['year'], 4).map((r) => ({ ...r, status: 'unread' }));
      const model = new ModelServer(data, { reading: 'whole-day', links: 'keyset', tiesKept: true, ignoreFar });
      const folder = scratchFolder('carectl-state-');
      const clock = fakeClock(NOW);
      await model.start();
      try {
        assert.equal((await night(model, clock, folder)).code, 0);
        // Among them the newest record: the start of this run, found below its second, must not fall back behind the last run's.
        const byNewest = model.expected({ status: 'unread', sort: 'newest_sort_date' });
        const tied = [...byNewest.slice(0, 2), byNewest.at(-1) as string, '600001', '600002'];
        for (const id of tied) touch(model, id, clock.now());
        const moved = await night(model, clock, folder);
        assert.deepEqual([moved.code, sorted(moved.ids)], [0, sorted(tied)]);
        for (const minutes of [1, 60]) {
          clock.advance(minutes * MINUTE);
          const again = await night(model, clock, folder);
          assert.deepEqual([again.code, again.ids, again.stderr], [0, [], 'no conversations found\n']);
        }
        touch(model, tied[1] as string, clock.now());
        clock.advance(MINUTE);
        assert.deepEqual((await night(model, clock, folder)).ids, [tied[1]]);
      } finally {
        await model.close();
      }
    });
  });
}

describe('--state file rules', () => {
  it('refuses a state of another query, a file that is not a state, and --limit; nothing is sent', async () => {
    const { model, clock, folder } = setup({ reading: 'whole-day', links: 'keyset' });
    await model.start();
    try {
      assert.equal((await night(model, clock, folder)).code, 0);
      const sent = model.requests.length;
      const other = await night(model, clock, folder, ['--priority']);
      assert.equal(other.code, 2);
      assert.match(
        other.stderr,
        /^carectl: --state: state\.json belongs to the query v1\.3\/conversations\?status=unread, not to this one \(v1\.3\/conversations\?is_priority=true&status=unread\); give another FILE\n$/,
      );
      const limited = await night(model, clock, folder, ['--limit', '3']);
      assert.deepEqual(
        [limited.code, limited.stderr],
        [2, 'carectl: --state: cannot be combined with --limit; --state lists every record past where the last run ended\n'],
      );
      const bounded = await night(model, clock, folder, ['--newest', '7d..']);
      assert.deepEqual(
        [bounded.code, bounded.stderr],
        [2, 'carectl: --state: lists by newest_sort_date from where the last run ended; --newest cannot be combined with it\n'],
      );
      writeFileSync(join(folder, 'state.json'), 'not json');
      const bad = await night(model, clock, folder);
      assert.deepEqual(
        [bad.code, bad.stderr],
        [2, 'carectl: --state: state.json is not a carectl state file; give another FILE or remove it to list everything again\n'],
      );
      assert.equal(model.requests.length, sent);
    } finally {
      await model.close();
    }
  });
});

describe('--state against the sandbox', () => {
  it('the first run lists every record, by newest_sort_date; the next repeats none; -O and the state land together', async () => {
    const sandbox = await openSandbox();
    try {
      const dir = scratchFolder('carectl-state-');
      const args = ['conversations', 'list', '--status', 'unread', '--state', 's.json', '-O', 'out.ndjson', '-o', 'ndjson', '--columns', 'id'];
      const clock = fakeClock(NOW);
      const first = await runCli(args, { sandbox, cwd: dir, now: clock.now, sleep: clock.sleep });
      assert.deepEqual([first.code, first.stdout, first.stderr], [0, '', '']);
      const all = await runCli(['conversations', 'list', '--status', 'unread', '--sort', 'newest_sort_date', '-o', 'ndjson', '--columns', 'id'], { sandbox });
      assert.equal(readFileSync(join(dir, 'out.ndjson'), 'utf8'), all.stdout);
      assert.deepEqual(readdirSync(dir).sort(), ['out.ndjson', 's.json']);
      clock.advance(DAY);
      // A name of its own: out.ndjson holds records the state has moved past (its -O is refused).
      const second = await runCli([...args.slice(0, -6), '-O', 'out-2.ndjson', ...args.slice(-4)], { sandbox, cwd: dir, now: clock.now, sleep: clock.sleep });
      assert.deepEqual([second.code, second.stderr, readFileSync(join(dir, 'out-2.ndjson'), 'utf8')], [0, 'no conversations found\n', '']);
    } finally {
      await sandbox.close();
    }
  });

  it('the union of the two priority queries (no --status): the next run repeats none, though the newest records of the two queries differ by days (field test)', async () => {
    const sandbox = await openSandbox();
    try {
      const dir = scratchFolder('carectl-state-');
      const args = ['conversations', 'list', '--state', 's.json', '-o', 'ndjson', '--columns', 'id'];
      const clock = fakeClock(NOW);
      const first = await runCli(args, { sandbox, cwd: dir, now: clock.now, sleep: clock.sleep });
      assert.equal(first.code, 0, first.stderr);
      assert.ok(first.stdout.split('\n').length > 500, 'every conversation');
      for (const later of [1, 2]) {
        clock.advance(DAY * later);
        const again = await runCli(args, { sandbox, cwd: dir, now: clock.now, sleep: clock.sleep });
        assert.deepEqual([again.code, again.stdout, again.stderr], [0, '', 'no conversations found\n'], `run ${later + 1}`);
      }
    } finally {
      await sandbox.close();
    }
  });
});

describe('--state on the union of the is_priority queries (no status or priority filter)', () => {
  it('the sandbox: a later run with no change repeats none, run after run', async () => {
    const sandbox = await openSandbox();
    try {
      const dir = scratchFolder('carectl-state-');
      const args = (out: string): string[] => ['conversations', 'list', '--state', 'conv.state', '-o', 'csv', '-O', out, '--columns', 'id'];
      const clock = fakeClock(NOW);
      const first = await runCli(args('out-0.csv'), { sandbox, cwd: dir, now: clock.now, sleep: clock.sleep });
      assert.deepEqual([first.code, first.stderr], [0, '']);
      assert.ok(readFileSync(join(dir, 'out-0.csv'), 'utf8').split('\n').length > 3);
      for (const later of [1, 2, 3]) {
        clock.advance(later * HOUR);
        const run = await runCli(args(`out-${later}.csv`), { sandbox, cwd: dir, now: clock.now, sleep: clock.sleep });
        assert.deepEqual([run.code, run.stderr, readFileSync(join(dir, `out-${later}.csv`), 'utf8')], [0, 'no conversations found\n', 'id\r\n']);
      }
    } finally {
      await sandbox.close();
    }
  });
});
