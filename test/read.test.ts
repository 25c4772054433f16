/**
 * Reading every resource end to end: carectl in-process against the sandbox over loopback.
 * The oracle is the sandbox's own API read with plain fetch, so these tests check the CLI's
 * paging, envelopes, fields and formats against what the service really serves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { RESOURCES, defaultVersion, type ResourceSpec } from '../src/catalogue/index.js';
import { apiRequests, openSandbox, runCli } from './helpers.js';
import { tsvField } from '../src/output/index.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await openSandbox();
});
after(() => sandbox.close());

type Row = Record<string, unknown>;

/** Every record of a list, read with fetch by following next_page: the oracle. */
async function oracleList(path: string): Promise<Row[]> {
  const auth = 'Basic ' + Buffer.from(`${sandbox.user}:${sandbox.password}`).toString('base64');
  const records: Row[] = [];
  let url: string | null = `${sandbox.baseUrl}/${path}`;
  while (url) {
    const reply = await fetch(url, { headers: { authorization: auth } });
    assert.equal(reply.status, 200, `oracle ${url}`);
    const body = (await reply.json()) as Row | Row[];
    const key = Object.keys(body).find((k) => k !== 'paging' && Array.isArray((body as Row)[k]));
    const page = Array.isArray(body) ? body : ((body as Row)[key as string] as Row[]);
    records.push(...page);
    const paging = Array.isArray(body) ? undefined : ((body as Row).paging as { next_page?: string | null } | undefined);
    url = page.length > 0 ? (paging?.next_page ?? null) : null;
  }
  return records;
}

async function oracleGet(path: string): Promise<Row> {
  const auth = 'Basic ' + Buffer.from(`${sandbox.user}:${sandbox.password}`).toString('base64');
  const reply = await fetch(`${sandbox.baseUrl}/${path}`, { headers: { authorization: auth } });
  assert.equal(reply.status, 200);
  const body = (await reply.json()) as Row;
  const inner = Object.values(body).find((v) => v && typeof v === 'object' && !Array.isArray(v)) as Row | undefined;
  return 'id' in body ? body : (inner as Row);
}

const allFields = (spec: ResourceSpec, single = false): string => [...spec.fields, ...(single ? (spec.singleFields ?? []) : [])].join(',');

/** The oracle path of a resource's whole list, with every field (what -o json asks for). */
function oraclePath(spec: ResourceSpec, extra = ''): string {
  const version = defaultVersion(spec);
  const params = new URLSearchParams();
  if (spec.fieldsParam) params.set('fields', allFields(spec));
  if (spec.paging === 'offset') params.set('limit', '50');
  else if (spec.paging !== 'none') params.set('page_size', '50');
  return `${version}/${spec.path}?${params.toString()}${extra}`;
}

async function someAuthorIds(count: number): Promise<string[]> {
  const conversations = await oracleList('v1.3/conversations?status=unread&fields=author&page_size=50');
  return [...new Set(conversations.map((c) => (c.author as { id: string }).id))].slice(0, count);
}

const FORMATS = ['json', 'ndjson', 'csv', 'tsv', 'table'] as const;

