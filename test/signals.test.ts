/**
 * Pipes and signals with real child processes (`node bin/carectl.js`, built into dist/): a
 * reader that leaves early, Ctrl-C during a list and during a report wait, and the foreground
 * `carectl sandbox --faults`. The sandboxes the children talk to run in this test process, so
 * their request logs show what the children did.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { isBrokenPipe } from '../src/core/errors.js';
import { createStopper, STOPPED_AT_ONCE } from '../src/process.js';
import { FIXTURES } from '../src/sandbox/index.js';
import { apiRequests, fakeClock, openSandbox, patchedIds, runCli, sandboxEnv } from './helpers.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(ROOT, 'bin', 'carectl.js');

type Child = ChildProcessByStdio<null, Readable, Readable>;

/** When a child is taken for hung and killed (SIGKILL), failing its test. */
const HUNG_MS = 120_000;

/** The state letter of each thread of a process (R running or runnable, S sleeping, …). */
function threadStates(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((task) => {
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  });
}

/** The CPU time a process has used, in clock ticks (user and system). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Whether `signal` is still pending for the process, not yet taken by its handler. */
function pending(pid: number, signal: number): boolean {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return ['SigPnd', 'ShdPnd'].some((key) => (BigInt(`0x${new RegExp(`^${key}:\\s*(\\w+)$`, 'm').exec(status)![1]}`) >> BigInt(signal - 1)) & 1n);
}

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts carectl; `watch` sees the output so far after every chunk, and may act on the child. */
function carectl(
  argv: string[],
  env: Record<string, string>,
  watch?: (out: { stdout: string; stderr: string }, child: Child) => void,
): { child: Child; done: Promise<Finished> } {
  const child = spawn(process.execPath, [BIN, ...argv], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', XDG_CONFIG_HOME: '/nonexistent/carectl-test-config', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A hung child fails its test instead of the whole run: a guard far above any run on a loaded
    // machine, never a measure of speed.
    timeout: HUNG_MS,
    killSignal: 'SIGKILL',
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    out.stdout += chunk.toString();
    watch?.(out, child);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    out.stderr += chunk.toString();
    watch?.(out, child);
  });
  const done = new Promise<Finished>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, ...out })));
  return { child, done };
}

/** Lines of ndjson output that was cut off: every one whole, and the output ends with one. */
function wholeLines(stdout: string): string[] {
  assert.ok(stdout.endsWith('\n'), `stdout ends with a complete line: ${JSON.stringify(stdout.slice(-40))}`);
  const lines = stdout.slice(0, -1).split('\n');
  for (const line of lines) JSON.parse(line);
  return lines;
}

let sandbox: Sandbox;
before(async () => {
  sandbox = await openSandbox({ conversations: 120, reportDelayMs: 10 * 60_000 });
});
after(() => sandbox.close());

describe('| head -1', () => {
  test('carectl --sandbox conversations list --status unread | head -1: exit 0, nothing on stderr', async () => {
    const { done } = carectl(['--sandbox', 'conversations', 'list', '--status', 'unread'], {}, (out, child) => {
      if (out.stdout.includes('\n')) child.stdout.destroy();
    });
    const result = await done;
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^id\tstatus\t/);
  });

  test('a reader that leaves mid-list stops the list quietly, without reading the rest', async () => {
    // Slow pages, so the child is still listing when the reader goes.
    sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 20 });
    const mark = sandbox.requests.length;
    const { done } = carectl(['conversations', 'list', '-o', 'ndjson', '--page-size', '5'], sandboxEnv(sandbox), (out, child) => {
      if (out.stdout.includes('\n')) child.stdout.destroy();
    });
    const result = await done;
    sandbox.setFaults(undefined);
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    // 120 conversations in pages of 5 is at least 24 pages; the child stopped before their end
    // (with requests in parallel, having read a few pages ahead within its budget).
    assert.ok(apiRequests(sandbox, mark).length < 24, `${apiRequests(sandbox, mark).length} pages requested`);
  });

  test('a reader that leaves while the next page is in flight ends the process at once: nothing is retried', async () => {
    // With 10 retries, retrying on the closed connection pool would back off for over a minute.
    const { done } = carectl(
      ['--verbose', '--retries', '10', 'conversations', 'list', '-o', 'ndjson', '--page-size', '5'],
      sandboxEnv(sandbox),
      (out, child) => {
        if (out.stdout.includes('\n')) child.stdout.destroy();
      },
    );
    const result = await done;
    assert.equal(result.signal, null, 'ended by itself, not by the test timeout');
    assert.equal(result.code, 0);
    assert.doesNotMatch(result.stderr, /retrying/);
  });
});

