/**
 * Live lines on a terminal's stderr: the count of a long list (redrawn at most about four times a
 * second, gone when the list ends, nothing with --quiet or off a terminal) and the report wait
 * line (cut to the width of stderr, not redrawn when nothing it shows changed), the download
 * progress bar, and messages on a narrow terminal. Clocks are fake.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createWaitProgress } from '../src/commands/reports/polling.js';
import { CLEAR_LINE, withLiveCount } from '../src/output/progress.js';
import type { RecordWriter } from '../src/output/types.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { Collector, openSandbox, runCli } from './helpers.js';
import { createByteProgress, progressLine } from '../src/output/download-progress.js';

/** The texts drawn on a live line, in order ('' for a clear that ends it). */
function drawn(stderr: string): string[] {
  return stderr.split(CLEAR_LINE).slice(1);
}

function recorder(): RecordWriter & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    write: async (record) => void log.push(`write ${String(record.id)}`),
    endPage: async () => void log.push('page'),
    end: async () => void log.push('end'),
  };
}

describe('live count of a list', () => {
  test('nothing for the first second, then `N noun (R/s)` at most every 250 ms, cleared at the end', async () => {
    const stderr = new Collector();
    let now = 0;
    const inner = recorder();
    const live = withLiveCount(inner, {
      stderr: { stream: stderr, isTTY: true },
      stdout: { stream: new Collector(), isTTY: false },
      now: () => now,
      noun: 'conversation',
    });
    for (let id = 1; id <= 2000; id++) {
      now += 1; // a record a millisecond
      await live.writer.write({ id });
    }
    await live.writer.end();
    const lines = drawn(stderr.text);
    assert.equal(lines[0], '1,000 conversations (1,000/s)');
    assert.equal(lines.at(-1), '', 'cleared at the end');
    assert.equal(lines.length - 1, 1 + Math.floor(1000 / 250), 'redrawn every 250 ms');
    assert.ok(lines.slice(0, -1).every((line) => /^[\d,]+ conversations \([\d,]+\/s\)$/.test(line)));
    assert.equal(inner.log.length, 2001, 'every record reached the writer, then end');
    live.clear();
    assert.equal(drawn(stderr.text).length, lines.length, 'clear after the end draws nothing more');
  });

  test('a writer that only gathers a record (a table page) is not stepped aside for: no text redrawn unchanged', async () => {
    const stderr = new Collector();
    let now = 0;
    const inner = { ...recorder(), writesNext: () => false };
    const live = withLiveCount(inner, {
      stderr: { stream: stderr, isTTY: true },
      stdout: { stream: new Collector(), isTTY: true },
      now: () => now,
      noun: 'conversation',
    });
    for (let id = 1; id <= 2000; id++) {
      now += 1;
      await live.writer.write({ id });
      if (id % 500 === 0) await live.writer.endPage();
    }
    await live.writer.end();
    const lines = drawn(stderr.text);
    // A redraw shows a new count, or puts the line back after a page was written (3 pages after the first second).
    const repeats = lines.filter((line, index) => index > 0 && line !== '' && line === lines[index - 1]).length;
    assert.ok(repeats <= 3, `${repeats} unchanged redraws: ${lines.join(' | ')}`);
    assert.ok(lines.length > 2 && lines.length < 20, `${lines.length} redraws`);
  });

  test('cleared for a notice part-way, the count is drawn again with the next record', async () => {
    const stderr = new Collector();
    let now = 0;
    const live = withLiveCount(recorder(), {
      stderr: { stream: stderr, isTTY: true },
      stdout: { stream: new Collector(), isTTY: false },
      now: () => now,
      noun: 'user',
    });
    now = 1500;
    await live.writer.write({ id: 1 });
    live.clear();
    stderr.write('a notice\n');
    now += 1;
    await live.writer.write({ id: 2 });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stderr.text, `${CLEAR_LINE}1 user (1/s)${CLEAR_LINE}a notice\n${CLEAR_LINE}2 users (1/s)`);
  });

  test('a list done within a second shows nothing; stderr not a terminal never does', async () => {
    for (const [isTTY, ms] of [
      [true, 999],
      [false, 5000],
    ] as const) {
      const stderr = new Collector();
      let now = 0;
      const live = withLiveCount(recorder(), {
        stderr: { stream: stderr, isTTY },
        stdout: { stream: new Collector(), isTTY: false },
        now: () => now,
        noun: 'tag',
      });
      for (let id = 0; id < 10; id++) {
        now += ms / 10;
        await live.writer.write({ id });
      }
      await live.writer.end();
      assert.equal(stderr.text, '', `isTTY ${isTTY}`);
    }
  });

  test('fits the width of stderr; steps aside while records are printed on the same terminal', async () => {
    const stderr = new Collector();
    let now = 0;
    const output: string[] = [];
    const inner: RecordWriter = {
      write: async () => void output.push(`[record after ${JSON.stringify(stderr.text.slice(-4))}]`),
      endPage: async () => undefined,
      end: async () => undefined,
    };
    const live = withLiveCount(inner, {
      stderr: { stream: stderr, isTTY: true, columns: 12 },
      stdout: { stream: new Collector(), isTTY: true },
      now: () => now,
      noun: 'conversation',
    });
    now = 2000;
    await live.writer.write({ id: 1 });
    assert.equal(drawn(stderr.text)[0], '1 conversa…');
    now += 10;
    await live.writer.write({ id: 2 });
    // cleared before the record, put back after it (not yet redrawn with the new count: 10 ms later)
    assert.equal(output[1], `[record after ${JSON.stringify(CLEAR_LINE.slice(-4))}]`);
    assert.ok(stderr.text.endsWith(`${CLEAR_LINE}1 conversa…`));
  });
});