describe('every resource, list and get, every format', () => {
  for (const spec of RESOURCES) {
    test(`${spec.name} list`, async () => {
      const ids = spec.listByIds ? await someAuthorIds(7) : [];
      const expected = spec.listByIds
        ? await oracleList(`${defaultVersion(spec)}/${spec.path}?id=${ids.join(',')}&fields=${allFields(spec)}`)
        : spec.requireOneOf
          ? [...(await oracleList(oraclePath(spec, '&is_priority=true'))), ...(await oracleList(oraclePath(spec, '&is_priority=false')))]
          : await oracleList(oraclePath(spec));
      assert.ok(expected.length > 0, 'the sandbox has data for every resource');
      const args = [spec.name, 'list', ...ids];

      const json = await runCli([...args, '-o', 'json'], { sandbox });
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), expected);

      const ndjson = await runCli([...args, '-o', 'ndjson'], { sandbox });
      assert.equal(ndjson.code, 0, ndjson.stderr);
      assert.deepEqual(
        ndjson.stdout
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line)),
        expected,
      );

      const idColumn = spec.defaultColumns[0] as string;
      for (const format of ['csv', 'tsv'] as const) {
        const out = await runCli([...args, '-o', format], { sandbox });
        assert.equal(out.code, 0, out.stderr);
        const lines = out.stdout.split(format === 'csv' ? '\r\n' : '\n');
        assert.equal(lines.pop(), '', 'output ends with a line break');
        assert.equal(lines[0], spec.defaultColumns.join(format === 'csv' ? ',' : '\t'));
        assert.equal(lines.length, expected.length + 1);
        if (idColumn === 'id') {
          assert.deepEqual(
            lines.slice(1).map((line) => line.split(format === 'csv' ? ',' : '\t')[0]),
            expected.map((r) => String(r.id)),
          );
        }
      }

      const table = await runCli([...args, '-o', 'table'], { sandbox });
      assert.equal(table.code, 0, table.stderr);
      // A line starting blank holds a value too wide for its column on the row above (an id is never cut).
      const rows = table.stdout
        .trimEnd()
        .split('\n')
        .filter((line) => !line.startsWith(' '));
      assert.deepEqual(
        rows[0]?.split(/\s{2,}/),
        spec.defaultColumns.map((c) => c.toUpperCase()),
      );
      assert.equal(rows.length, expected.length + 1);
    });

    if (!spec.verbs.includes('get')) continue;
    test(`${spec.name} get`, async () => {
      const listed = spec.listByIds
        ? await oracleList(`${defaultVersion(spec)}/${spec.path}?id=${(await someAuthorIds(1)).join(',')}`)
        : await oracleList(spec.requireOneOf ? `${oraclePath(spec)}&status=unread` : oraclePath(spec));
      const id = String(listed[0]?.id);
      const version = defaultVersion(spec);
      const expected = await oracleGet(`${version}/${spec.path}/${encodeURIComponent(id)}?fields=${allFields(spec, true)}`);

      const json = await runCli([spec.name, 'get', id, '-o', 'json'], { sandbox });
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), expected);
      assert.ok(json.stdout.endsWith('}\n'));

      const ndjson = await runCli([spec.name, 'get', id, '-o', 'ndjson'], { sandbox });
      assert.equal(ndjson.stdout, JSON.stringify(expected) + '\n');

      for (const format of FORMATS.slice(2)) {
        const out = await runCli([spec.name, 'get', id, '-o', format], { sandbox });
        assert.equal(out.code, 0, out.stderr);
        if (format === 'table') {
          // every field of the record, one `key  value` line each (nested ones under dotted keys)
          const keys = out.stdout
            .trimEnd()
            .split('\n')
            .map((l) => l.split(/\s+/)[0] as string);
          assert.match(out.stdout, new RegExp(`^id +${id.replace(/[.:]/g, '\\$&')}\n`));
          for (const field of Object.keys(expected))
            assert.ok(
              keys.some((key) => key === field || key.startsWith(`${field}.`)),
              `${spec.name} get: ${field} is shown`,
            );
          for (const computed of spec.computed ?? []) assert.ok(keys.includes(computed.name), `${spec.name} get: ${computed.name} is shown`);
        } else {
          const sep = format === 'csv' ? ',' : '\t';
          const lines = out.stdout.split(format === 'csv' ? '\r\n' : '\n');
          assert.deepEqual(lines.length, 3);
          assert.equal(lines[0], spec.defaultColumns.join(sep));
          assert.equal(lines[1]?.split(sep)[0], id);
        }
      }
    });

    test(`${spec.name} get with several ids: a list of one record each, in the order given; an unknown id is exit 4, the rest printed`, async () => {
      const listed = spec.listByIds
        ? await oracleList(`${defaultVersion(spec)}/${spec.path}?id=${(await someAuthorIds(2)).join(',')}`)
        : await oracleList(spec.requireOneOf ? `${oraclePath(spec)}&status=unread` : oraclePath(spec));
      const ids = listed
        .slice(0, 2)
        .map((record) => String(record.id))
        .reverse();
      assert.equal(ids.length, 2);
      const version = defaultVersion(spec);
      const expected = await Promise.all(ids.map((id) => oracleGet(`${version}/${spec.path}/${encodeURIComponent(id)}?fields=${allFields(spec, true)}`)));
      const json = await runCli([spec.name, 'get', ...ids, '-o', 'json'], { sandbox });
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), expected);
      const piped = await runCli([spec.name, 'get', '-', '-o', 'json'], { sandbox, stdin: ids.join('\n') + '\n' });
      assert.equal(piped.stdout, json.stdout);
      const missing = await runCli([spec.name, 'get', ids[0]!, 'nosuch404', ids[1]!, '-o', 'tsv', '--columns', 'id'], { sandbox });
      assert.equal(missing.code, 4, missing.stderr);
      assert.equal(missing.stdout, `id\n${ids[0]}\n${ids[1]}\n`);
      assert.match(missing.stderr, /nosuch404/);
    });
  }
});

