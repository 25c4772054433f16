/**
 * The files a list's options name (--state, -O, --resume-file) against the model server: a run's
 * lock on its state, the -O file an earlier run of the state wrote, options naming one file,
 * damaged and foreign states, and --resume-file checked before anything is sent.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fakeClock, runCli, scratchFolder } from './helpers.js';
import { ModelServer, NOW, modelData, modelEnv } from './model-server.js';

const env = modelEnv;
const LIST = ['conversations', 'list', '--status', 'unread', '-o', 'csv', '--columns', 'id', '--page-size', '4', '--retries', '0'];

async function withModel(
  body: (model: ModelServer, run: (args: string[], clock?: ReturnType<typeof fakeClock>) => ReturnType<typeof runCli>, dir: string) => Promise<void>,
): Promise<void> {
  const model = new ModelServer(modelData(20, ['hours', 'year'], 3), { reading: 'whole-day', links: 'keyset' });
  await model.start();
  const dir = scratchFolder('carectl-state-files-');
  try {
    await body(model, (args, clock = fakeClock(NOW)) => runCli(args, { env: env(model), now: clock.now, sleep: clock.sleep, cwd: dir }), dir);
  } finally {
    await model.close();
  }
}

describe('--state with -O', () => {
  it('refuses to replace a file an earlier run of the state wrote that is still there: exit 2, nothing sent, both unchanged', async () => {
    await withModel(async (model, run, dir) => {
      const args = [...LIST, '--state', 's.state', '-O', 'out.csv'];
      const clock = fakeClock(NOW);
      assert.deepEqual([(await run(args, clock)).code], [0]);
      const [out, state] = [readFileSync(join(dir, 'out.csv'), 'utf8'), readFileSync(join(dir, 's.state'), 'utf8')];
      assert.ok(out.split('\n').length > 3, out);
      const sent = model.requests.length;
      clock.advance(1000);
      const again = await run(args, clock);
      assert.deepEqual(
        [again.code, again.stderr],
        [
          2,
          'carectl: -O/--output-file: out.csv holds records an earlier run of --state s.state wrote, which the state has moved past; give another FILE (a name no other run takes) or move it away first\n',
        ],
      );
      assert.equal(model.requests.length, sent);
      assert.deepEqual([readFileSync(join(dir, 'out.csv'), 'utf8'), readFileSync(join(dir, 's.state'), 'utf8')], [out, state]);
      // Loaded and moved away: the name is free again; a file of that name the state never wrote may be replaced.
      renameSync(join(dir, 'out.csv'), join(dir, 'loaded.csv'));
      writeFileSync(join(dir, 'out.csv'), 'mine\n');
      clock.advance(1000);
      assert.equal((await run(args, clock)).code, 0);
      assert.equal(readFileSync(join(dir, 'out.csv'), 'utf8'), 'id\r\n');
    });
  });
});

describe('--state lock', () => {
  it('a run waits for another that holds the state, up to a minute, then exit 1 naming it; nothing sent', async () => {
    await withModel(async (model, run, dir) => {
      writeFileSync(join(dir, 's.state.lock'), `${process.pid}@${(await import('node:os')).hostname()} 1 x\n`);
      const clock = fakeClock(NOW);
      const held = await run([...LIST, '--state', 's.state'], clock);
      assert.deepEqual(
        [held.code, held.stderr],
        [
          1,
          `carectl: --state: another carectl run (${process.pid}@${(await import('node:os')).hostname()}) holds s.state (s.state.lock) for over 60s; try again later\n`,
        ],
      );
      assert.ok(clock.slept.reduce((a, b) => a + b, 0) >= 60_000);
      assert.equal(model.requests.length, 0);
      assert.equal(existsSync(join(dir, 's.state')), false);
    });
  });

  it('a lock whose process is gone (a run killed) is taken over, and released after the run', async () => {
    await withModel(async (_model, run, dir) => {
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
      writeFileSync(join(dir, 's.state.lock'), `${gone}@${(await import('node:os')).hostname()} 1 x\n`);
      const result = await run([...LIST, '--state', 's.state']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(existsSync(join(dir, 's.state.lock')), false);
      assert.equal(existsSync(join(dir, 's.state')), true);
    });
  });
});

describe('a state file', () => {
  it('holding null, larger than any state, or marked later than now: exit 2, nothing sent, the file unchanged', async () => {
    await withModel(async (model, run, dir) => {
      const notState = 'carectl: --state: s.state is not a carectl state file; give another FILE or remove it to list everything again\n';
      writeFileSync(join(dir, 's.state'), 'null');
      const nullState = await run([...LIST, '--state', 's.state']);
      assert.deepEqual([nullState.code, nullState.stderr], [2, notState]);
      // Sparse: 40 MiB and 600 MiB (which reading whole would make a string too long to parse), refused by their size.
      for (const mib of [40, 600]) {
        writeFileSync(join(dir, 's.state'), '');
        truncateSync(join(dir, 's.state'), mib * 1024 ** 2);
        const huge = await run([...LIST, '--state', 's.state']);
        assert.deepEqual([huge.code, huge.stderr], [2, notState.replace('file;', `file (${mib}.0 MiB, more than any state holds);`)]);
      }
      // A mark a year ahead (a clock set forward for a run, then back).
      const later = join(dir, 'later.state');
      assert.equal((await run([...LIST, '--state', 'later.state'])).code, 0);
      const text = readFileSync(later, 'utf8').replace(/"(watermark|since)": "2026-06-30T/g, '"$1": "2027-06-30T');
      writeFileSync(later, text);
      const sent = model.requests.length;
      const now = await run([...LIST, '--state', 'later.state']);
      assert.equal(now.code, 2);
      assert.match(
        now.stderr,
        /^carectl: --state: later\.state marks 2027-06-30T\d\d:\d\d:\d\d UTC, later than now \(a clock set back\?\); give another FILE or remove it to list everything again\n$/,
      );
      assert.equal(model.requests.length, sent);
      assert.equal(readFileSync(later, 'utf8'), text);
    });
  });
});

describe('options naming one file', () => {
  it('-O X --resume-file X, --state S --resume-file S, --state T -O T: exit 2, nothing sent, the file kept', async () => {
    await withModel(async (model, run, dir) => {
      writeFileSync(join(dir, 'x'), 'kept\n');
      for (const [extra, message] of [
        [['-O', 'x', '--resume-file', 'x'], '--resume-file: names the same file as -O/--output-file (x)'],
        [['--state', 'x', '--resume-file', './x'], '--resume-file: names the same file as --state (./x)'],
        [['--state', 'x', '-O', join(dir, 'x')], '--state: names the same file as -O/--output-file (x)'],
      ] as Array<[string[], string]>) {
        const result = await run([...LIST, ...extra]);
        assert.deepEqual([result.code, result.stderr], [2, `carectl: ${message}; give each its own\n`]);
      }
      assert.equal(model.requests.length, 0);
      assert.equal(readFileSync(join(dir, 'x'), 'utf8'), 'kept\n');
    });
  });
});

describe('--resume-file that cannot be written', () => {
  it('a missing folder, a folder, a path under a file: exit 2 before anything is sent, as for -O', async () => {
    await withModel(async (model, run, dir) => {
      mkdirSync(join(dir, 'folder'));
      writeFileSync(join(dir, 'file'), '');
      for (const [given, message] of [
        ['missing/token', 'the folder missing does not exist'],
        ['folder', 'folder is a folder; give a file path'],
        ['file/token', 'the folder file does not exist'],
      ]) {
        const result = await run([...LIST, '--limit', '3', '--resume-file', given as string]);
        assert.deepEqual([result.code, result.stdout, result.stderr], [2, '', `carectl: --resume-file: ${message}\n`]);
        const fromEnv = await runCli([...LIST, '--limit', '3'], { env: { ...env(model), CARECTL_RESUME_FILE: given as string }, cwd: dir });
        assert.deepEqual([fromEnv.code, fromEnv.stderr], [2, `carectl: CARECTL_RESUME_FILE: ${message}\n`]);
      }
      assert.equal(model.requests.length, 0);
    });
  });

  it("CARECTL_RESUME_FILE or --resume-file holding another list's token: exit 2, nothing sent, the token kept; this command's is removed", async () => {
    await withModel(async (model, run, dir) => {
      const token = join(dir, 'token');
      const cut = await run([...LIST, '--limit', '3', '--resume-file', token]);
      assert.equal(cut.code, 0, cut.stderr);
      const held = readFileSync(token, 'utf8');
      const sent = model.requests.length;
      const another = 'holds the --resume token of another list; give this one another FILE, or remove it once that list needs no continuing';
      const other = await runCli(['conversations', 'list', '--status', 'closed', '-o', 'csv'], {
        env: { ...env(model), CARECTL_RESUME_FILE: 'token' },
        cwd: dir,
      });
      assert.deepEqual([other.code, other.stdout, other.stderr], [2, '', `carectl: CARECTL_RESUME_FILE: token ${another}\n`]);
      const flagged = await run(['conversations', 'list', '--status', 'closed', '--limit', '1', '--resume-file', 'token']);
      assert.deepEqual([flagged.code, flagged.stdout, flagged.stderr], [2, '', `carectl: --resume-file: token ${another}\n`]);
      assert.equal(model.requests.length, sent);
      assert.equal(readFileSync(token, 'utf8'), held);
      const rest = await run([...LIST, '--resume', held.trim().split(' ')[0] as string, '--resume-file', token]);
      assert.equal(rest.code, 0, rest.stderr);
      assert.equal(existsSync(token), false);
    });
  });
});
