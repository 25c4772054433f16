/**
 * Behind a real squid (review of issue 24, D1): a CONNECT squid answers with 503 because it cannot
 * reach the service never reached it, and is said as such. Skipped, with the reason printed, where
 * squid is not installed or does not start.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fakeClock, freePort, runCli } from './helpers.js';

/** Whether something accepts connections on the port (squid is up). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

let squid: ChildProcess | undefined;
let skipped: string | undefined;
let folder: string;
let proxyPort: number;

before(async () => {
  if (spawnSync('squid', ['-v']).error) {
    skipped = 'squid is not installed: the real-squid test is skipped';
    console.log(skipped);
    return;
  }
  folder = await mkdtemp(join(tmpdir(), 'carectl-squid-'));
  // Started as root, squid runs as its own user, which must read its files.
  await chmod(folder, 0o755);
  proxyPort = await freePort();
  // unreach.test is this machine by squid's hosts file; no DNS is asked.
  await writeFile(join(folder, 'hosts'), '127.0.0.1 unreach.test\n');
  await writeFile(
    join(folder, 'squid.conf'),
    [
      `http_port 127.0.0.1:${proxyPort}`,
      'pid_filename none',
      'cache deny all',
      'cache_mem 8 MB',
      'access_log none',
      'cache_log /dev/null',
      'cache_store_log none',
      `hosts_file ${join(folder, 'hosts')}`,
      'dns_nameservers 127.0.0.1',
      'shutdown_lifetime 0 seconds',
      'visible_hostname carectl-test',
      'acl SSL_ports port 1-65535',
      'acl CONNECT method CONNECT',
      'http_access allow localhost',
      'http_access deny all',
      '',
    ].join('\n'),
  );
  squid = spawn('squid', ['-N', '-f', join(folder, 'squid.conf')], { stdio: 'ignore' });
  for (let tries = 0; tries < 100 && !(await listening(proxyPort)); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
  if (!(await listening(proxyPort))) {
    skipped = 'squid did not start here: the real-squid test is skipped';
    console.log(skipped);
  }
});

after(async () => {
  if (squid && squid.exitCode === null) {
    const exited = new Promise((resolve) => squid!.once('exit', resolve));
    squid.kill('SIGKILL');
    await exited;
  }
  if (folder) await rm(folder, { recursive: true, force: true });
});

test("squid's 503 to CONNECT (the service's port is closed): it could not reach the service, and no report may have been created", async (t) => {
  if (skipped) return t.skip(skipped);
  const closed = await freePort();
  const clock = fakeClock();
  const result = await runCli(['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07', '--retries', '0'], {
    env: {
      CARECTL_BASE_URL: `https://unreach.test:${closed}`,
      CARECTL_USER: 'u',
      CARECTL_PASSWORD: 'p',
      HTTPS_PROXY: `http://127.0.0.1:${proxyPort}`,
      XDG_CONFIG_HOME: '/nonexistent/carectl-test-config',
    },
    now: clock.now,
    sleep: clock.sleep,
  });
  assert.equal(result.code, 1);
  assert.equal(
    result.stderr,
    `carectl: POST https://unreach.test:${closed}/v1.1/reports failed: the proxy 127.0.0.1:${proxyPort} (HTTPS_PROXY) could not reach the service (HTTP 503 Service Unavailable); the request never reached the service\n`,
  );
});