describe('exact output', () => {
  test('tags list --inactive in csv, tsv, table, json and ndjson', async () => {
    const inactive = (await oracleList('v1.3/tags?is_active=false&fields=name,is_active&page_size=50')).map((t) => ({
      id: String(t.id),
      name: String(t.name),
    }));
    assert.ok(inactive.length >= 2);
    const csv = await runCli(['tags', 'list', '--inactive', '--columns', 'id,name,is_active', '-o', 'csv'], { sandbox });
    assert.equal(csv.stdout, ['id,name,is_active', ...inactive.map((t) => `${t.id},${t.name},false`)].join('\r\n') + '\r\n');

    const tsv = await runCli(['tags', 'list', '--inactive', '--columns', 'id,name', '--no-header'], { sandbox });
    assert.equal(tsv.stdout, inactive.map((t) => `${t.id}\t${t.name}\n`).join(''));

    const idWidth = Math.max(2, ...inactive.map((t) => t.id.length));
    const nameWidth = Math.max(4, ...inactive.map((t) => t.name.length));
    const table = await runCli(['tags', 'list', '--inactive', '-o', 'table', '--columns', 'id,name,is_active'], { sandbox });
    const expectedTable = [
      `${'ID'.padEnd(idWidth)}  ${'NAME'.padEnd(nameWidth)}  IS_ACTIVE`,
      ...inactive.map((t) => `${t.id.padEnd(idWidth)}  ${t.name.padEnd(nameWidth)}  false`),
    ];
    assert.equal(table.stdout, expectedTable.join('\n') + '\n');

    const json = await runCli(['tags', 'list', '--inactive', '-o', 'json', '--fields', 'name'], { sandbox });
    const records = inactive.map((t) => ({ id: t.id, url: `${sandbox.baseUrl}/v1.3/tags/${t.id}`, name: t.name }));
    assert.equal(json.stdout, `[\n${records.map((r) => JSON.stringify(r, null, 2).replace(/^/gm, '  ')).join(',\n')}\n]\n`);

    const ndjson = await runCli(['tags', 'list', '--inactive', '-o', 'ndjson', '--fields', 'name'], { sandbox });
    assert.equal(ndjson.stdout, records.map((r) => JSON.stringify(r) + '\n').join(''));
  });

  test('--fields sets the columns to id plus those fields and asks only for them', async () => {
    const start = sandbox.requests.length;
    const out = await runCli(['queues', 'list', '--fields', 'name,rank', '--limit', '3', '-o', 'csv', '--quiet'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.split('\r\n')[0], 'id,name,rank');
    const [request] = apiRequests(sandbox, start);
    assert.equal(new URL(request!.url, 'http://x').searchParams.get('fields'), 'name,rank');
  });

  test('each output asks only for the fields it shows; json asks for whole records', async () => {
    const fieldsOf = async (argv: string[]): Promise<string | null> => {
      const start = sandbox.requests.length;
      const out = await runCli([...argv, '--quiet'], { sandbox });
      assert.equal(out.code, 0, out.stderr);
      return new URL(apiRequests(sandbox, start)[0]!.url, 'http://x').searchParams.get('fields');
    };
    assert.equal(await fieldsOf(['conversations', 'list', '--status', 'unread', '--limit', '1']), 'status,is_priority,author,channels,tags,assigned_to');
    assert.equal(await fieldsOf(['conversations', 'get', '500002', '--columns', 'id,close_reason,author.screen_name']), 'close_reason,author');
    assert.equal(
      await fieldsOf(['users', 'get', '3001', '-o', 'json']),
      'first_name,last_name,email,timezone,date_joined,last_login,is_expert,crowds_name,is_active,account',
    );
    assert.equal(await fieldsOf(['tags', 'list', '-o', 'ndjson', '--fields', 'name', '--limit', '1']), 'name');
    // --fields is sent as asked even when --columns picks what is shown.
    assert.equal(await fieldsOf(['tags', 'list', '--fields', 'name', '--columns', 'id', '--limit', '1']), 'name');
    assert.equal(await fieldsOf(['conversations', 'list', '--status', 'unread', '--fields', 'status', '--columns', 'id,tags', '--limit', '1']), 'status,tags');
  });

  test('dotted --columns reach into nested records', async () => {
    const expected = await oracleList('v1.3/conversations?status=closed&fields=author,channels&page_size=50');
    const out = await runCli(['conversations', 'list', '--status', 'closed', '--columns', 'id,author.id,channels.0.id', '--no-header'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    const want = expected.map((c) => `${c.id}\t${(c.author as Row).id}\t${((c.channels as Row[])[0] as Row).id}\n`).join('');
    assert.equal(out.stdout, want);
  });

  test('a name after an array in --columns takes it from every element (tags.name)', async () => {
    const expected = await oracleList('v1.3/conversations?status=closed&fields=tags,channels&page_size=50');
    const out = await runCli(['conversations', 'list', '--status', 'closed', '--columns', 'id,tags.name,channels.id', '-o', 'csv'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    // A list cell is a JSON array, quoted as csv quotes any cell with commas or quotes.
    const names = (c: Row, key: string, part: string): string => JSON.stringify((c[key] as Row[]).map((item) => item[part]));
    const quoted = (text: string): string => (/[",]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
    const want = expected.map((c) => `${c.id},${quoted(names(c, 'tags', 'name'))},${quoted(names(c, 'channels', 'id'))}\r\n`).join('');
    assert.ok(
      expected.some((c) => (c.tags as Row[]).length > 1),
      'some conversation has several tags',
    );
    assert.equal(out.stdout, 'id,tags.name,channels.id\r\n' + want);
  });
});

describe('ids and colour', () => {
  test('authors list takes ids as arguments, --id, or - (stdin, one per line)', async () => {
    const ids = await someAuthorIds(60);
    const expected = ids.join('\n') + '\n';
    const byArgs = await runCli(['authors', 'list', ...ids, '--columns', 'id', '--no-header'], { sandbox });
    assert.equal(byArgs.stdout, expected);
    const byFlag = await runCli(['authors', 'list', '--id', ids.join(','), '--columns', 'id', '--no-header'], { sandbox });
    assert.equal(byFlag.stdout, expected);
    const start = sandbox.requests.length;
    const byStdin = await runCli(['authors', 'list', '-', '--columns', 'id', '--no-header'], { sandbox, stdin: `  ${ids.join('\n\n')}  \n` });
    assert.equal(byStdin.stdout, expected);
    assert.equal(apiRequests(sandbox, start).length, 2, 'sixty ids go in two requests of at most fifty');
    const none = await runCli(['authors', 'list'], { sandbox });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /give at least one id/);
  });

  test('authors list asks for a repeated id once and prints its record once', async () => {
    const [first, second] = await someAuthorIds(2);
    const start = sandbox.requests.length;
    const result = await runCli(['authors', 'list', first!, second!, '--id', `${first},${first}`, '--columns', 'id', '--no-header'], { sandbox });
    assert.equal(result.stdout, `${first}\n${second}\n`);
    assert.equal(result.stderr, `ids: ${first} was given more than once; each id is taken once\n`);
    const [request] = apiRequests(sandbox, start);
    assert.equal(new URL(request!.url, 'http://x').searchParams.get('id'), `${first},${second}`);
  });

  test('ids the service did not return are named on stderr, exit 4, after the records it did return', async () => {
    const [first, second] = await someAuthorIds(2);
    const result = await runCli(['authors', 'list', first!, 'nope:1', second!, 'm:999999999', '--columns', 'id', '--no-header'], { sandbox });
    assert.equal(result.code, 4);
    assert.equal(result.stdout, `${first}\n${second}\n`);
    assert.equal(result.stderr, 'carectl: no authors with the ids nope:1, m:999999999\n');
    const one = await runCli(['authors', 'list', first!, 'nope:1', '-o', 'json'], { sandbox });
    assert.equal(one.code, 4);
    assert.deepEqual(
      (JSON.parse(one.stdout) as Row[]).map((r) => r.id),
      [first],
    );
    assert.equal(one.stderr, 'carectl: no author with the id nope:1\n');
  });

  test('--id given twice takes the ids of both, in order', async () => {
    const [first, second] = await someAuthorIds(2);
    const start = sandbox.requests.length;
    const result = await runCli(['authors', 'list', '--id', first!, '--id', second!, '--columns', 'id', '--no-header'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${first}\n${second}\n`);
    const [request] = apiRequests(sandbox, start);
    assert.equal(new URL(request!.url, 'http://x').searchParams.get('id'), `${first},${second}`);
  });

  test('on a terminal the default is a table: rows for a list, key/value lines for one record', async () => {
    const one = await runCli(['tags', 'get', '7005'], { sandbox, stdoutTTY: true, env: { NO_COLOR: '1' } });
    assert.match(one.stdout, /^id +7005\nurl +http:\S+\/v1\.3\/tags\/7005\nname +\S+\nis_active +true\n$/);
    const list = await runCli(['tags', 'list', '--limit', '2', '--quiet'], { sandbox, stdoutTTY: true, env: { NO_COLOR: '1' } });
    assert.match(list.stdout, /^ID +NAME +IS_ACTIVE\n\d+ +.+\n\d+ +.+\n$/);
  });

  test('a later page with longer cells widens the table instead of cutting them, up to the terminal width', async () => {
    const argv = ['conversations', 'list', '--status', 'unread', '--page-size', '3', '--columns', 'id,tags.name'];
    // Each row as the table shows it: the tag names joined with commas, escaped as tsv escapes text.
    const records = JSON.parse((await runCli([...argv, '-o', 'json'], { sandbox })).stdout) as Array<{ id: string; tags: Array<{ name: string }> }>;
    const cells = records.map(({ id, tags }) => [id, tsvField(tags.map((tag) => tag.name).join(','))]);
    const firstPageWidth = Math.max(9, ...cells.slice(0, 3).map(([, tags]) => tags!.length));
    assert.ok(
      cells.slice(3).some(([, tags]) => tags!.length > firstPageWidth),
      'the data has a longer cell after the first page',
    );
    for (const terminal of [undefined, 400]) {
      const table = await runCli([...argv, '-o', 'table'], { sandbox, ...(terminal && { stdoutTTY: true, columns: terminal, env: { NO_COLOR: '1' } }) });
      assert.equal(table.code, 0, table.stderr);
      const rows = table.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.split(/ {2,}/));
      assert.deepEqual(
        rows,
        cells.map(([id, tags]) => (tags === '' ? [id] : [id, tags])),
        `terminal: ${terminal}`,
      );
    }
    // A terminal too narrow still gets lines that fit it.
    const narrow = await runCli([...argv, '-o', 'table'], { sandbox, stdoutTTY: true, columns: 40, env: { NO_COLOR: '1' } });
    assert.ok(
      narrow.stdout.split('\n').every((line) => line.length <= 40),
      narrow.stdout,
    );
  });

  test('colour only on a terminal, unless --color, --no-color, NO_COLOR or FORCE_COLOR say otherwise', async () => {
    const bold = (out: { stdout: string }): boolean => out.stdout.includes('\x1b[1m');
    const argv = ['tags', 'list', '--inactive', '-o', 'table'];
    assert.equal(bold(await runCli(argv, { sandbox, stdoutTTY: true })), true);
    assert.equal(bold(await runCli(argv, { sandbox })), false);
    assert.equal(bold(await runCli([...argv, '--no-color'], { sandbox, stdoutTTY: true })), false);
    assert.equal(bold(await runCli(argv, { sandbox, stdoutTTY: true, env: { NO_COLOR: '1' } })), false);
    assert.equal(bold(await runCli(argv, { sandbox, env: { FORCE_COLOR: '1' } })), true);
    // FORCE_COLOR=0 (or false) forces colour off, as chalk and node read it.
    for (const off of ['0', 'false']) assert.equal(bold(await runCli(argv, { sandbox, stdoutTTY: true, env: { FORCE_COLOR: off } })), false, off);
    assert.equal(bold(await runCli([...argv, '--color'], { sandbox })), true);
  });

  test('the CLICOLOR convention, as gh reads it: CLICOLOR=0 turns colour off, CLICOLOR_FORCE (not 0) on', async () => {
    const bold = (out: { stdout: string }): boolean => out.stdout.includes('\x1b[1m');
    const argv = ['tags', 'list', '--inactive', '-o', 'table'];
    assert.equal(bold(await runCli(argv, { sandbox, stdoutTTY: true, env: { CLICOLOR: '0' } })), false);
    assert.equal(bold(await runCli(argv, { sandbox, stdoutTTY: true, env: { CLICOLOR: '1' } })), true);
    assert.equal(bold(await runCli(argv, { sandbox, env: { CLICOLOR_FORCE: '1' } })), true);
    assert.equal(bold(await runCli(argv, { sandbox, env: { CLICOLOR_FORCE: '0' } })), false);
    // CLICOLOR_FORCE wins over CLICOLOR=0, as the convention says; NO_COLOR and --no-color over both.
    assert.equal(bold(await runCli(argv, { sandbox, env: { CLICOLOR: '0', CLICOLOR_FORCE: '1' } })), true);
    assert.equal(bold(await runCli(argv, { sandbox, env: { CLICOLOR_FORCE: '1', NO_COLOR: '1' } })), false);
    assert.equal(bold(await runCli([...argv, '--no-color'], { sandbox, env: { CLICOLOR_FORCE: '1' } })), false);
  });
});

describe('paging', () => {
  const cases: Array<[string, string[], string]> = [
    ['skip style (tags)', ['tags', 'list', '--page-size', '7'], 'v1.3/tags?page_size=50'],
    ['offset style (users)', ['users', 'list', '--page-size', '13'], 'v1.2/users?limit=50'],
    ['token style (annotation types)', ['annotation-types', 'list', '--page-size', '4'], 'api/1/annotation-types?page_size=50'],
    ['token style (annotations)', ['annotations', 'list', '--page-size', '9'], 'api/1/annotations?page_size=50'],
    [
      'skip style with a date bound (conversations)',
      // One chain (--parallel 1): slices read side by side each move forward on their own.
      ['conversations', 'list', '--status', 'unread', '--page-size', '11', '--parallel', '1'],
      'v1.3/conversations?status=unread&page_size=50',
    ],
  ];
  for (const [name, argv, oracle] of cases) {
    test(`${name}: to the last page, nothing missing or repeated`, async () => {
      const expectedIds = (await oracleList(oracle)).map((r) => JSON.stringify(r.id ?? r));
      const start = sandbox.requests.length;
      const out = await runCli([...argv, '-o', 'ndjson'], { sandbox });
      assert.equal(out.code, 0, out.stderr);
      const got = out.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Row)
        .map((r) => JSON.stringify(r.id ?? r));
      if (argv[0] === 'annotations') {
        assert.equal(got.length, expectedIds.length);
      } else {
        assert.deepEqual(got, expectedIds);
        assert.equal(new Set(got).size, got.length, 'no record repeated');
      }
      const requests = apiRequests(sandbox, start);
      const pageSize = Number(argv[argv.indexOf('--page-size') + 1]);
      assert.ok(requests.length >= Math.ceil(expectedIds.length / pageSize), 'more than one page was read');
      // prev_page is never followed: no page is asked for twice, and positions only move forward.
      assert.equal(new Set(requests.map((r) => r.url)).size, requests.length, 'no page requested twice');
      const positions = requests
        .map((r) => new URL(r.url, 'http://x').searchParams)
        .map((q) => q.get('skip') ?? q.get('offset'))
        .filter((position) => position !== null)
        .map(Number);
      assert.deepEqual(
        positions,
        [...positions].sort((a, b) => a - b),
        'pages only move forward',
      );
    });
  }

  test('offset style keeps its filters on every page (the service drops them from its links)', async () => {
    const all = await oracleList('v1.2/users?limit=100&fields=timezone');
    const zone = String(all[0]!.timezone);
    const expected = (await oracleList(`v1.2/users?limit=100&fields=timezone&timezone=${encodeURIComponent(zone)}`)).map((u) => String(u.id));
    assert.ok(expected.length > 3 && expected.length < all.length);
    const start = sandbox.requests.length;
    const out = await runCli(['users', 'list', '--timezone', zone, '--page-size', '2', '--columns', 'id', '--no-header'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(out.stdout.trimEnd().split('\n'), expected);
    const requests = apiRequests(sandbox, start).map((r) => new URL(r.url, 'http://x').searchParams);
    assert.ok(requests.length >= expected.length / 2);
    assert.ok(
      requests.every((q) => q.get('timezone') === zone),
      'every page request carries the filter',
    );
  });

  test('conversations list without status or priority is the union of both is_priority queries', async () => {
    const priority = await oracleList('v1.3/conversations?is_priority=true&page_size=50');
    const normal = await oracleList('v1.3/conversations?is_priority=false&page_size=50');
    const start = sandbox.requests.length;
    // One request at a time: the queries one after the other.
    const out = await runCli(['conversations', 'list', '--columns', 'id', '--no-header', '--parallel', '1'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    const ids = out.stdout.trimEnd().split('\n');
    assert.deepEqual(
      ids,
      [...priority, ...normal].map((c) => String(c.id)),
    );
    assert.equal(new Set(ids).size, sandbox.data.conversations.length, 'every conversation exactly once');
    const queries = apiRequests(sandbox, start).map((r) => new URL(r.url, 'http://x').searchParams.get('is_priority'));
    const firstFalse = queries.indexOf('false');
    assert.ok(
      firstFalse > 0 && queries.slice(0, firstFalse).every((q) => q === 'true') && queries.slice(firstFalse).every((q) => q === 'false'),
      'true first, then false',
    );
  });

  test('--priority and --status run one query', async () => {
    const start = sandbox.requests.length;
    const out = await runCli(['conversations', 'list', '--no-priority', '--status', 'on_hold', '--columns', 'id', '--no-header'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    const urls = apiRequests(sandbox, start).map((r) => new URL(r.url, 'http://x').searchParams);
    assert.ok(urls.every((p) => p.get('is_priority') === 'false' && p.get('status') === 'on_hold'));
  });
});

describe('filters become parameters', () => {
  test('a filter narrows the records to what it names (--channel, --tag)', async () => {
    const byChannel = await runCli(['conversations', 'list', '--status', 'closed', '--channel', '202', '-o', 'ndjson'], { sandbox });
    const records = byChannel.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Row);
    assert.ok(records.length > 0);
    for (const record of records)
      assert.ok(
        (record.channels as Row[]).some((channel) => channel.id === '202'),
        String(record.id),
      );
    const tag = (records.flatMap((record) => record.tags as Row[]).find((t) => typeof t.name === 'string' && /^[a-z-]+$/.test(t.name as string)) as Row)
      .name as string;
    const byTag = await runCli(['conversations', 'list', '--status', 'closed', '--tag', tag, '-o', 'ndjson'], { sandbox });
    for (const line of byTag.stdout.trimEnd().split('\n'))
      assert.ok(
        (JSON.parse(line).tags as Row[]).some((t) => t.name === tag),
        line.slice(0, 60),
      );
  });

  test('--include content gives each conversation its own content items', async () => {
    const out = await runCli(['conversations', 'list', '--status', 'archived', '--include', 'content', '-o', 'ndjson', '--limit', '20', '--quiet'], {
      sandbox,
    });
    assert.equal(out.code, 0, out.stderr);
    const records = out.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    assert.equal(records.length, 20);
    for (const record of records) {
      const content = record.content as Row[];
      assert.ok(content.length >= 1 && content.length <= 4);
      assert.deepEqual(
        content.map((c) => c.id),
        record.content_ids,
      );
    }
  });

  test('conversations get --include content: one object carrying its content items', async () => {
    const start = sandbox.requests.length;
    const out = await runCli(['conversations', 'get', '500002', '--include', 'content', '-o', 'json'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    const record = JSON.parse(out.stdout) as Row;
    assert.equal(record.id, '500002');
    const content = record.content as Row[];
    assert.ok(content.length >= 1);
    assert.deepEqual(
      content.map((c) => c.id),
      record.content_ids,
    );
    assert.equal(new URL(apiRequests(sandbox, start)[0]!.url, 'http://x').searchParams.get('include'), 'content');
  });

  test('--quiet silences the --limit notice, never the --resume token of a failure', async () => {
    const limited = await runCli(['tags', 'list', '--limit', '3', '--quiet'], { sandbox });
    assert.equal(limited.code, 0);
    assert.equal(limited.stderr, '');
    sandbox.setFaults({ failListAfterPages: 1 });
    try {
      const failed = await runCli(['tags', 'list', '--page-size', '10', '--retries', '0', '--quiet'], { sandbox });
      assert.equal(failed.code, 1);
      assert.match(failed.stderr, /^carectl: .*--resume \S+\n$/);
    } finally {
      sandbox.setFaults(undefined);
    }
  });

  test('--verbose traces each API request and its answer on stderr, the password redacted', async () => {
    const out = await runCli(['--verbose', 'tags', 'get', '7005'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stderr,
      /^> GET http:\/\/127\.0\.0\.1:\d+\/v1\.3\/tags\/7005\?fields=name%2Cis_active\n> authorization: Basic \[redacted\]\n< 200 GET \/v1\.3\/tags\/7005\?fields=name%2Cis_active \(HTTP\/1\.1, direct, (new|reused) connection, \d+ B, \d+ ms\)\n$/,
    );
  });

  test('conversations content lists the thread oldest first', async () => {
    const [conversation] = await oracleList('v1.3/conversations?status=unread&page_size=1&fields=id');
    const id = String(conversation!.id);
    const body = (await oracleGet(`v1.3/conversations/${id}?include=content`)) as Row;
    assert.ok(body);
    const out = await runCli(['conversations', 'content', id, '-o', 'ndjson'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    const items = out.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    const times = items.map((i) => (String(i.created_date).startsWith('1970') ? String(i.imported_date) : String(i.created_date)));
    assert.deepEqual(times, [...times].sort());
    assert.ok(items.length >= 2, 'a thread of several items');
    const first = await runCli(['conversations', 'content', id, '-o', 'ndjson', '--limit', '1'], { sandbox });
    assert.equal(first.stdout, JSON.stringify(items[0]) + '\n');
    // The whole thread came in one reply: nothing to resume, but the cut is said.
    assert.equal(first.stderr, `stopped at --limit 1: conversation ${id} has ${items.length} content items\n`);
    const all = await runCli(['conversations', 'content', id, '-o', 'ndjson', '--limit', String(items.length)], { sandbox });
    assert.equal(all.stderr, '');
  });

  test('v1 channels come as bare arrays and still list', async () => {
    const expected = await oracleList('v1/channels?fields=name');
    const out = await runCli(['channels', 'list', '--api-version', 'v1', '--columns', 'id,name', '--no-header'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, expected.map((c) => `${c.id}\t${c.name}\n`).join(''));
  });

  test('a v1 channel comes as a bare record and still prints as one object', async () => {
    const expected = (await oracleGet('v1/channels/201?fields=name')) as Row;
    assert.equal(expected.channel, undefined, 'the v1 reply has no wrapper key');
    const out = await runCli(['channels', 'get', '201', '--api-version', 'v1', '-o', 'json', '--fields', 'name'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), expected);
  });
});

describe('--limit', () => {
  test('stops early and never fetches a page it does not need', async () => {
    const start = sandbox.requests.length;
    const out = await runCli(['conversations', 'list', '--status', 'unread', '--limit', '5', '--columns', 'id', '--no-header'], { sandbox });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout.trimEnd().split('\n').length, 5);
    const requests = apiRequests(sandbox, start);
    assert.equal(requests.length, 1);
    assert.equal(new URL(requests[0]!.url, 'http://x').searchParams.get('page_size'), '5');
    assert.match(out.stderr, /--resume \S+/);
  });

  test('across pages: exactly the pages needed', async () => {
    const start = sandbox.requests.length;
    const out = await runCli(['tags', 'list', '--limit', '12', '--page-size', '5', '--columns', 'id', '--no-header'], { sandbox });
    assert.equal(out.stdout.trimEnd().split('\n').length, 12);
    assert.equal(apiRequests(sandbox, start).length, 3);
  });

  test('a token resumed with smaller pages (--page-size, or a smaller --limit) skips all it wrote, across pages', async () => {
    // Each paging style: keyset links (conversations), skip (tags), offset (users), page tokens
    // (annotations); and a union cut into date slices in parallel.
    const cases = [
      ['conversations', 'list', '--status', 'unread'],
      ['tags', 'list'],
      ['users', 'list'],
      ['annotations', 'list'],
    ].map((argv) => [...argv, '--parallel', '1']);
    for (const argv of [...cases, ['conversations', 'list', '--oldest', '300d..today', '--parallel', '8']]) {
      const list = [...argv, '-o', 'tsv', '--columns', 'id', '--no-header'];
      const full = (await runCli(list, { sandbox })).stdout.split('\n').slice(0, -1);
      // 45 written, pages of 30: the token names the second page, 15 of its records written.
      const first = await runCli([...list, '--page-size', '30', '--limit', '45'], { sandbox });
      const token = /--resume (\S+)$/m.exec(first.stderr)?.[1];
      assert.ok(token !== undefined && full.length > 60, `${argv.join(' ')}: ${full.length} records, ${first.stderr}`);
      for (const smaller of [
        ['--page-size', '4'],
        ['--limit', '10'],
      ]) {
        const rest = await runCli([...list, '--resume', token, ...smaller, '--quiet'], { sandbox });
        assert.equal(rest.code, 0, rest.stderr);
        const next = full.slice(45, smaller[0] === '--limit' ? 55 : undefined);
        assert.equal(rest.stdout, next.map((line) => `${line}\n`).join(''), `${argv.join(' ')}, resumed with ${smaller.join(' ')}`);
      }
    }
  });

  test('a union stops in the first query when it has enough', async () => {
    const start = sandbox.requests.length;
    const out = await runCli(['conversations', 'list', '--limit', '3', '--columns', 'id', '--no-header', '--quiet'], { sandbox });
    assert.equal(out.stdout.trimEnd().split('\n').length, 3);
    const requests = apiRequests(sandbox, start);
    assert.equal(requests.length, 1);
    assert.equal(new URL(requests[0]!.url, 'http://x').searchParams.get('is_priority'), 'true');
  });
});

describe('exit codes', () => {
  const usage: Array<[string, string[], RegExp, Record<string, string>?]> = [
    ['unknown flag', ['tags', 'list', '--colour'], /unknown option '--colour'/],
    [
      'bad enum',
      ['conversations', 'list', '--status', 'open'],
      /--status: "open" is not one of archived, on_hold, closing, closed, pending_approval, unread, assigned/,
    ],
    ['bad output', ['tags', 'list', '-o', 'xml'], /--output: "xml" is not one of table, json, ndjson, csv, tsv/],
    ['bad date', ['conversations', 'list', '--status', 'unread', '--oldest', '2026-02-30..'], /--oldest: .*2026-02-30.* YYYY-MM-DD/],
    ['bad range', ['users', 'list', '--joined', 'soon'], /--joined: "soon" is not a range/],
    ['conflicting flags', ['conversations', 'list', '--oldest', '7d..', '--newest', '7d..'], /--oldest and --newest cannot be used together/],
    ['conflicting switches', ['tags', 'list', '--active', '--inactive'], /--active and --inactive cannot be used together/],
    ['page size 0', ['tags', 'list', '--page-size', '0'], /--page-size: must be an integer from 1 to 50/],
    ['page size 51', ['tags', 'list', '--page-size', '51'], /--page-size: must be an integer from 1 to 50/],
    ['unknown field', ['tags', 'list', '--fields', 'colour'], /--fields: "colour" is not one of id, url, name, is_active/],
    ['unknown column', ['tags', 'list', '--columns', 'id,colour'], /--columns: unknown column "colour"/],
    ['version without the resource', ['tags', 'list', '--api-version', 'v1'], /--api-version: "v1" is not one of v1.1, v1.2, v1.3/],
    ['queue filter before v1.3', ['conversations', 'list', '--queue', '3', '--api-version', 'v1.2'], /--queue needs --api-version v1.3/],
    ['bad resume token', ['tags', 'list', '--resume', 'nonsense'], /--resume: not a whole token as carectl printed it/],
    // Several sort fields would get no paging links (spec rule 3): the list would end after a page.
    [
      'several sort fields',
      ['conversations', 'list', '--status', 'unread', '--sort', '-newest_sort_date,oldest_sort_date'],
      /--sort: "-newest_sort_date,oldest_sort_date" is not one of/,
    ],
    ['accounts take no gt: bound', ['accounts', 'list', '--created', 'gt:2026-01-01'], /--created: the service takes no gt: bound/],
    ['--priority and --no-priority', ['conversations', 'list', '--priority', '--no-priority'], /--priority and --no-priority cannot be used together/],
    [
      '--no-private and --private',
      ['conversations', 'list', '--no-private', '--private', '--status', 'unread'],
      /--private and --no-private cannot be used together/,
    ],
    ['empty --include', ['conversations', 'list', '--status', 'unread', '--include', ''], /--include: needs one or more of content, notes, actions/],
    ['a typo of a verb', ['conversations', 'lst'], /unknown command 'lst' \(did you mean (?:one of )?list\b/],
    // commander's own refusals, in the house's words: the flag first, then what it takes.
    ['a flag without its value', ['conversations', 'list', '--status'], /^carectl: --status: needs a value\n$/],
    ['a flag with a short form, without its value', ['tags', 'list', '-o'], /^carectl: --output: needs a value\n$/],
    ['an argument a verb does not take', ['teams', 'list', 'extra'], /^carectl: list: takes no arguments \(got 1\)\n$/],
    ['a shell completion does not know', ['completion', 'powershell'], /^carectl: shell: "powershell" is not one of bash, zsh, fish\n$/],
    // Options that only lists act on are refused elsewhere, not silently ignored.
    ['--resume on a get', ['tags', 'get', '7001', '--resume', 'x'], /^carectl: --resume: `carectl tags get` does not take it\n$/],
    [
      '--resume on content by ids',
      ['conversations', 'content', '500001', '--resume', 'x'],
      /^carectl: --resume continues a list by filters; with ids, give the ids not yet done\n$/,
    ],
    ['--limit on api', ['api', 'v1.3/tags', '--paginate', '--limit', '1'], /^carectl: --limit: `carectl api` does not take it\n$/],
    [
      '-o csv on api',
      ['api', 'v1.3/tags', '-o', 'csv'],
      /^carectl: --output: `carectl api` prints the service's JSON as it is; leave -o out \(or use -o json\)\n$/,
    ],
    [
      '--api-version on api',
      ['api', 'v1.3/tags/7001', '--api-version', 'v1.1'],
      /^carectl: --api-version: `carectl api` sends PATH as given; put the version in it \(v1\.1\/reports\)\n$/,
    ],
    ['--columns on reports wait', ['reports', 'wait', '60001', '--columns', 'id'], /^carectl: --columns: `carectl reports wait` does not take it\n$/],
    // URL parsing would collapse them: `tags/.` asks for the tag list, `conversations/..` the API root.
    ['an id that is a dot segment', ['tags', 'get', '.'], /"\." is not a tag id/],
    ['an id that is two dots', ['conversations', 'get', '..'], /"\.\." is not a conversation id/],
    ['an id with a slash, named with its article', ['authors', 'get', 't:1/../x'], /"t:1\/\.\.\/x" is not an author id/],
    [
      'a base address with a version',
      ['tags', 'list', '--base-url', 'http://127.0.0.1:9/v1.3'],
      /--base-url: give the address without a version segment \(not \/v1\.3\)/,
    ],
    ['too few sandbox conversations', ['sandbox', '--conversations', '2'], /^carectl: --conversations: must be an integer from 3 to 1000000 \(got "2"\)\n$/],
    ['too many sandbox conversations', ['sandbox', '--conversations', '1000001'], /^carectl: --conversations: must be an integer from 3 to 1000000/],
    // A one-value option given twice would silently drop a value; a LIST option joins them instead.
    [
      'a filter given twice',
      ['conversations', 'list', '--status', 'unread', '--status', 'closed'],
      /^carectl: --status: given twice \("unread" and "closed"\); it takes one value\n$/,
    ],
    [
      '--channel given twice',
      ['conversations', 'list', '--channel', '202', '--channel=204'],
      /^carectl: --channel: given twice \("202" and "204"\); it takes one value\n$/,
    ],
    [
      'a global option before and after the command',
      ['--limit', '1', 'tags', 'list', '--limit', '2'],
      /^carectl: --limit: given twice \("1" and "2"\); it takes one value\n$/,
    ],
    ['-o and --output', ['-o', 'json', 'tags', 'list', '--output', 'csv'], /^carectl: --output: given twice \("json" and "csv"\)/],
    ['--base-url given twice', ['--base-url', 'http://127.0.0.1:9', 'tags', 'list', '--base-url', 'http://127.0.0.1:8'], /^carectl: --base-url: given twice/],
    [
      'a dash-led value given twice',
      ['conversations', 'list', '--sort', '-oldest_sort_date', '--sort', '-newest_sort_date'],
      /^carectl: --sort: given twice \("-oldest_sort_date" and "-newest_sort_date"\)/,
    ],
    ['-X given twice on api', ['api', 'v1.3/tags', '-X', 'GET', '-X', 'POST'], /^carectl: --method: given twice \("GET" and "POST"\)/],
    ['a report option given twice', ['reports', 'create', '--account', '1001', '--from', 'yesterday', '--from', 'today'], /^carectl: --from: given twice/],
    // A bad value from the environment is named by its variable.
    ['a bad CARECTL_OUTPUT', ['tags', 'list'], /^carectl: CARECTL_OUTPUT: "xml" is not one of table, json/, { CARECTL_OUTPUT: 'xml' }],
    [
      'a bad CARECTL_BASE_URL',
      ['tags', 'list'],
      /^carectl: CARECTL_BASE_URL: give the address without a version segment/,
      { CARECTL_BASE_URL: 'http://127.0.0.1:9/v1.3' },
    ],
  ];
  for (const [name, argv, message, env] of usage) {
    test(`2 on ${name}, one line, nothing sent`, async () => {
      const start = sandbox.requests.length;
      const out = await runCli(argv, { sandbox, ...(env && { env }) });
      assert.equal(out.code, 2);
      assert.match(out.stderr, message);
      assert.equal(
        out.stderr
          .trimEnd()
          .split('\n')
          .filter((l) => l.startsWith('carectl:')).length,
        1,
      );
      assert.equal(out.stdout, '');
      assert.equal(sandbox.requests.length, start, 'no request was sent');
    });
  }

  test('3 on a wrong password, with the service message', async () => {
    const out = await runCli(['tags', 'list'], { sandbox, env: { CARECTL_PASSWORD: 'wrong' } });
    assert.equal(out.code, 3);
    assert.match(out.stderr, /^carectl: .*401/);
  });

  test('3 on missing credentials, saying how to provide them', async () => {
    const start = sandbox.requests.length;
    const out = await runCli(['tags', 'list'], { sandbox, env: { CARECTL_USER: undefined, CARECTL_PASSWORD: undefined } });
    assert.equal(out.code, 3);
    assert.match(out.stderr, /CARECTL_USER and CARECTL_PASSWORD/);
    assert.match(out.stderr, /carectl login/);
    assert.equal(sandbox.requests.length, start);
  });

  test('a list that fails before its first record prints nothing on stdout', async () => {
    for (const format of ['json', 'csv', 'tsv', 'ndjson', 'table']) {
      const out = await runCli(['tags', 'list', '-o', format], { sandbox, env: { CARECTL_PASSWORD: 'wrong' } });
      assert.equal(out.code, 3);
      assert.equal(out.stdout, '', format);
    }
  });

  test('4 on a missing record', async () => {
    const out = await runCli(['tags', 'get', 'no-such-tag'], { sandbox });
    assert.equal(out.code, 4);
    assert.match(out.stderr, /^carectl: .*\(HTTP 404\)\n$/);
    assert.equal(out.stdout, '');
  });
});

describe('aliases', () => {
  test('conv, conversation and each group singular name their group, ls names list: the same output, and help says so', async () => {
    const full = await runCli(['conversations', 'list', '--status', 'unread', '--columns', 'id'], { sandbox });
    for (const group of ['conv', 'conversation']) {
      assert.equal((await runCli([group, 'ls', '--status', 'unread', '--columns', 'id'], { sandbox })).stdout, full.stdout);
    }
    assert.equal(
      (await runCli(['tag', 'get', '7005', '-o', 'json'], { sandbox })).stdout,
      (await runCli(['tags', 'get', '7005', '-o', 'json'], { sandbox })).stdout,
    );
    const help = (await runCli(['--help'])).stdout.replace(/\s+/g, ' ');
    assert.match(help, /conversations read conversations .*\(also conversation, conv\)/);
    assert.match(help, /tags read tags \(also tag\)/);
    assert.match((await runCli(['conv', 'ls', '--help'])).stdout, /^Usage: carectl conversations list \[options\]/);
  });
});