describe('live count, end to end', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(() => sandbox.close());

  /** A clock that moves 25 ms each time it is read: a list of a few hundred records runs for "seconds". */
  function movingClock(): () => number {
    let time = Date.UTC(2026, 5, 30, 12);
    return () => (time += 25);
  }

  test('a list that runs for seconds shows the count on a terminal stderr and clears it when done', async () => {
    const result = await runCli(['conversations', 'list', '--status', 'unread', '-o', 'csv'], { sandbox, stderrTTY: true, now: movingClock() });
    assert.equal(result.code, 0, result.stderr);
    const lines = drawn(result.stderr);
    assert.ok(lines.length >= 2, JSON.stringify(result.stderr));
    assert.match(lines[0]!, /^[\d,]+ conversations \([\d,]+\/s\)$/);
    assert.equal(lines.at(-1), '', 'nothing left on the line');
    const rows = result.stdout.trimEnd().split('\r\n').length - 1;
    assert.ok(lines.slice(0, -1).every((line) => Number(line.split(' ')[0]!.replaceAll(',', '')) <= rows));
  });

  test('an update batch that runs for seconds shows ids done of all on a terminal stderr, cleared at the end', async () => {
    // Conversations with active tags only: a dry run names each inactive tag it would send back.
    const { data } = sandbox;
    const ids = data.conversations
      .filter((c) => Number(c.id) >= 500100 && c.tag_ids.every((id) => data.byId.tags.get(id)!.is_active))
      .slice(0, 40)
      .map((c) => c.id);
    assert.equal(ids.length, 40);
    const argv = ['conversations', 'update', ...ids, '--status', 'on_hold', '--dry-run'];
    const result = await runCli(argv, { sandbox, stderrTTY: true, now: movingClock() });
    assert.equal(result.code, 0, result.stderr);
    const lines = drawn(result.stderr);
    assert.ok(lines.length >= 2, JSON.stringify(result.stderr));
    assert.match(lines[0]!, /^\d+ of 40 conversations \([\d,]+\/s\)$/);
    assert.equal(lines.at(-1), '', 'nothing left on the line');
    const quiet = await runCli(['--quiet', ...argv], { sandbox, stderrTTY: true, now: movingClock() });
    assert.equal(quiet.stderr, '');
    const piped = await runCli(argv, { sandbox, stderrTTY: false, now: movingClock() });
    assert.equal(piped.stderr, '');
  });

  test('--quiet, --verbose or a stderr that is not a terminal: no live count', async () => {
    for (const [args, tty] of [
      [['--quiet'], true],
      [[], false],
    ] as const) {
      const result = await runCli([...args, 'conversations', 'list', '--status', 'unread', '-o', 'csv'], { sandbox, stderrTTY: tty, now: movingClock() });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '', `${args.join(' ')} tty ${tty}`);
    }
    const verbose = await runCli(['--verbose', 'conversations', 'list', '--status', 'unread', '-o', 'csv'], { sandbox, stderrTTY: true, now: movingClock() });
    assert.equal(verbose.code, 0, verbose.stderr);
    assert.match(verbose.stderr, /^> GET /m, 'the trace is there');
    assert.ok(!verbose.stderr.includes(CLEAR_LINE));
  });

  test('a list that fails part-way clears the count before its error line', async () => {
    sandbox.setFaults({ failListAfterPages: 4 });
    try {
      const result = await runCli(['--retries', '0', 'conversations', 'list', '--status', 'unread', '--page-size', '10', '-o', 'csv'], {
        sandbox,
        stderrTTY: true,
        now: movingClock(),
      });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /conversations \([\d,]+\/s\)\r\x1b\[2Kcarectl: [^\r]*--resume \S+\n$/);
    } finally {
      sandbox.setFaults(undefined);
    }
  });
});

