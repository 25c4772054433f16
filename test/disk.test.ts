/**
 * The disk (issue 24 item 8): every write's byte count is checked, a full disk fails with no file
 * left, a symbolic link is written through to its target, and a device node or FIFO is written
 * straight to, never replaced. End to end against the sandbox's report download.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, createReadStream, openSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, beforeEach, describe, test, type TestContext } from 'node:test';
import { wholeWritesStream, writeWhole } from '../src/core/whole-writes.js';
import { FIXTURES, reportFileContent, type Sandbox } from '../src/sandbox/index.js';
import { fakeClock, openSandbox, runCli, sandboxEnv } from './helpers.js';
import { OutputError } from '../src/core/errors.js';
import { StreamSink } from '../src/core/stream-sink.js';
import { describeRun, useSandboxShell } from './shell.js';

const ID = FIXTURES.reports.generatedId;
let sandbox: Sandbox;
let folder: string;
let expected: Buffer;

before(async () => {
  sandbox = await openSandbox();
  expected = reportFileContent(sandbox.data.byId.reports.get(ID)!, 'csv');
});
after(() => sandbox.close());
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'carectl-disk-'));
});
afterEach(() => rm(folder, { recursive: true, force: true }));

/** Runs `body` with a 16 KiB tmpfs mounted in the test's folder; skipped, saying why, where none can be mounted (not root). */
async function onSmallTmpfs(t: TestContext, body: (mount: string) => Promise<void>): Promise<void> {
  const mount = join(folder, 'small');
  await mkdir(mount);
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', mount], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    const reason = `cannot mount a small tmpfs here (${(mounted.stderr || mounted.error?.message || 'mount failed').trim()}): the full-disk test is skipped`;
    console.log(reason);
    return t.skip(reason);
  }
  try {
    await body(mount);
  } finally {
    spawnSync('umount', [mount]);
  }
}

function save(args: string[]): ReturnType<typeof runCli> {
  const clock = fakeClock();
  return runCli(['reports', 'download', ID, ...args], { sandbox, cwd: folder, now: clock.now, sleep: clock.sleep });
}

describe('writes are checked', () => {
  test('a short write is continued; one that takes nothing fails with ENOSPC', async () => {
    const taken: string[] = [];
    const shortThenFull = (room: number) => ({
      write: async (chunk: Buffer, offset: number, length: number) => {
        const bytesWritten = Math.min(length, room);
        room -= bytesWritten;
        taken.push(chunk.subarray(offset, offset + bytesWritten).toString());
        return { bytesWritten, buffer: chunk };
      },
    });
    assert.equal(await writeWhole(shortThenFull(100) as never, Buffer.from('abcdef'), 10), 16);
    taken.length = 0;
    let room = 2;
    const short = {
      write: async (chunk: Buffer, offset: number, length: number) => {
        const bytesWritten = Math.min(length, room, 2);
        room = 2;
        taken.push(chunk.subarray(offset, offset + bytesWritten).toString());
        return { bytesWritten, buffer: chunk };
      },
    };
    assert.equal(await writeWhole(short as never, Buffer.from('abcde'), 0), 5);
    assert.deepEqual(taken, ['ab', 'cd', 'e']);
    await assert.rejects(writeWhole(shortThenFull(3) as never, Buffer.from('abcdef'), 0), { code: 'ENOSPC' });
  });
});

describe('stdout redirected into a file', () => {
  test('a write the disk takes only part of (no error, as libuv reports it) fails the output, never passes for whole', async () => {
    // As libuv's write on a disk that fills: the bytes that fit, then ENOSPC for the rest.
    let room = 300;
    const filling = {
      write: async (_chunk: Buffer, _offset: number, length: number) => {
        if (room === 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
        const bytesWritten = Math.min(length, room);
        room -= bytesWritten;
        return { bytesWritten };
      },
    };
    const stream = wholeWritesStream(filling);
    // As process.ts does: the error reaches the writer through StreamSink; the event must not crash.
    stream.on('error', () => undefined);
    const sink = new StreamSink(stream, undefined);
    await sink.write('x'.repeat(200));
    await sink.write('y'.repeat(200));
    await assert.rejects(sink.end(), (err: unknown) => err instanceof OutputError && /ENOSPC/.test(err.message));
  });

  test('carectl api > FILE on a 16 KiB tmpfs: exit 1 and an ENOSPC line (it exited 0 with the file cut at 16 KiB)', async (t) => {
    // One reply of about 30 KB, written in one write that the disk takes only part of.
    const argv = ['api', 'v1.3/conversations?is_priority=false&page_size=50&fields=status,tags,author,channels,assigned_to,handling_times,close_reason'];
    const whole = await runCli(argv, { sandbox });
    assert.ok(whole.stdout.length > 20 * 1024, `the reply (${whole.stdout.length} bytes) must not fit`);
    await onSmallTmpfs(t, async (mount) => {
      const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'carectl.js');
      const fd = openSync(join(mount, 'reply.json'), 'w');
      // The real process (its stdout is a stream onto a file), spawned without blocking: the sandbox answers it from here.
      const child = spawn(process.execPath, [bin, ...argv], {
        env: { PATH: process.env.PATH ?? '', ...sandboxEnv(sandbox) },
        stdio: ['ignore', fd, 'pipe'],
        timeout: 15_000,
      });
      closeSync(fd);
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(status, 1, stderr);
      assert.equal(stderr, 'carectl: cannot write the output: no space left on device (ENOSPC)\n');
    });
  });
});

