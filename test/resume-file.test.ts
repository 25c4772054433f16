/**
 * --resume-file FILE (and CARECTL_RESUME_FILE): the token of a list that stopped early is written
 * where a script looks for it, and removed once the list completes.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, runCli, scratchFolder } from './helpers.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await openSandbox();
});
after(() => sandbox.close());

const LIST = ['conversations', 'list', '--status', 'closed', '--columns', 'id', '--page-size', '5', '--retries', '0'];
const tokenIn = (stderr: string): string | undefined => /--resume (\S+)/.exec(stderr)?.[1];

describe('--resume-file', () => {
  test('--limit writes the token the notice gives; the run it continues completes the list and removes the file', async () => {
    const file = join(scratchFolder('carectl-resume-'), 'token');
    const whole = await runCli(LIST, { sandbox });
    const first = await runCli([...LIST, '--limit', '7', '--resume-file', file], { sandbox });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(readFileSync(file, 'utf8'), `${tokenIn(first.stderr)}\n`);
    const rest = await runCli([...LIST, '--no-header', '--resume', readFileSync(file, 'utf8').trim(), '--resume-file', file], { sandbox });
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(existsSync(file), false, 'a list that completes removes the file');
    assert.equal(first.stdout + rest.stdout, whole.stdout);
  });

  test('CARECTL_RESUME_FILE: a list that fails part-way writes the token of its error line', async () => {
    const file = join(scratchFolder('carectl-resume-'), 'token');
    sandbox.setFaults({ failListAfterPages: 3 });
    let failed;
    try {
      failed = await runCli(LIST, { sandbox, env: { CARECTL_RESUME_FILE: file } });
    } finally {
      sandbox.setFaults(undefined);
    }
    assert.equal(failed.code, 1, failed.stderr);
    const token = tokenIn(failed.stderr);
    assert.ok(token, failed.stderr);
    assert.equal(readFileSync(file, 'utf8'), `${token}\n`);
  });

  test("a command that is not a list refuses the flag and leaves the variable's file alone; nothing is sent", async () => {
    const file = join(scratchFolder('carectl-resume-'), 'token');
    writeFileSync(file, 'earlier\n');
    const from = sandbox.requests.length;
    const flag = await runCli(['tags', 'get', '7001', '--resume-file', file], { sandbox });
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /^carectl: --resume-file: `carectl tags get` does not take it\n$/);
    assert.equal(apiRequests(sandbox, from).length, 0);
    const env = await runCli(['tags', 'get', '7001'], { sandbox, env: { CARECTL_RESUME_FILE: file } });
    assert.equal(env.code, 0, env.stderr);
    assert.equal(readFileSync(file, 'utf8'), 'earlier\n');
  });

  test(
    'a folder that cannot be written: exit 2, nothing sent (as for -O)',
    { skip: process.getuid?.() === 0 ? 'root writes into any folder' : false },
    async () => {
      const folder = scratchFolder('carectl-resume-');
      chmodSync(folder, 0o500);
      const from = sandbox.requests.length;
      const result = await runCli([...LIST, '--limit', '3', '--resume-file', join(folder, 'token')], { sandbox });
      assert.equal(result.code, 2);
      assert.match(result.stderr, /^carectl: --resume-file: cannot write to .*token: .*\n$/);
      assert.equal(apiRequests(sandbox, from).length, 0);
    },
  );

  test('a regular file of text that is no token (--resume-file out.ndjson) is refused before the first page: exit 2, nothing sent, kept', async () => {
    const folder = scratchFolder('carectl-resume-');
    const file = join(folder, 'out.ndjson');
    writeFileSync(file, '{"id":"1"}\n');
    const from = sandbox.requests.length;
    const result = await runCli([...LIST, '--limit', '3', '--resume-file', 'out.ndjson'], { sandbox, cwd: folder });
    assert.deepEqual(
      [result.code, result.stdout, result.stderr],
      [2, '', 'carectl: --resume-file: out.ndjson holds something other than a --resume token, which an early stop would replace; give another FILE\n'],
    );
    assert.equal(apiRequests(sandbox, from).length, 0);
    assert.equal(readFileSync(file, 'utf8'), '{"id":"1"}\n');
  });

  test("an empty file, or one line that may be an older release's token, is FILE as before: replaced on an early stop, kept when the list completes", async () => {
    const folder = scratchFolder('carectl-resume-');
    for (const held of ['', 'MnxvbGRlcg\n']) {
      const file = join(folder, 'token');
      writeFileSync(file, held);
      const complete = await runCli([...LIST, '--resume-file', file], { sandbox });
      assert.equal(complete.code, 0, complete.stderr);
      assert.equal(readFileSync(file, 'utf8'), held);
      const stopped = await runCli([...LIST, '--limit', '3', '--resume-file', file], { sandbox });
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.equal(readFileSync(file, 'utf8'), `${tokenIn(stopped.stderr)}\n`);
    }
  });

  test('through a symbolic link: the token goes to its target, and a list that completes removes the target, so `test -f LINK` says complete', async () => {
    const folder = scratchFolder('carectl-resume-');
    const [link, target] = [join(folder, 'link'), join(folder, 'target')];
    symlinkSync(target, link);
    const stopped = await runCli([...LIST, '--limit', '3', '--resume-file', link], { sandbox });
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(readFileSync(target, 'utf8'), `${tokenIn(stopped.stderr)}\n`);
    const rest = await runCli([...LIST, '--resume', tokenIn(stopped.stderr) as string, '--resume-file', link], { sandbox });
    assert.equal(rest.code, 0, rest.stderr);
    assert.deepEqual([existsSync(link), existsSync(target), readlinkSync(link)], [false, false, target], 'the link stays, dangling');
    const again = await runCli([...LIST, '--limit', '3', '--resume-file', link], { sandbox });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(readFileSync(target, 'utf8'), `${tokenIn(again.stderr)}\n`);
  });

  test('a FIFO named as FILE gets the token written into it and stays a FIFO; a list that completes leaves it', async () => {
    const fifo = join(scratchFolder('carectl-resume-'), 'fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = spawn('cat', [fifo]);
    let read = '';
    reader.stdout.on('data', (chunk: Buffer) => (read += chunk.toString()));
    const ended = new Promise((resolve) => reader.on('close', resolve));
    const stopped = await runCli([...LIST, '--limit', '3', '--resume-file', fifo], { sandbox });
    assert.equal(stopped.code, 0, stopped.stderr);
    try {
      assert.ok(lstatSync(fifo).isFIFO(), 'the FIFO is still there');
    } finally {
      // A FIFO renamed over leaves its reader waiting for a writer that never comes.
      if (!lstatSync(fifo).isFIFO()) reader.kill();
    }
    await ended;
    assert.equal(read, `${tokenIn(stopped.stderr)}\n`);
    const complete = await runCli([...LIST, '--resume-file', fifo], { sandbox });
    assert.equal(complete.code, 0, complete.stderr);
    assert.ok(lstatSync(fifo).isFIFO(), 'the FIFO is still there');
  });

  test('a FIFO that nobody reads is said on stderr at once, not waited on, and the list that stopped at --limit exits 1', async () => {
    // A script reads a missing token as "complete": a token not written must not exit 0.
    const fifo = join(scratchFolder('carectl-resume-'), 'fifo');
    execFileSync('mkfifo', [fifo]);
    const result = await runCli([...LIST, '--limit', '3', '--resume-file', fifo], { sandbox });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout.trim().split('\n').length, 4, 'the 3 records and the header were written');
    assert.match(result.stderr, /^stopped at --limit 3; more may follow: run the same command with --resume [A-Za-z0-9_-]+$/m);
    assert.match(result.stderr, /^carectl: --resume-file: cannot write .*fifo: .*\(ENXIO\)$/m);
    assert.ok(lstatSync(fifo).isFIFO());
  });

  test(
    'a character device named as FILE (a /dev/null of its own) is written into, never renamed over nor removed',
    { skip: process.getuid?.() === 0 ? false : 'mknod of a device needs root' },
    async () => {
      const device = join(scratchFolder('carectl-resume-'), 'null');
      execFileSync('mknod', ['-m', '666', device, 'c', '1', '3']);
      const stopped = await runCli([...LIST, '--limit', '3', '--resume-file', device], { sandbox });
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.doesNotMatch(stopped.stderr, /--resume-file: cannot/);
      assert.ok(lstatSync(device).isCharacterDevice(), 'an early stop leaves the device a device');
      const complete = await runCli([...LIST, '--resume-file', device], { sandbox });
      assert.equal(complete.code, 0, complete.stderr);
      assert.ok(lstatSync(device).isCharacterDevice(), 'a list that completes leaves the device');
    },
  );
});
