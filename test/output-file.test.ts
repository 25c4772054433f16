/**
 * -O/--output-file: the output lands whole or not at all (a temporary file beside FILE, renamed
 * into place), for lists and `carectl api`; a failure or a stop leaves FILE as it was and no
 * temporary file behind; a folder that cannot take it is exit 2 before anything is sent.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiRequests, openSandbox, runCli, scratchFolder } from './helpers.js';
import { ModelServer, NOW, modelData } from './model-server.js';
import { fakeClock } from './helpers.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { PartialFile } from '../src/http/partial-file.js';

const folder = (): string => scratchFolder('carectl-out-');

describe('-O/--output-file', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(() => sandbox.close());

  it('writes what stdout would hold into FILE, with the mode of a new file, and nothing else', async () => {
    const dir = folder();
    const plain = await runCli(['tags', 'list', '-o', 'csv'], { sandbox });
    const result = await runCli(['tags', 'list', '-o', 'csv', '-O', 'tags.csv'], { sandbox, cwd: dir });
    assert.deepEqual([result.code, result.stdout, result.stderr], [0, '', '']);
    assert.equal(readFileSync(join(dir, 'tags.csv'), 'utf8'), plain.stdout);
    assert.equal(statSync(join(dir, 'tags.csv')).mode & 0o777, 0o666 & ~process.umask());
    assert.deepEqual(readdirSync(dir), ['tags.csv']);
  });

  it('takes `carectl api` too, and replaces an existing FILE', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'tag.json'), 'old\n');
    const plain = await runCli(['api', 'v1.3/tags/7003'], { sandbox });
    const result = await runCli(['api', 'v1.3/tags/7003', '--output-file', 'tag.json'], { sandbox, cwd: dir });
    assert.deepEqual([result.code, result.stdout, result.stderr], [0, '', '']);
    assert.equal(readFileSync(join(dir, 'tag.json'), 'utf8'), plain.stdout);
    assert.deepEqual(readdirSync(dir), ['tag.json']);
  });

  it('a folder that does not exist, or a FILE that is a folder: exit 2, nothing sent', async () => {
    const dir = folder();
    const sent = apiRequests(sandbox).length;
    const missing = await runCli(['tags', 'list', '-O', 'no/such/tags.tsv'], { sandbox, cwd: dir });
    assert.deepEqual([missing.code, missing.stderr], [2, 'carectl: -O/--output-file: the folder no/such does not exist\n']);
    const isFolder = await runCli(['tags', 'list', '-O', '.'], { sandbox, cwd: dir });
    assert.deepEqual([isFolder.code, isFolder.stderr], [2, 'carectl: -O/--output-file: . is a folder; give a file path\n']);
    const notTaken = await runCli(['tags', 'get', '7001', '-O', 'x'], { sandbox, cwd: dir });
    assert.deepEqual([notTaken.code, notTaken.stderr], [2, 'carectl: --output-file: `carectl tags get` does not take it\n']);
    assert.equal(apiRequests(sandbox).length, sent);
    assert.deepEqual(readdirSync(dir), []);
  });

  it('a full device: exit 1, one line', async () => {
    const result = await runCli(['tags', 'list', '-O', '/dev/full'], { sandbox });
    assert.deepEqual([result.code, result.stderr], [1, 'carectl: -O/--output-file: cannot write /dev/full: no space left on device (ENOSPC)\n']);
  });
});

describe('-O with a list that fails or is stopped part-way', () => {
  const env = (model: ModelServer) => ({
    CARECTL_BASE_URL: model.baseUrl,
    CARECTL_USER: 'bot',
    CARECTL_PASSWORD: 'model-secret',
    XDG_CONFIG_HOME: '/nonexistent/x',
  });
  const args = [
    'conversations',
    'list',
    '--status',
    'unread',
    '-o',
    'ndjson',
    '--page-size',
    '4',
    '--retries',
    '0',
    '-O',
    'out.ndjson',
    '--state',
    'state.json',
  ];

  it('a failure leaves FILE and the state as they were, and no temporary file', async () => {
    const model = new ModelServer(modelData(40, ['year'], 3), { reading: 'whole-day', links: 'keyset', failWhen: (params) => params.has('skip') });
    await model.start();
    try {
      const dir = folder();
      writeFileSync(join(dir, 'out.ndjson'), 'yesterday\n');
      const clock = fakeClock(NOW);
      const result = await runCli(args, { env: env(model), cwd: dir, now: clock.now, sleep: clock.sleep });
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr,
        'carectl: down (HTTP 500); the list stopped after 4 records, none of them in out.ndjson, which is left as it was: the state is unchanged, so the same command lists them again\n',
      );
      assert.equal(readFileSync(join(dir, 'out.ndjson'), 'utf8'), 'yesterday\n');
      assert.deepEqual(readdirSync(dir), ['out.ndjson']);
    } finally {
      await model.close();
    }
  });

  it('FILE or the state made a folder while the list runs: one line, exit 1, the state left as it was', async () => {
    for (const [taken, stderr] of [
      ['out.ndjson', 'carectl: -O/--output-file: cannot write out.ndjson: illegal operation on a directory (EISDIR)\n'],
      ['state.json', 'carectl: --state: cannot write state.json: illegal operation on a directory (EISDIR); the next run lists these records again\n'],
    ]) {
      const dir = folder();
      const model = new ModelServer(modelData(40, ['year'], 3), {
        reading: 'whole-day',
        links: 'keyset',
        failWhen: (params) => {
          if (params.has('skip')) mkdirSync(join(dir, taken as string), { recursive: true });
          return false;
        },
      });
      await model.start();
      try {
        const clock = fakeClock(NOW);
        const result = await runCli(args, { env: env(model), cwd: dir, now: clock.now, sleep: clock.sleep });
        assert.deepEqual([result.code, result.stderr], [1, stderr]);
        assert.deepEqual(readdirSync(dir).sort(), taken === 'out.ndjson' ? ['out.ndjson'] : ['out.ndjson', 'state.json']);
        if (taken === 'state.json') assert.deepEqual(readdirSync(join(dir, 'state.json')), []);
      } finally {
        await model.close();
      }
    }
  });

  it('a stop (Ctrl-C) leaves FILE as it was: exit 130', async () => {
    const stop = new AbortController();
    const model = new ModelServer(modelData(40, ['year'], 3), {
      reading: 'whole-day',
      links: 'keyset',
      failWhen: (params) => {
        if (params.has('skip')) stop.abort();
        return false;
      },
    });
    await model.start();
    try {
      const dir = folder();
      const clock = fakeClock(NOW);
      const result = await runCli(args, { env: env(model), cwd: dir, now: clock.now, sleep: clock.sleep, signal: stop.signal });
      assert.equal(result.code, 130, result.stderr);
      assert.deepEqual(readdirSync(dir), []);
    } finally {
      await model.close();
    }
  });
});

describe('PartialFile onto a device', () => {
  it('copies its bytes into the device (it is read back for that) and leaves no file', async () => {
    const dir = folder();
    const partial = await PartialFile.create(dir, '.carectl');
    await partial.write(Buffer.from('whole\n'));
    await partial.commit('/dev/null');
    assert.deepEqual(readdirSync(dir), []);
  });
});