describe('onto a symbolic link', () => {
  test('--file LINK writes through to the file it names, and the link stays', async () => {
    await mkdir(join(folder, 'real'));
    await writeFile(join(folder, 'real', 'r.csv'), 'old');
    await symlink(join('real', 'r.csv'), join(folder, 'link.csv'));
    const result = await save(['--file', 'link.csv']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`^report ${ID}: saved [0-9.]+ KiB to link\\.csv\n$`));
    assert.ok((await lstat(join(folder, 'link.csv'))).isSymbolicLink());
    assert.equal(await readlink(join(folder, 'link.csv')), join('real', 'r.csv'));
    assert.deepEqual(await readFile(join(folder, 'real', 'r.csv')), expected);
    assert.deepEqual((await readdir(join(folder, 'real'))).sort(), ['r.csv']);
  });

  test('a link to a file not there yet creates it', async () => {
    await mkdir(join(folder, 'real'));
    await symlink(join(folder, 'real', 'new.csv'), join(folder, 'link.csv'));
    const result = await save(['--file', 'link.csv']);
    assert.equal(result.code, 0, result.stderr);
    assert.ok((await lstat(join(folder, 'link.csv'))).isSymbolicLink());
    assert.deepEqual(await readFile(join(folder, 'real', 'new.csv')), expected);
  });

  test('into a folder whose report-ID.csv is a link: written through', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'carectl-disk-target-'));
    try {
      await symlink(join(elsewhere, 'kept.csv'), join(folder, `report-${ID}.csv`));
      const result = await save(['--file', '.']);
      assert.equal(result.code, 0, result.stderr);
      assert.ok((await lstat(join(folder, `report-${ID}.csv`))).isSymbolicLink());
      assert.deepEqual(await readFile(join(elsewhere, 'kept.csv')), expected);
      assert.deepEqual(await readdir(folder), [`report-${ID}.csv`]);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('onto a device node or a FIFO: written straight, never replaced', () => {
  test('/dev/null stays the device', async () => {
    const result = await save(['--file', '/dev/null']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /saved .* to \/dev\/null\n$/);
    assert.ok((await lstat('/dev/null')).isCharacterDevice());
  });

  test('/dev/full: exit 1 and one line naming the device and ENOSPC, without advice to meet it again', async () => {
    const result = await save(['--file', '/dev/full']);
    assert.equal(result.code, 1);
    assert.equal(result.stderr, 'carectl: cannot write /dev/full: no space left on device (ENOSPC); nothing was saved\n');
    assert.equal(result.stderr.split('\n').length, 2, result.stderr);
    assert.ok((await lstat('/dev/full')).isCharacterDevice());
  });

  test('a FIFO: its reader gets the file, and it is still a FIFO', async (t) => {
    const fifo = join(folder, 'pipe');
    if (spawnSync('mkfifo', [fifo]).status !== 0) return t.skip('mkfifo is not available');
    const chunks: Buffer[] = [];
    const reading = new Promise<void>((resolve, reject) => {
      createReadStream(fifo)
        .on('data', (c) => chunks.push(c as Buffer))
        .on('end', resolve)
        .on('error', reject);
    });
    const result = await save(['--file', fifo]);
    await reading;
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(Buffer.concat(chunks), expected);
    assert.ok((await lstat(fifo)).isFIFO());
  });
});

describe('a full file system', () => {
  test('a 16 KiB tmpfs: exit 1, an ENOSPC line, and no file left', async (t) => {
    await onSmallTmpfs(t, async (mount) => {
      assert.ok(expected.length > 16 * 1024, `the report (${expected.length} bytes) must not fit`);
      const result = await save(['--file', join(mount, 'r.csv')]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        /^carectl: cannot write .*r\.csv: no space left on device \(ENOSPC\); nothing was saved; try again with: carectl reports download 60001 --file .*\n$/,
      );
      assert.deepEqual(await readdir(mount), []);
    });
  });
});
describe('the real process with stdout redirected to a file', () => {
  const shell = useSandboxShell();

  test('writes the same bytes as into a pipe (json documents, delimited lines), in parallel and not', async () => {
    for (const format of ['ndjson', 'csv', 'json']) {
      for (const parallel of ['1', '8']) {
        const line = `carectl conversations list --fields status,tags,author -o ${format} --parallel ${parallel}`;
        const [piped, filed] = [await shell().run(`${line} | cat`), await shell().run(`${line} > out && cat out`)];
        assert.equal(piped.code, 0, describeRun(line, piped));
        assert.equal(filed.code, 0, describeRun(line, filed));
        assert.ok(piped.stdout.length > 1000, `${line}: ${piped.stdout.length} bytes`);
        assert.equal(filed.stdout, piped.stdout, line);
      }
    }
  });
});
