/**
 * --query EXPR (JMESPath over what -o json would print): the JMESPath project's own compliance
 * tests through the compiled expression carectl uses, then the flag end to end on every kind of
 * command that prints json, and the checks that stop it before anything is sent.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../src/core/errors.js';
import { compileQuery } from '../src/output/query.js';
import { FIXTURES, type Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

/** test/fixtures/jmespath-compliance, from dist/test/ (see its README for where the files come from). */
const COMPLIANCE = fileURLToPath(new URL('../../test/fixtures/jmespath-compliance/', import.meta.url));

interface ComplianceCase {
  expression: string;
  result?: unknown;
  error?: string;
}

/**
 * Where the JMESPath Community specification, which the library follows, reads an expression
 * otherwise than the original's compliance tests: JEP-12's raw string literals take `\\` as one
 * backslash (as `\'` is one quote).
 */
const COMMUNITY_READINGS: Readonly<Record<string, unknown>> = { "'\\\\'": '\\' };

describe('JMESPath compliance (jmespath.test)', () => {
  const files = readdirSync(COMPLIANCE).filter((name) => name.endsWith('.json'));
  test('the vendored suite is there', () => assert.ok(files.length >= 15, files.join(' ')));
  for (const file of files) {
    test(file, async () => {
      const suites = JSON.parse(readFileSync(COMPLIANCE + file, 'utf8')) as Array<{ given: unknown; cases: ComplianceCase[] }>;
      let cases = 0;
      for (const { given, cases: list } of suites) {
        for (const { expression, result, error } of list) {
          cases += 1;
          const outcome = await compileQuery(expression).then(
            (query) => {
              try {
                return { value: query(given) };
              } catch (err) {
                return { err };
              }
            },
            (err: unknown) => ({ err }),
          );
          const what = `${file}: ${expression}`;
          if (expression in COMMUNITY_READINGS) assert.deepEqual(outcome, { value: COMMUNITY_READINGS[expression] }, what);
          else if (error === undefined) assert.deepEqual(outcome, { value: result }, what);
          // A mistake in the expression is known before anything is sent (exit 2); one the data shows (a type), only after.
          else if (error === 'syntax') assert.ok('err' in outcome && outcome.err instanceof UsageError, `${what}: a syntax error`);
          else assert.ok('err' in outcome || (outcome as { value: unknown }).value === undefined, `${what}: ${error}`);
        }
      }
      assert.ok(cases > 0);
    });
  }
});

describe('--query end to end', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await openSandbox();
  });
  after(() => sandbox.close());
  const cli = (...argv: string[]) => runCli(argv, { sandbox });

  test('a list: applied to its one array, whatever the default format', async () => {
    const json = JSON.parse((await cli('tags', 'list', '-o', 'json')).stdout) as Array<{ id: string; name: string; is_active: boolean }>;
    const inactive = json.filter((tag) => !tag.is_active).map((tag) => tag.id);
    for (const extra of [[], ['-o', 'json'], ['--columns', 'id,is_active']]) {
      const result = await cli('tags', 'list', ...extra, '--query', '[?!is_active].id');
      assert.deepEqual([result.code, result.stderr], [0, '']);
      assert.equal(result.stdout, `${JSON.stringify(inactive, null, 2)}\n`);
    }
    assert.equal((await cli('tags', 'list', '--query', 'length(@)')).stdout, `${json.length}\n`);
    // A person's terminal gets the same JSON (no table).
    assert.equal((await runCli(['tags', 'list', '--query', 'length(@)'], { sandbox, stdoutTTY: true, columns: 80 })).stdout, `${json.length}\n`);
  });

  test('a get: applied to its object; several ids, to their array', async () => {
    assert.equal(
      (await cli('tags', 'get', FIXTURES.activeTagIds[0], '--query', '{id: id, active: is_active}')).stdout,
      `{\n  "id": "7005",\n  "active": true\n}\n`,
    );
    // Several ids print one array as json, so the query sees that array.
    const several = await cli('conversations', 'get', '500001', '500002', '--query', '[].id');
    assert.deepEqual([several.code, several.stdout], [0, '[\n  "500001",\n  "500002"\n]\n']);
  });

  test('content rows, update results, config list, reports and api', async () => {
    const items = await cli('conversations', 'content', '500002', '--query', '[].id');
    assert.equal(items.stdout, `${JSON.stringify(Object.values(FIXTURES.multiPlatformItemIds), null, 2)}\n`);
    const { data } = sandbox;
    const [id] = data.conversations
      .filter((c) => Number(c.id) > 500003 && c.channel_ids.every((channel) => data.byId.channels.get(channel)!.can_manage_conversations))
      .filter((c) => c.tag_ids.every((tag) => data.byId.tags.get(tag)!.is_active))
      .map((c) => c.id);
    const update = await cli('conversations', 'update', id!, '--status', 'on_hold', '--query', '[].[id, ok]');
    assert.deepEqual([update.code, JSON.parse(update.stdout)], [0, [[id, true]]]);
    const report = await cli('reports', 'get', FIXTURES.reports.generatedId, '--query', 'id');
    assert.equal(report.stdout, `"${FIXTURES.reports.generatedId}"\n`);
    assert.equal((await cli('api', 'v1.3/tags/7005', '--query', 'tag.id')).stdout, '"7005"\n');
    assert.equal((await runCli(['config', 'list', '--query', 'length(@)'], { env: { XDG_CONFIG_HOME: '/nonexistent/q' } })).stdout, '0\n');
  });

  test('a bad expression, -o other than json, or a command that prints no json: exit 2, nothing sent', async () => {
    const before = sandbox.requests.length;
    for (const [argv, message] of [
      [['tags', 'list', '--query', '[?'], /^carectl: --query: Syntax error: .* \(a JMESPath expression, such as '\[\]\.id'/],
      [['tags', 'list', '--query', 'id', '-o', 'csv'], /^carectl: --query prints JSON: it does not go with -o csv; leave -o out\n$/],
      [['reports', 'download', '60001', '--query', 'id'], /^carectl: --query: `carectl reports download` does not take it\n$/],
    ] as const) {
      const result = await cli(...argv);
      assert.deepEqual([result.code, result.stdout], [2, ''], argv.join(' '));
      assert.match(result.stderr, message);
    }
    assert.equal(apiRequests(sandbox, before).length, 0);
  });

  test('a type the data shows wrong (length of a boolean): exit 1, one line, no output', async () => {
    const result = await cli('tags', 'list', '--query', 'length([0].is_active)');
    assert.deepEqual([result.code, result.stdout], [1, '']);
    assert.match(result.stderr, /^carectl: --query: Invalid type: length\(\) expected argument 1 .* but received type boolean instead\.\n$/);
  });
});

describe('--query keeps numbers a double cannot hold', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi(() => ({ text: '{"tags":[{"id":9007199254740993,"name":"a"},{"id":7,"name":"b"}],"paging":{"next_page":null}}' }));
  });
  after(() => api.close());

  test('an id past 2^53 is selected and printed as the service sent it', async () => {
    const result = await runCli(['tags', 'list', '--query', '[].id'], { env: scriptedEnv(api) });
    assert.deepEqual([result.code, result.stdout], [0, '[\n  9007199254740993,\n  7\n]\n']);
  });
});
