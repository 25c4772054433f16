/**
 * Connections that last at a steady two in flight (field test, issue 34): the pool closed an idle
 * connection a turn of the event loop after its answer while another waited for its first answer,
 * before carectl had decoded the page and sent its next request. Two connections never answered
 * while both were open, the server was never seen to serve more than one, and every request
 * opened a connection of its own: 112 in 114 behind nginx's limit_conn 2, ~110 at --parallel 2.
 * The race needs a service in another process (one in this process answers on the same event loop
 * that decodes): the sandbox runs as `carectl sandbox`, with a latency, as a user runs it.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { runCli } from './helpers.js';

const BIN = fileURLToPath(new URL('../../bin/carectl.js', import.meta.url));
const CONVERSATIONS = 1000;
/**
 * A close waits twice an answer's time, and carectl's next request follows its last answer by its
 * decoding: 2–13 ms here, more with both CPUs busy. At 100 ms an answer, a loaded machine keeps
 * well inside that.
 */
const LATENCY = '100ms';

let service: ChildProcess;
let env: Record<string, string>;
before(async () => {
  service = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', '--conversations', String(CONVERSATIONS), '--latency', LATENCY], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let said = '';
  service.stdout!.setEncoding('utf8');
  for await (const chunk of service.stdout!) {
    said += chunk as string;
    if (/password: .*\n/.test(said)) break;
  }
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(said)?.[1];
  const password = /password: (\S+)/.exec(said)?.[1];
  assert.ok(url !== undefined && password !== undefined, `the sandbox said: ${said}`);
  env = { CARECTL_BASE_URL: url, CARECTL_USER: 'demo', CARECTL_PASSWORD: password };
});
after(async () => {
  service.kill();
  if (service.exitCode === null && service.signalCode === null) await once(service, 'exit');
});

const LIST = ['conversations', 'list', '-o', 'ndjson', '--fields', 'status,tags,author'];

test('--parallel 2 over a whole list: two connections, none closed; the records of --parallel 1', async () => {
  const expected = await runCli([...LIST, '--parallel', '1'], { env });
  assert.equal(expected.code, 0, expected.stderr);
  assert.equal(expected.stdout.split('\n').length, CONVERSATIONS + 1);
  const result = await runCli([...LIST, '--parallel', '2', '--verbose'], { env });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, expected.stdout);
  const answers = result.stderr.split('\n').filter((line) => line.startsWith('< 200 '));
  const opened = answers.filter((line) => line.includes('new connection')).length;
  const closed = result.stderr.split('\n').filter((line) => line.startsWith('  connections: closed an idle one')).length;
  assert.ok(answers.length > 20, `${answers.length} answers`);
  assert.deepEqual({ opened, closed }, { opened: 2, closed: 0 }, `of ${answers.length} answers`);
});