describe('| head -1 after a write batch', () => {
  test("every id is still updated, quietly, and the exit code is the batch's own", async () => {
    // Slow replies, so the reader leaves while most ids are still to be sent.
    sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 20 });
    const { data } = sandbox;
    const manageable = data.conversations.filter((c) => c.channel_ids.every((id) => data.byId.channels.get(id)?.can_manage_conversations));
    const ids = [...manageable.slice(-20).map((c) => c.id), FIXTURES.readOnlyConversationId];
    const mark = sandbox.requests.length;
    const { done } = carectl(['conversations', 'update', ...ids, '--status', 'on_hold', '--tags', ''], sandboxEnv(sandbox), (out, child) => {
      if (out.stdout.includes('\n')) child.stdout.destroy();
    });
    const result = await done;
    sandbox.setFaults(undefined);
    const patched = patchedIds(apiRequests(sandbox, mark));
    assert.deepEqual([...patched].sort(), [...ids].sort());
    // The locked conversation's 403: the failure is said, as it would be with the rows read.
    assert.equal(result.code, 3);
    assert.match(result.stderr, new RegExp(`^carectl: 1 of 21 updates failed \\(first: ${FIXTURES.readOnlyConversationId}: .*\\(HTTP 403\\)\\)\\n$`));
  });

  test('a dry run reads every id all the same, and an id it cannot read still sets the exit code', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 20 });
    const ids = [...Array.from({ length: 20 }, (_, i) => String(500070 + i)), '999999'];
    // A table sends its rows at the end: the reader leaves then.
    for (const format of [[], ['-o', 'json'], ['-o', 'table']]) {
      const mark = sandbox.requests.length;
      const { child, done } = carectl(
        ['conversations', 'update', ...ids, '--status', 'on_hold', '--dry-run', ...format],
        sandboxEnv(sandbox),
        (out, running) => {
          if (out.stdout.includes('\n')) running.stdout.destroy();
        },
      );
      if (format[1] === 'table') child.stdout.destroy();
      const result = await done;
      const read = apiRequests(sandbox, mark)
        // Each conversation's tags (after the tags list, read once to name the inactive ones).
        .filter((r) => r.method === 'GET' && r.url.startsWith('/v1.3/conversations/'))
        .map((r) => new URL(r.url, 'http://x').pathname.split('/').pop());
      assert.deepEqual([...read].sort(), [...ids].sort(), format.join(' '));
      assert.equal(result.code, 4, result.stderr);
      assert.match(result.stderr, /carectl: 1 of 21 conversations could not be read \(first: 999999: .*\(HTTP 404\)\)\n$/);
    }
    sandbox.setFaults(undefined);
  });
});

describe('output that cannot be written', () => {
  for (const argv of [['tags', 'list', '-o', 'json'], ['--version'], ['--help'], ['help', 'conversations'], ['conversations']]) {
    test(`a full disk (${argv.join(' ')}): exit 1 with one carectl line, no stack trace`, async () => {
      const full = openSync('/dev/full', 'w');
      try {
        const child = spawn(process.execPath, [BIN, ...argv], {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', ...sandboxEnv(sandbox) },
          stdio: ['ignore', full, 'pipe'],
          timeout: 15_000,
        });
        let stderr = '';
        child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const [code] = (await once(child, 'close')) as [number | null];
        assert.equal(stderr, 'carectl: cannot write the output: no space left on device (ENOSPC)\n');
        assert.equal(code, 1);
      } finally {
        closeSync(full);
      }
    });
  }

  test('help to a reader that went away ends quietly, exit 0', async () => {
    const { child, done } = carectl(['--help'], sandboxEnv(sandbox), () => undefined);
    child.stdout.destroy();
    const result = await done;
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
  });
});

