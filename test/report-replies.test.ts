/** Report ids and states from a service that answers what no honest one would. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeClock, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

const CREATE = ['reports', 'create', '--account', '1001', '--from', '2026-06-01', '--to', '2026-06-07'];

describe('report ids named by the service', () => {
  let api: ScriptedApi;
  let created: unknown;
  before(async () => {
    api = await scriptedApi((request) => {
      if (request.method === 'POST') return { json: { report: { id: created, url: 'x' } } };
      const id = decodeURIComponent(/reports\/([^?]*)/.exec(request.url)?.[1] ?? '');
      return { json: { report: { id, url: 'x' } } };
    });
  });
  after(() => api.close());

  test('an id with shell syntax is quoted in the command printed to pick the wait up', async () => {
    created = "1;touch it's";
    const clock = fakeClock();
    const out = await runCli([...CREATE, '--wait', '--timeout', '2s'], { env: scriptedEnv(api), now: clock.now, sleep: clock.sleep });
    assert.equal(out.code, 6, out.stderr);
    assert.match(out.stderr, /keep waiting with: carectl reports wait '1;touch it'\\''s'\n$/);
  });

  for (const id of ['..', '.', 'a/../..', ' 60001', '-rf', 'x\u0007y', '\ud800', '6\udc00']) {
    test(`an id ${JSON.stringify(id)} is refused before it goes into a path`, async () => {
      created = id;
      const from = api.requests.length;
      const out = await runCli([...CREATE, '--wait'], { env: scriptedEnv(api) });
      assert.equal(out.code, 1, out.stderr);
      assert.match(
        out.stderr,
        /named it ".*", which is not a report id; the report may have been created all the same: look with carectl reports list --account 1001 before trying again\n$/,
      );
      assert.deepEqual(
        api.requests.slice(from).map((r) => r.method),
        ['POST'],
      );
    });
  }

  test('a user-typed id with a / is a usage error too, nothing sent', async () => {
    const from = api.requests.length;
    const out = await runCli(['reports', 'wait', '60001/..'], { env: scriptedEnv(api) });
    assert.equal(out.code, 2);
    assert.equal(out.stderr, 'carectl: "60001/.." is not a report id\n');
    assert.equal(api.requests.length, from);
  });
});

describe("a report's failure field", () => {
  let api: ScriptedApi;
  const failures: Record<string, unknown> = { '1': false, '2': { phase: 'export', code: 7 }, '3': '', '4': 'the export phase failed', '5': true, '6': 0 };
  before(async () => {
    api = await scriptedApi((request) => {
      const id = /reports\/(\d+)/.exec(request.url)?.[1] ?? '';
      return { json: { report: { id, url: 'x', generated_date: '2026-06-08T10:00:00', download: 'http://127.0.0.1:9/r.csv', failure: failures[id] } } };
    });
  });
  after(() => api.close());

  for (const [id, code, stderr] of [
    ['1', 0, ''],
    ['3', 0, ''],
    ['2', 5, 'carectl: report 2 failed: {"phase":"export","code":7}\n'],
    ['4', 5, 'carectl: report 4 failed: the export phase failed\n'],
    ['5', 5, 'carectl: report 5 failed: true\n'],
    ['6', 0, ''],
  ] as const) {
    test(`failure ${JSON.stringify(failures[id])}: exit ${code}`, async () => {
      const out = await runCli(['reports', 'wait', id, '--quiet'], { env: scriptedEnv(api) });
      assert.equal(out.stderr, stderr);
      assert.equal(out.code, code);
      if (code === 0) assert.equal(out.stdout, `${id}\n`);
    });
  }
});

test('reports wait --timeout against a service that never answers: the timeout bounds the requests too, exit 6', async () => {
  const api = await scriptedApi(() => undefined);
  try {
    const clock = fakeClock();
    const out = await runCli(['reports', 'wait', '60001', '--timeout', '1s', '--quiet'], { env: scriptedEnv(api), now: clock.now, sleep: clock.sleep });
    assert.equal(out.code, 6, out.stderr);
    assert.equal(out.stderr, 'carectl: report 60001 had no answer from the service after 1s; keep waiting with: carectl reports wait 60001\n');
    assert.equal(api.requests.length, 1, 'no retry past the deadline');
  } finally {
    await api.close();
  }
});

test('reports wait --timeout against a service that answers 503 with Retry-After or a wrong reply: it waits the whole timeout and says what it answered', async () => {
  let wrong = false;
  const api = await scriptedApi(() =>
    wrong ? { json: { conversation: { id: '1', url: 'x' } } } : { status: 503, json: { status: 'error', message: 'busy' }, headers: { 'retry-after': '1' } },
  );
  try {
    const clock = fakeClock();
    const started = clock.now();
    const busy = await runCli(['reports', 'wait', '60001', '--timeout', '2s'], { env: scriptedEnv(api), now: clock.now, sleep: clock.sleep });
    assert.equal(busy.code, 6, busy.stderr);
    assert.ok(clock.now() - started >= 2000, `ended after ${clock.now() - started} ms of a 2 s timeout`);
    assert.match(
      busy.stderr,
      /report 60001 had no usable answer from the service \(busy \(HTTP 503\)\) after 2s; keep waiting with: carectl reports wait 60001\n$/,
    );
    wrong = true;
    const other = await runCli(['reports', 'wait', '60001', '--timeout', '2s'], { env: scriptedEnv(api), now: clock.now, sleep: clock.sleep });
    assert.equal(other.code, 6, other.stderr);
    assert.match(other.stderr, /report 60001 had no usable answer from the service \(.*report.*\) after 2s/);
  } finally {
    await api.close();
  }
});
