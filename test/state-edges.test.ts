/**
 * Incremental and file-writing lists at their edges, against the model server (written from the
 * spec): a link with a date no calendar has, -O with a list that fails part-way, records dated in
 * the future, a service clock ahead of ours, and what a watch's polls cost.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fakeClock, runCli, scratchFolder } from './helpers.js';
import { ModelServer, NOW, modelData, type ModelVariant, modelEnv } from './model-server.js';

const env = modelEnv;
const LIST = ['conversations', 'list', '--status', 'unread', '-o', 'ndjson', '--columns', 'id', '--page-size', '4', '--retries', '0'];

const idsOf = (ndjson: string): string[] =>
  ndjson
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { id: string }).id);

async function withModel(
  variant: ModelVariant,
  body: (
    model: ModelServer,
    run: (args: string[], clock?: ReturnType<typeof fakeClock>, extraEnv?: Record<string, string>) => ReturnType<typeof runCli>,
    dir: string,
  ) => Promise<void>,
  data = modelData(20, ['hours', 'year'], 3),
): Promise<void> {
  const model = new ModelServer(data, variant);
  await model.start();
  const dir = scratchFolder('carectl-state-edges-');
  try {
    await body(
      model,
      (args, clock = fakeClock(NOW), extraEnv = {}) => runCli(args, { env: { ...env(model), ...extraEnv }, now: clock.now, sleep: clock.sleep, cwd: dir }),
      dir,
    );
  } finally {
    await model.close();
  }
}

/** The link with its keyset date bound set to a date no calendar has. */
const impossibleDate = (link: string): string => link.replace(/(_sort_date_gte=)[^&]+/, '$12026-13-45T99%3A99%3A99');

describe('a next_page link whose date does not exist (2026-13-45T99:99:99)', () => {
  it('ends the list with an error and a token, not as if complete', async () => {
    await withModel({ reading: 'whole-day', links: 'keyset', rewriteLink: impossibleDate }, async (model, run) => {
      const result = await run(LIST);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /^carectl: the service sent a next_page link that adds oldest_sort_date_gte to the query .*--resume \S+\n$/);
      assert.deepEqual(idsOf(result.stdout), model.expected({ status: 'unread' }).slice(0, 4));
    });
  });

  it('with --state and -O: exit 1, the state and the file unchanged', async () => {
    await withModel({ reading: 'whole-day', links: 'keyset' }, async (model, run, dir) => {
      const clock = fakeClock(NOW);
      assert.equal((await run([...LIST, '--state', 's.state', '-O', 'a.ndjson'], clock)).code, 0);
      const state = readFileSync(join(dir, 's.state'), 'utf8');
      writeFileSync(join(dir, 'b.ndjson'), 'old\n');
      for (let i = 1; i <= 6; i++) model.data.push({ id: String(600000 + i), status: 'unread', is_priority: false, oldest: NOW, newest: NOW + i * 60_000 });
      model.variant.rewriteLink = impossibleDate;
      clock.advance(3_600_000);
      const failed = await run([...LIST, '--state', 's.state', '-O', 'b.ndjson'], clock);
      assert.equal(failed.code, 1, failed.stderr);
      assert.match(failed.stderr, /changes newest_sort_date_gte in the query.*the state is unchanged/);
      assert.deepEqual([readFileSync(join(dir, 's.state'), 'utf8'), readFileSync(join(dir, 'b.ndjson'), 'utf8')], [state, 'old\n']);
    });
  });
});

describe('-O with a list that fails part-way', () => {
  it('the token starts at the first record not in FILE: the command it suggests writes the whole list', async () => {
    await withModel({ reading: 'whole-day', links: 'keyset' }, async (model, run, dir) => {
      writeFileSync(join(dir, 'out.ndjson'), 'old\n');
      const args = [...LIST, '-O', 'out.ndjson', '--resume-file', 'tok'];
      // A next page (a link's skip) once the first page and the first cut slice were served.
      model.variant.failWhen = (params) => params.get('skip') !== null && model.requests.length > 1;
      const failed = await run(args);
      assert.equal(failed.code, 1, failed.stderr);
      assert.match(
        failed.stderr,
        /^carectl: down \(HTTP 500\); the list stopped after \d+ records, none of them in out\.ndjson, which is left as it was: to continue, run the same command with --resume \S+\n$/,
      );
      assert.equal(readFileSync(join(dir, 'out.ndjson'), 'utf8'), 'old\n');
      const token = readFileSync(join(dir, 'tok'), 'utf8').trim();
      assert.equal(/--resume (\S+)/.exec(failed.stderr)?.[1], token);
      delete model.variant.failWhen;
      const resumed = await run([...args, '--resume', token]);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(idsOf(readFileSync(join(dir, 'out.ndjson'), 'utf8')), model.expected({ status: 'unread' }));
    });
  });
});