describe('Ctrl-C (SIGINT)', () => {
  test('during a long list: exit 130, whole lines only, and a --resume token that continues it', async () => {
    const argv = ['conversations', 'list', '-o', 'ndjson', '--page-size', '3'];
    const clean = await runCli(argv, { sandbox });
    assert.equal(clean.code, 0);

    sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 60 });
    let sent = false;
    const { done } = carectl(argv, sandboxEnv(sandbox), (out, child) => {
      if (!sent && out.stdout.split('\n').length > 4) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    const result = await done;
    sandbox.setFaults(undefined);
    assert.equal(result.code, 130, result.stderr);
    const lines = wholeLines(result.stdout);
    assert.ok(lines.length >= 4 && lines.length < 120, `${lines.length} records before the interrupt`);
    assert.match(result.stderr, /^carectl: interrupted; the list stopped after \d+ records?: to continue, run the same command with --resume \S+$/m);

    const token = /--resume (\S+)/.exec(result.stderr)?.[1];
    assert.ok(token, result.stderr);
    const rest = await runCli([...argv, '--resume', token], { sandbox });
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(result.stdout + rest.stdout, clean.stdout);
  });

  test('while reports create --wait is waiting: exit 130, the report id and `carectl reports wait ID`', async () => {
    const mark = sandbox.requests.length;
    let sent = false;
    const account = String(sandbox.data.accounts[0]!.id);
    const { done } = carectl(['reports', 'create', '--account', account, '--from', '7d', '--to', 'yesterday', '--wait'], sandboxEnv(sandbox), (out, child) => {
      // The first state line means the POST is done and the polling has begun.
      if (!sent && /queued/.test(out.stderr)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    const result = await done;
    assert.equal(result.code, 130, result.stderr);
    const posts = apiRequests(sandbox, mark).filter((r) => r.method === 'POST');
    assert.equal(posts.length, 1);
    const id = sandbox.data.reports.at(-1)!.id;
    assert.match(result.stderr, new RegExp(`report ${id}\\b`));
    assert.ok(result.stderr.includes(`carectl reports wait ${id}`), result.stderr);
    assert.equal(result.stdout, '');
  });
});

describe('a reader that went away', () => {
  test('a closed pipe (EPIPE) and a hung-up terminal (EIO) end output quietly; other errors do not', () => {
    assert.equal(isBrokenPipe(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })), true);
    assert.equal(isBrokenPipe(Object.assign(new Error('write EIO'), { code: 'EIO' })), true);
    assert.equal(isBrokenPipe(Object.assign(new Error('no space'), { code: 'ENOSPC' })), false);
    assert.equal(isBrokenPipe(undefined), false);
  });
});

describe('the stopper behind the signal handlers', () => {
  test('a first signal stops cleanly; a second cleans up and ends at once with its own code', () => {
    const calls: string[] = [];
    const stopper = createStopper({
      abort: () => calls.push('abort'),
      cleanUp: () => calls.push('clean up'),
      say: (line) => calls.push(line),
      exit: (code) => calls.push(`exit ${code}`),
    });
    assert.equal(stopper.exitCode(0), 0, 'no signal: the code stands');
    stopper.stop('SIGTERM');
    assert.deepEqual(calls, ['abort']);
    assert.equal(stopper.exitCode(130), 143, 'a clean stop says which signal asked');
    assert.equal(stopper.exitCode(1), 1, 'a failure while stopping keeps its code');
    stopper.stop('SIGINT');
    assert.deepEqual(calls, ['abort', 'clean up', STOPPED_AT_ONCE, 'exit 130']);
  });

  test('a second Ctrl-C during a batch ends it at once, saying that updates under way may have been applied', async () => {
    // The updates under way never end by themselves: only the second signal can end the run.
    sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 10 * HUNG_MS });
    let first: (() => void) | undefined;
    const sent = new Promise<void>((resolve) => (first = resolve));
    const ids = Array.from({ length: 10 }, (_, i) => String(500060 + i));
    const { child, done } = carectl(
      ['--verbose', 'conversations', 'update', ...ids, '--status', 'on_hold', '--tags', ''],
      sandboxEnv(sandbox),
      (out, running) => {
        if (first && out.stderr.includes('> PATCH')) {
          running.kill('SIGINT');
          first();
          first = undefined;
        }
      },
    );
    await sent;
    // The second once the first is taken: two signals pending at once are one to the process.
    while (child.exitCode === null && pending(child.pid!, constants.signals.SIGINT)) await new Promise((resolve) => setTimeout(resolve, 10));
    child.kill('SIGINT');
    const result = await done;
    sandbox.setFaults(undefined);
    assert.equal(result.code, 130);
    assert.ok(result.stderr.endsWith(`${STOPPED_AT_ONCE}\n`), result.stderr);
  });
});