describe('report wait line', () => {
  test('cut to the width of stderr; the same text is not drawn twice; cleared or finished at the end', () => {
    const stderr = new Collector();
    const progress = createWaitProgress({ stream: stderr, isTTY: true, columns: 24 }, false, '60001');
    for (const ms of [0, 250, 625, 1188, 2033]) progress.polled('queued', ms);
    progress.polled('generating', 2100);
    progress.polled('generating', 2400);
    progress.finish('generated', 3033);
    // 23 columns of text: the seconds are cut off, so the queued line is drawn once
    assert.deepEqual(drawn(stderr.text), ['report 60001: queued (…', 'report 60001: generati…', 'report 60001: generate…\n']);
    const wide = new Collector();
    const line = createWaitProgress({ stream: wide, isTTY: true, columns: 80 }, false, '60001');
    for (const ms of [0, 250, 625, 1188, 2033]) line.polled('queued', ms);
    line.finish('failed', 2100);
    assert.deepEqual(drawn(wide.text), ['report 60001: queued (0s)', 'report 60001: queued (1s)', 'report 60001: queued (2s)', '']);
  });
});

describe('messages on a narrow terminal', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(() => sandbox.close());

  test('a notice that gives something to copy (a --resume token, a command) stays one line for the terminal to fold', async () => {
    const limited = await runCli(['tags', 'list', '--limit', '1', '-o', 'csv'], { sandbox, stderrTTY: true, stderrColumns: 40 });
    assert.equal(limited.code, 0, limited.stderr);
    assert.match(limited.stderr, /^stopped at --limit 1; more may follow: run the same command with --resume \S+\n$/);
    const waited = await runCli(['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07', '--wait', '--timeout', '1ms'], {
      sandbox,
      stderrTTY: true,
      stderrColumns: 40,
    });
    // After the live line, cleared: the error.
    assert.match(waited.stderr.split(CLEAR_LINE).at(-1)!, /^carectl: report \d+ is still queued after 0s; keep waiting with: carectl reports wait \d+\n$/);
  });

  test('a prose error line is wrapped at spaces to the width of stderr', async () => {
    const out = await runCli(['conversations', 'list', '--status', 'unred'], { sandbox, stderrTTY: true, stderrColumns: 40 });
    assert.equal(out.code, 2);
    const lines = out.stderr.trimEnd().split('\n');
    assert.ok(lines.length > 1 && lines.every((line) => line.length <= 40), out.stderr);
    assert.equal(lines.join(' '), 'carectl: --status: "unred" is not one of archived, on_hold, closing, closed, pending_approval, unread, assigned');
  });

  test('off a terminal, one line as before', async () => {
    const out = await runCli(['tags', 'list', '--limit', '1', '-o', 'csv'], { sandbox, stderrColumns: 40 });
    assert.equal(out.stderr.split('\n').length, 2);
  });
});

const MB = 1024 * 1024;

describe('download progress', () => {
  test('the line never reaches the last column: the bar narrows, then goes, then the text is cut', () => {
    assert.equal(progressLine('report 60001', 12 * MB, 25 * MB, undefined), 'report 60001 [############------------]  48%  12.0 MiB / 25.0 MiB');
    assert.equal(progressLine('report 60001', 12 * MB, 25 * MB, 50), 'report 60001 [####----]  48%  12.0 MiB / 25.0 MiB');
    assert.equal(progressLine('report 60001', 12 * MB, 25 * MB, 40), 'report 60001  48%  12.0 MiB / 25.0 MiB');
    assert.equal(progressLine('report 60001', 12 * MB, 25 * MB, 20), 'report 60001  48% …');
    for (const columns of [20, 30, 40, 50, 60, 80, 120]) {
      assert.ok(progressLine('report 60001', 12 * MB, 25 * MB, columns).length < columns, `${columns} columns`);
    }
  });

  test('on a 50-column terminal, redrawn at most every 250 ms, one line in place, cleared at the end', () => {
    const stream = new Collector();
    let time = 0;
    const bar = createByteProgress({ stream, isTTY: true, columns: 50 }, false, 'report 60001', () => time);
    for (let received = 0; received < 25 * MB; received += MB / 4) {
      bar.update(received, 25 * MB);
      time += 10;
    }
    bar.update(25 * MB, 25 * MB);
    bar.finish();
    const draws = stream.text.split('\r\x1b[2K').filter((part) => part !== '');
    // 100 updates over 1 s: 4 timed draws, the final one, nothing more.
    assert.ok(draws.length <= 6, `${draws.length} draws`);
    assert.ok(
      draws.every((line) => !line.includes('\n') && line.length < 50),
      draws.join(' | '),
    );
    assert.ok(stream.text.endsWith('\r\x1b[2K'));
  });

  test('off a terminal or with --quiet: nothing', () => {
    for (const [isTTY, quiet] of [
      [false, false],
      [true, true],
    ] as const) {
      const stream = new Collector();
      const bar = createByteProgress({ stream, isTTY, columns: 80 }, quiet, 'report 1', () => 0);
      bar.update(1, 2);
      bar.finish();
      assert.equal(stream.text, '');
    }
  });
});
