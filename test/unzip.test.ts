/**
 * --unzip (issue 24 item 9): a report file that is a ZIP archive of one file is saved as that
 * file, atomically; several members, a member with a path, or one past the size limit are
 * refused with no file left. Archives are built here byte by byte (stored or deflated).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as zlib from 'node:zlib';
import { deflateRawSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { tableCrc32 } from '../src/core/crc32.js';
import { download, PartialFile, type Unzipping } from '../src/http/download.js';
import { extractSingleMember, UnzipRefusal } from '../src/http/unzip.js';
import { InterruptedError } from '../src/core/errors.js';
import { FIXTURES, type Sandbox } from '../src/sandbox/index.js';
import { downloadOptions, fakeClock, openSandbox, runCli } from './helpers.js';
import { serve } from './scripted-server.js';

const crc32 = (bytes: Buffer): number => tableCrc32(bytes);

test('the table CRC-32 (Node before 20.15 has no zlib.crc32) agrees with zlib, chunk by chunk', () => {
  const bytes = randomBytes(100_000);
  const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  assert.equal(tableCrc32(Buffer.from('123456789')), 0xcbf43926);
  assert.equal(tableCrc32(bytes.subarray(40_000), tableCrc32(bytes.subarray(0, 40_000))), tableCrc32(bytes));
  if (native) assert.equal(tableCrc32(bytes), native(bytes));
});

/**
 * A ZIP archive of these members; `size` overrides the uncompressed size the headers state, `crc`
 * the CRC-32 they record, `method` the compression method they name.
 */
function zip(members: { name: string; data: Buffer; deflate?: boolean; size?: number; crc?: number; method?: number }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const name = Buffer.from(m.name);
    const body = m.deflate ? deflateRawSync(m.data) : m.data;
    const size = m.size ?? m.data.length;
    const header = (central: boolean): Buffer => {
      const b = Buffer.alloc(central ? 46 : 30);
      let at = 0;
      b.writeUInt32LE(central ? 0x02014b50 : 0x04034b50, at);
      at += 4;
      if (central) {
        b.writeUInt16LE(20, at);
        at += 2;
      }
      b.writeUInt16LE(20, at);
      at += 2; // version needed
      b.writeUInt16LE(0, at);
      at += 2; // flags
      b.writeUInt16LE(m.method ?? (m.deflate ? 8 : 0), at);
      at += 2;
      b.writeUInt32LE(0, at);
      at += 4; // time, date
      b.writeUInt32LE(m.crc ?? crc32(m.data), at);
      at += 4;
      b.writeUInt32LE(body.length, at);
      at += 4;
      b.writeUInt32LE(size, at);
      at += 4;
      b.writeUInt16LE(name.length, at);
      at += 2;
      b.writeUInt16LE(0, at); // extra
      if (central) b.writeUInt32LE(offset, 42);
      return b;
    };
    const local = Buffer.concat([header(false), name, body]);
    centrals.push(Buffer.concat([header(true), name]));
    locals.push(local);
    offset += local.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A copy of `archive` with the byte at `at` changed. */
function flipped(archive: Buffer, at: number): Buffer {
  const copy = Buffer.from(archive);
  copy[at] ^= 0xff;
  return copy;
}

const CSV = Buffer.from('id,text\n'.concat('1,hello\n'.repeat(20_000)));
let folder: string;
before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'carectl-unzip-'));
});
after(() => rm(folder, { recursive: true, force: true }));

async function fetchUnzipped(
  archive: Buffer,
  options: { signal?: AbortSignal; onMember?: () => void } = {},
): Promise<{ outcome: number | Error; files: string[]; saved?: Unzipping['saved']; content?: Buffer }> {
  const server = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/zip', 'content-length': String(archive.length) });
    res.end(archive);
  });
  const into = await mkdtemp(join(folder, 'run-'));
  try {
    const partial = await PartialFile.create(into, 'report.csv');
    const finalPath = (): string => {
      options.onMember?.();
      return join(into, 'report.csv');
    };
    const unzip: Unzipping = { what: 'the file of report 7', finalPath };
    const overrides = { retries: 1, ...(options.signal && { signal: options.signal }) };
    const outcome = await download(downloadOptions(`${server.url}/r.zip`, { file: join(into, 'report.csv'), partial, unzip }, fakeClock(), overrides)).catch(
      (err: Error) => err,
    );
    const files = await readdir(into);
    return { outcome, files, saved: unzip.saved, ...(files.includes('report.csv') && { content: await readFile(join(into, 'report.csv')) }) };
  } finally {
    await server.close();
  }
}