describe('SIGTERM, SIGHUP, and a signal during a download', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    test(`${signal} stops a list as cleanly as Ctrl-C, with exit ${code} and a --resume token`, async () => {
      sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 60 });
      let sent = false;
      const { done } = carectl(['conversations', 'list', '-o', 'ndjson', '--page-size', '3'], sandboxEnv(sandbox), (out, child) => {
        if (!sent && out.stdout.split('\n').length > 4) {
          sent = true;
          child.kill(signal);
        }
      });
      const result = await done;
      sandbox.setFaults(undefined);
      assert.equal(result.code, code, result.stderr);
      wholeLines(result.stdout);
      assert.match(result.stderr, /^carectl: interrupted; the list stopped after \d+ records?: to continue, run the same command with --resume \S+$/m);
    });
  }

  for (const profile of [false, true]) {
    // With a config file, conf is loaded, and with it a library that hooks every signal.
    test(`Ctrl-C during a download${profile ? ', with a config file' : ''}: exit 130, a line that says how to start again, no temporary file`, async () => {
      const folder = await mkdtemp(join(tmpdir(), 'carectl-signals-'));
      const env: Record<string, string> = sandboxEnv(sandbox);
      if (profile) {
        env.XDG_CONFIG_HOME = join(folder, 'config');
        await mkdir(join(folder, 'config', 'carectl'), { recursive: true, mode: 0o700 });
        await writeFile(join(folder, 'config', 'carectl', 'config.json'), '{"profiles":{"default":{"output":"tsv"}}}', { mode: 0o600 });
      }
      const downloads = join(folder, 'downloads');
      await mkdir(downloads);
      sandbox.setFaults({ trickleDownloadsMs: 20 });
      try {
        const id = FIXTURES.reports.generatedId;
        const { child, done } = carectl(['reports', 'download', id, '--file', join(downloads, 'report.csv')], env);
        // Once the download has begun writing its temporary file (which exists, empty, from the start).
        let sent = false;
        const poll = setInterval(() => {
          if (!sent && readdirSync(downloads).some((name) => (statSync(join(downloads, name), { throwIfNoEntry: false })?.size ?? 0) > 0)) {
            sent = true;
            child.kill('SIGINT');
          }
        }, 5);
        const result = await done.finally(() => clearInterval(poll));
        assert.ok(sent, 'the download had started');
        assert.equal(result.code, 130, result.stderr);
        assert.match(
          result.stderr,
          new RegExp(
            `^carectl: interrupted while downloading report ${id}; nothing was saved; start again with: carectl reports download ${id} --file \\S+report\\.csv\\n$`,
          ),
        );
        assert.deepEqual(readdirSync(downloads), []);
      } finally {
        sandbox.setFaults(undefined);
        await rm(folder, { recursive: true, force: true });
      }
    });
  }
});

/** Starts `carectl sandbox …`; resolves with the child and the environment its banner exports. */
async function foregroundSandbox(argv: string[]): Promise<{ server: { child: Child; done: Promise<Finished> }; env: Record<string, string> }> {
  let printed = '';
  let bannerDone = (): void => undefined;
  const banner = new Promise<void>((resolve) => (bannerDone = resolve));
  const server = carectl(['sandbox', ...argv], {}, (out) => {
    printed = out.stdout;
    // The banner ends with the export line: address, user and password are all printed by then.
    if (/export CARECTL_BASE_URL=.*\n/.test(printed)) bannerDone();
  });
  await Promise.race([banner, server.done]);
  const exported = /export (CARECTL_BASE_URL=\S+) (CARECTL_USER=\S+) (CARECTL_PASSWORD=\S+)/.exec(printed);
  assert.ok(exported, printed);
  const env = Object.fromEntries(exported.slice(1).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  return { server, env };
}

describe('carectl sandbox', () => {
  test('--seed chooses the demo data, as startSandbox({ seed }) does', async () => {
    const { server, env } = await foregroundSandbox(['--seed', '2']);
    const reference = await openSandbox({ seed: 2 });
    try {
      const served = await runCli(['tags', 'list', '-o', 'json'], { env });
      assert.equal(served.code, 0, served.stderr);
      assert.equal(
        served.stdout,
        (await runCli(['tags', 'list', '-o', 'json'], { sandbox: reference })).stdout.replaceAll(reference.baseUrl, env.CARECTL_BASE_URL!),
      );
      assert.notEqual(
        served.stdout,
        (await runCli(['tags', 'list', '-o', 'json'], { sandbox })).stdout.replaceAll(sandbox.baseUrl, env.CARECTL_BASE_URL!),
        'seed 1 differs',
      );
    } finally {
      await reference.close();
      server.child.kill('SIGINT');
      await server.done;
    }
  });

  test('--conversations sets how many demo conversations it serves, each once', async () => {
    const { server, env } = await foregroundSandbox(['--conversations', '130']);
    try {
      const served = await runCli(['conversations', 'list', '--columns', 'id', '--no-header', '-o', 'tsv'], { env });
      assert.equal(served.code, 0, served.stderr);
      const ids = served.stdout.trimEnd().split('\n');
      assert.equal(ids.length, 130);
      assert.equal(new Set(ids).size, 130);
    } finally {
      server.child.kill('SIGINT');
      await server.done;
    }
  });

  test('--faults: serves with injected faults that --retries gets through; Ctrl-C stops it', async () => {
    const { server, env } = await foregroundSandbox(['--faults', '0.3']);
    try {
      const clock = fakeClock();
      const result = await runCli(['tags', 'list', '--page-size', '10', '--retries', '10', '--request-timeout', '300ms', '--verbose'], {
        env,
        now: clock.now,
        sleep: clock.sleep,
      });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim().split('\n').length, 1 + sandbox.data.tags.length, 'the header and every tag');
      assert.ok(clock.slept.length > 0, 'faults were injected and retried');
      assert.match(result.stderr, /retrying in \d+ ms/);
    } finally {
      server.child.kill('SIGINT');
      assert.equal((await server.done).code, 130);
    }
  });
});

