/** A config path that is not a regular file is refused at once, never opened (a FIFO would block). */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { scriptedApi, scriptedEnv } from './scripted-server.js';

const bin = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));

/** carectl as a process of its own: a blocking open would hang this test's process too; killed after 20 s. */
function carectl(argv: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...argv],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
      },
    );
  });
}

test('a FIFO at the config path: exit 2 naming it, even with every setting in the environment; nothing sent', async (t) => {
  if (process.platform === 'win32') return t.skip('no FIFOs');
  const home = mkdtempSync(path.join(tmpdir(), 'carectl-fifo-'));
  const api = await scriptedApi(() => ({ json: { tags: [], paging: {} } }));
  try {
    mkdirSync(path.join(home, 'carectl'), { mode: 0o700 });
    const file = path.join(home, 'carectl', 'config.json');
    execFileSync('mkfifo', ['-m', '600', file]);
    for (const argv of [
      ['tags', 'list'],
      ['config', 'set', 'output', 'json'],
    ]) {
      const out = await carectl(argv, { ...scriptedEnv(api), XDG_CONFIG_HOME: home });
      assert.equal(out.code, 2, `${argv.join(' ')}: ${out.stderr}`);
      assert.equal(
        out.stderr,
        `carectl: ${file} is not a regular file (a FIFO); carectl reads its configuration only from one: move it away, or use another config folder with XDG_CONFIG_HOME\n`,
      );
    }
    assert.equal(api.requests.length, 0);
  } finally {
    await api.close();
    rmSync(home, { recursive: true });
  }
});

test('api -d @FIFO is refused as not a regular file, at once (a blocking open ignored SIGTERM); -d @FILE over 16 MiB too; nothing sent', async (t) => {
  if (process.platform === 'win32') return t.skip('no FIFOs');
  const folder = mkdtempSync(path.join(tmpdir(), 'carectl-data-fifo-'));
  const api = await scriptedApi(() => ({ json: {} }));
  try {
    const fifo = path.join(folder, 'body');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const big = path.join(folder, 'big.json');
    writeFileSync(big, '');
    truncateSync(big, 16 * 1024 * 1024 + 1);
    const out = await carectl(['api', '-X', 'POST', '-d', `@${fifo}`, 'v1.3/tags'], scriptedEnv(api));
    assert.equal(out.code, 2, out.stderr);
    assert.equal(out.stderr, `carectl: --data: ${fifo} is not a regular file (a FIFO); pipe its content in with -d @- instead\n`);
    const large = await carectl(['api', '-X', 'POST', '-d', `@${big}`, 'v1.3/tags'], scriptedEnv(api));
    assert.equal(large.code, 2, large.stderr);
    assert.equal(large.stderr, `carectl: --data: ${big} is larger than 16 MiB, more than a request body carectl sends\n`);
    assert.equal(api.requests.length, 0);
  } finally {
    await api.close();
    rmSync(folder, { recursive: true });
  }
});

test('a config file over 1 MiB is refused naming it, before it is read', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'carectl-bigconfig-'));
  const api = await scriptedApi(() => ({ json: { tags: [], paging: {} } }));
  try {
    mkdirSync(path.join(home, 'carectl'), { mode: 0o700 });
    const file = path.join(home, 'carectl', 'config.json');
    writeFileSync(file, '', { mode: 0o600 });
    truncateSync(file, 3 * 1024 ** 3);
    const out = await carectl(['tags', 'list'], { ...scriptedEnv(api), XDG_CONFIG_HOME: home });
    assert.equal(out.code, 2, out.stderr);
    assert.equal(
      out.stderr,
      `carectl: ${file} is larger than 1 MiB, which no configuration is; move it away, or use another config folder with XDG_CONFIG_HOME\n`,
    );
    assert.equal(api.requests.length, 0);
  } finally {
    await api.close();
    rmSync(home, { recursive: true });
  }
});

test('a config path that cannot be looked at (a symlink loop) is an error naming it, not an empty configuration', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'carectl-loop-'));
  try {
    mkdirSync(path.join(home, 'carectl'), { mode: 0o700 });
    const file = path.join(home, 'carectl', 'config.json');
    symlinkSync(file, file);
    for (const argv of [
      ['config', 'list'],
      ['config', 'set', 'output', 'json'],
    ]) {
      const out = await carectl(argv, { XDG_CONFIG_HOME: home });
      assert.equal(out.code, 2, `${argv.join(' ')}: ${out.stderr}`);
      assert.equal(out.stderr, `carectl: cannot read ${file}: ELOOP; move it away, or use another config folder with XDG_CONFIG_HOME\n`);
    }
  } finally {
    rmSync(home, { recursive: true });
  }
});

test('a --reuse ledger (reports.json) that is a FIFO or a device is refused, exit 2, nothing sent', async (t) => {
  if (process.platform === 'win32') return t.skip('no FIFOs');
  const home = mkdtempSync(path.join(tmpdir(), 'carectl-ledger-fifo-'));
  const api = await scriptedApi(() => ({ json: { report: { id: '70001', url: 'x' } } }));
  try {
    mkdirSync(path.join(home, 'carectl'), { mode: 0o700 });
    const file = path.join(home, 'carectl', 'reports.json');
    for (const [make, kind] of [
      [() => execFileSync('mkfifo', ['-m', '600', file]), 'a FIFO'],
      [() => symlinkSync('/dev/zero', file), 'a device'],
    ] as const) {
      make();
      const argv = ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07', '--reuse'];
      const out = await carectl(argv, { ...scriptedEnv(api), XDG_CONFIG_HOME: home });
      assert.equal(out.code, 2, out.stderr);
      assert.equal(out.stderr, `carectl: ${file} is not a regular file (${kind}); carectl keeps the reports --reuse picks up only in one: move it away\n`);
      rmSync(file);
    }
    assert.equal(api.requests.length, 0);
  } finally {
    await api.close();
    rmSync(home, { recursive: true });
  }
});

test('a completion cache (completion.json) that is a FIFO or a device is ignored: a TAB answers from the service, and it stays as it was', async (t) => {
  if (process.platform === 'win32') return t.skip('no FIFOs');
  const home = mkdtempSync(path.join(tmpdir(), 'carectl-cache-fifo-'));
  const api = await scriptedApi(() => ({ json: { tags: [{ id: '7', url: 'x', name: 'vip' }], paging: {} } }));
  try {
    mkdirSync(path.join(home, 'carectl'), { mode: 0o700 });
    const file = path.join(home, 'carectl', 'completion.json');
    for (const make of [() => execFileSync('mkfifo', ['-m', '600', file]), () => symlinkSync('/dev/zero', file)]) {
      make();
      const env = { ...scriptedEnv(api), XDG_CONFIG_HOME: home };
      const names = await carectl(['__complete', 'names', 'tags'], env);
      assert.equal(names.code, 0, names.stderr);
      assert.equal(names.stdout, 'vip\n');
      const reasons = await carectl(['__complete', 'close-reasons'], env);
      assert.deepEqual([reasons.code, reasons.stdout], [0, '']);
      assert.equal(lstatSync(file).isFile(), false, 'not replaced by a regular file');
      rmSync(file);
    }
  } finally {
    await api.close();
    rmSync(home, { recursive: true });
  }
});