describe('an archive of one file', () => {
  for (const deflate of [false, true]) {
    test(`${deflate ? 'deflated' : 'stored'}: extracted into place, the archive gone`, async () => {
      const result = await fetchUnzipped(zip([{ name: 'export.csv', data: CSV, deflate }]));
      assert.equal(typeof result.outcome, 'number', String(result.outcome));
      assert.deepEqual(result.files, ['report.csv']);
      assert.deepEqual(result.content, CSV);
      assert.deepEqual(result.saved, { path: result.saved!.path, bytes: CSV.length, member: 'export.csv' });
    });
  }

  test('a folder entry beside the one file is no member: the file is extracted', async () => {
    const result = await fetchUnzipped(
      zip([
        { name: 'empty/', data: Buffer.alloc(0) },
        { name: 'export.csv', data: CSV, deflate: true },
      ]),
    );
    assert.equal(typeof result.outcome, 'number', String(result.outcome));
    assert.deepEqual(result.content, CSV);
  });
});

test('an archive of many entries: no listener left per entry, so no MaxListenersExceededWarning (issue 33 item 16)', async () => {
  const warnings: string[] = [];
  const heard = (warning: Error): void => void warnings.push(warning.name);
  process.on('warning', heard);
  try {
    const folders = Array.from({ length: 12 }, (_, n) => ({ name: `d${n}/`, data: Buffer.alloc(0) }));
    const result = await fetchUnzipped(zip([...folders, { name: 'export.csv', data: CSV, deflate: true }]));
    assert.equal(typeof result.outcome, 'number', String(result.outcome));
    // A warning is emitted on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, []);
  } finally {
    process.off('warning', heard);
  }
});

test('a stop while the member is extracted: interrupted at once, neither temporary file left (issue 33 item 8)', async () => {
  const stop = new AbortController();
  const big = Buffer.alloc(32 * 1024 * 1024, 'x');
  const result = await fetchUnzipped(zip([{ name: 'export.csv', data: big, deflate: true }]), { signal: stop.signal, onMember: () => stop.abort() });
  assert.ok(result.outcome instanceof InterruptedError, String(result.outcome));
  assert.deepEqual(result.files, []);
});

describe('refused, with no file left', () => {
  const cases: [string, Buffer, RegExp][] = [
    [
      'several members',
      zip([
        { name: 'a.csv', data: CSV },
        { name: 'b.csv', data: CSV },
      ]),
      /^--unzip: the file of report 7 holds 2 members; --unzip extracts an archive of one file \(save it without --unzip\)$/,
    ],
    ['a member with a path', zip([{ name: 'dir/a.csv', data: CSV }]), /^--unzip: the file of report 7 has a member with a path \("dir\/a\.csv"\)/],
    // `zip -r` of a folder holding one file: the folder's own entry is no member, the file has a path.
    [
      'a folder holding one file',
      zip([
        { name: 'sub/', data: Buffer.alloc(0) },
        { name: 'sub/report.csv', data: CSV },
      ]),
      /^--unzip: the file of report 7 has a member with a path \("sub\/report\.csv"\)/,
    ],
    [
      'two files beside a folder entry',
      zip([
        { name: 'sub/', data: Buffer.alloc(0) },
        { name: 'a.csv', data: CSV },
        { name: 'b.csv', data: CSV },
      ]),
      /^--unzip: the file of report 7 holds 2 members;/,
    ],
    ['a member that climbs out', zip([{ name: '../a.csv', data: CSV }]), /^--unzip: the file of report 7 has a member (carectl will not extract|with a path)/],
    ['not an archive', CSV, /^--unzip: the file of report 7 is not a ZIP archive carectl can read/],
    // Issue 33 item 10: yauzl checks no CRC; a flipped byte in a stored member, or a wrong recorded CRC.
    [
      'a stored member with a flipped byte',
      flipped(zip([{ name: 'a.csv', data: CSV }]), 30 + 'a.csv'.length + 100),
      /^--unzip: the file of report 7 is damaged: a\.csv has CRC-32 [0-9a-f]{8}, the archive records [0-9a-f]{8}$/,
    ],
    [
      'a deflated member whose recorded CRC is wrong',
      zip([{ name: 'a.csv', data: CSV, deflate: true, crc: (crc32(CSV) ^ 1) >>> 0 }]),
      new RegExp(`^--unzip: the file of report 7 is damaged: a\\.csv has CRC-32 ${crc32(CSV).toString(16).padStart(8, '0')}, the archive records`),
    ],
    // Issue 33 item 21: what Windows writes for large files, and other methods; a broken local header.
    ...(
      [
        [9, 'Deflate64'],
        [12, 'bzip2'],
        [93, 'zstd'],
        [99, 'compression method 99'],
      ] as const
    ).map(([method, name]): [string, Buffer, RegExp] => [
      `a member packed with method ${method}`,
      zip([{ name: 'a.csv', data: CSV, method }]),
      new RegExp(`^--unzip: the file of report 7 has a member packed with ${name}.*, which carectl cannot inflate \\(only stored and deflate\\)$`),
    ]),
    [
      'a broken local header',
      flipped(zip([{ name: 'a.csv', data: CSV, deflate: true }]), 0),
      /^--unzip: the file of report 7 could not be extracted \(invalid local file header signature: 0x[0-9a-f]+\)$/,
    ],
  ];
  for (const [name, archive, message] of cases) {
    test(name, async () => {
      const result = await fetchUnzipped(archive);
      assert.ok(result.outcome instanceof UnzipRefusal, String(result.outcome));
      assert.match(result.outcome.message, message);
      assert.deepEqual(result.files, []);
    });
  }
});