describe('a stop signal while the reader of stdout is not reading', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    test(`${signal}: the process ends at once (${code}) with the resume line, and resuming loses and repeats nothing`, async () => {
      const big = await openSandbox({ conversations: 600 });
      try {
        const argv = ['conversations', 'list', '-o', 'ndjson', '--include', 'content'];
        const before = big.requests.length;
        const clean = await runCli(argv, { sandbox: big });
        assert.equal(clean.code, 0);
        const allPages = big.requests.length - before;
        assert.ok(clean.stdout.length > 1_000_000, 'more output than the pipe holds');

        const { child, done } = carectl(argv, sandboxEnv(big));
        child.stdout.pause();
        // Wait until the child is blocked on its full stdout: it has asked for pages and has every
        // reply, our side of the pipe holds all it reads, and none of its threads has work to do
        // (twice running, the same requests and CPU time between). A child that is merely slow on
        // a loaded machine is runnable, or still has a reply to take.
        const full = (): boolean => child.stdout.readableLength >= child.stdout.readableHighWaterMark;
        const answered = (): boolean => big.requests.length > before + allPages && big.requests.every((request) => request.status !== 0);
        const blocked = (): boolean => full() && answered() && threadStates(child.pid!).every((state) => state === 'S');
        for (let seen: string | undefined; ;) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          const now = blocked() ? `${big.requests.length} ${cpuTicks(child.pid!)}` : undefined;
          if (now !== undefined && now === seen) break;
          seen = now;
        }
        // It asked for pages, then went quiet: blocked on its full stdout (the output is larger than
        // the pipe holds). How many it read first depends on how far its parts read ahead (with
        // requests in parallel, up to its page budget), not on the reader.
        const requested = big.requests.length - before - allPages;
        assert.ok(requested > 0, `${requested} pages requested before the reader stopped`);
        child.kill(signal);
        // The child must end without a reader: only once it has is what reached the pipe read (a
        // child that waits for the reader is killed as hung, failing the test).
        await once(child, 'exit');
        child.stdout.resume();
        const result = await done;
        assert.equal(result.code, code, result.stderr);
        assert.match(
          result.stderr,
          /^carectl: interrupted; stdout was not being read, so its last line may be cut off; the list stopped after \d+ records?: to continue, run the same command with --resume \S+$/m,
        );
        const token = /--resume (\S+)/.exec(result.stderr)?.[1] as string;
        const rest = await runCli([...argv, '--resume', token], { sandbox: big });
        assert.equal(rest.code, 0, rest.stderr);
        // The system may have taken part of a record before the stop: that cut line is all that differs.
        const complete = result.stdout.slice(0, result.stdout.lastIndexOf('\n') + 1);
        assert.equal(complete + rest.stdout, clean.stdout);
      } finally {
        await big.close();
      }
    });
  }
});

describe('a wide --parallel in a real process', () => {
  test('--parallel 32 --quiet: nothing at all on stderr (no listener warning from node)', async () => {
    const { done } = carectl(['--parallel', '32', '--quiet', 'conversations', 'list', '-o', 'csv', '--page-size', '5'], sandboxEnv(sandbox));
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.equal(result.stdout.trim().split('\n').length, 121);
  });
});