describe('the size limit (here 100 KiB)', () => {
  async function extract(archive: Buffer): Promise<{ outcome: unknown; files: string[] }> {
    const into = await mkdtemp(join(folder, 'limit-'));
    await writeFile(join(into, 'a.zip'), archive);
    const target = await PartialFile.create(into, 'out.csv');
    const outcome = await extractSingleMember(join(into, 'a.zip'), target, 'the file of report 7', { maxBytes: 100 * 1024 }).catch((err: unknown) => err);
    await target.discard();
    return { outcome, files: await readdir(into) };
  }

  test('a member past it by its header: refused before a byte is written', async () => {
    const { outcome } = await extract(zip([{ name: 'a.csv', data: CSV, deflate: true }]));
    assert.equal((outcome as Error).message, `--unzip: the file of report 7 has a member of ${CSV.length} bytes, more than the 100 KiB carectl writes`);
  });

  test('a header that lies about the size: stopped while inflating', async () => {
    const { outcome } = await extract(zip([{ name: 'a.csv', data: CSV, deflate: true, size: 100 }]));
    assert.match((outcome as Error).message, /^--unzip: the file of report 7 (inflates past the 100 KiB carectl writes|could not be extracted \(.*\))$/);
  });
});

describe('carectl reports … --unzip', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(() => sandbox.close());

  test('needs a file or folder to extract into: exit 2, nothing sent', async () => {
    const cases: [string[], string][] = [
      [
        ['reports', 'download', FIXTURES.reports.generatedId, '--unzip', '--file', '-'],
        'carectl: --unzip: extracts into a file or folder: give --file PATH (not -)\n',
      ],
      [['reports', 'wait', FIXTURES.reports.generatedId, '--unzip'], 'carectl: --unzip: extracts into a file or folder: give --download PATH\n'],
      [
        ['reports', 'create', '--account', '1001', '--from', '3d', '--to', '1d', '--unzip'],
        'carectl: --unzip: extracts into a file or folder: give --download PATH\n',
      ],
    ];
    for (const [argv, stderr] of cases) {
      const from = sandbox.requests.length;
      const result = await runCli(argv, { sandbox, cwd: folder });
      assert.equal(result.code, 2, argv.join(' '));
      assert.equal(result.stderr, stderr);
      assert.equal(sandbox.requests.length, from);
    }
  });

  test('a file that is no archive: exit 1, the command that saves it as it is (not one that meets the same refusal), nothing left', async () => {
    const into = await mkdtemp(join(folder, 'cli-'));
    const clock = fakeClock();
    const result = await runCli(['reports', 'download', FIXTURES.reports.generatedId, '--unzip', '--file', 'r.csv'], {
      sandbox,
      cwd: into,
      now: clock.now,
      sleep: clock.sleep,
    });
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^carectl: --unzip: the file of report 60001 is not a ZIP archive carectl can read \(.*\); nothing was saved; to save the file as it is: carectl reports download 60001 --file r\.csv\n$/,
    );
    assert.deepEqual(await readdir(into), []);
  });
});

test('a full disk while extracting into a folder: the line names the file being extracted, not the archive', async (t) => {
  const mount = await mkdtemp(join(folder, 'small-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mount], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    const reason = `cannot mount a small tmpfs here (${(mounted.stderr || mounted.error?.message || 'mount failed').trim()}): the full-disk test is skipped`;
    console.log(reason);
    return t.skip(reason);
  }
  const archive = zip([{ name: 'export.csv', data: CSV, deflate: true }]);
  const server = await serve((_req, res) => res.end(archive));
  try {
    assert.ok(archive.length < 16 * 1024 && CSV.length > 64 * 1024, 'the archive fits, its member does not');
    // Folder mode: the archive is saved as report-7.zip, its member goes to report-7.csv.
    const partial = await PartialFile.create(mount, 'report-7.zip');
    const unzip: Unzipping = { what: 'the file of report 7', finalPath: (member) => join(mount, `report-7${member.slice(member.lastIndexOf('.'))}`) };
    const outcome = await download(
      downloadOptions(`${server.url}/r.zip`, { file: join(mount, 'report-7.zip'), partial, unzip }, fakeClock(), { retries: 0 }),
    ).catch((err: Error) => err);
    assert.ok(outcome instanceof Error, String(outcome));
    assert.equal(outcome.message, `cannot write ${join(mount, 'report-7.csv')}: no space left on device (ENOSPC)`);
    assert.deepEqual(await readdir(mount), []);
  } finally {
    await server.close();
    spawnSync('umount', [mount]);
  }
});
