/**
 * `conversations update` end to end against the sandbox: what each PATCH carries (read from the
 * sandbox's request log), what later reads show, batches, dry runs, and the checks that must
 * stop a command before it sends anything.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { idsFromText } from '../src/cli/ids.js';
import { refusedTagHint } from '../src/commands/conversations/update.js';
import { FIXTURES, type ConversationRecord, type Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, runCli } from './helpers.js';

// A sandbox of its own for each test (~30 ms): what one test changes no other test sees.
let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await openSandbox();
});
afterEach(() => sandbox.close());

const HEADER = 'id\tok\tstatus\ttags\terror.kind\terror.status\terror.message\n';
/** A tsv result row: ok, or failed with its kind, HTTP status and message. */
const okRow = (id: string, tags: readonly string[], status = 'on_hold'): string => `${id}\ttrue\t${status}\t${JSON.stringify(tags)}\t\t\t\n`;
const failedRow = (id: string, kind: string, httpStatus: number | null, message: string): string =>
  `${id}\tfalse\t\t\t${kind}\t${httpStatus ?? ''}\t${message}\n`;

/**
 * Conversations past the fixtures, on channels the demo key may manage and carrying only active
 * tags (so sending the current tags back is accepted), matching `wanted`.
 */
function freshConversations(count: number, wanted: (c: ConversationRecord) => boolean): ConversationRecord[] {
  const { data } = sandbox;
  const found = data.conversations.filter(
    (c) =>
      Number(c.id) > 500003 &&
      c.channel_ids.every((id) => data.byId.channels.get(id)!.can_manage_conversations) &&
      c.tag_ids.every((id) => data.byId.tags.get(id)!.is_active) &&
      wanted(c),
  );
  assert.ok(found.length >= count, 'the sandbox has enough suitable conversations');
  return found.slice(0, count);
}

/** The JSON bodies of the PATCH requests since `from`, by path. */
function patches(from: number): Array<{ url: string; body: unknown }> {
  return apiRequests(sandbox, from)
    .filter((r) => r.method === 'PATCH')
    .map((r) => ({ url: r.url, body: JSON.parse(r.body ?? 'null') }));
}

/** What a later read through the CLI shows. */
async function readBack(id: string): Promise<{ status: string; tags: string[]; close_reason?: string | null }> {
  const result = await runCli(['-o', 'json', 'conversations', 'get', id, '--fields', 'status,tags,close_reason'], { sandbox });
  assert.equal(result.code, 0, result.stderr);
  const record = JSON.parse(result.stdout) as { status: string; tags: Array<{ id: string }>; close_reason?: string | null };
  return { status: record.status, tags: record.tags.map((t) => t.id), close_reason: record.close_reason };
}

describe('conversations update: tags', () => {
  test('a status-only update reads the current tags and sends them back unchanged', async () => {
    const [c] = freshConversations(1, (c) => c.tag_ids.length >= 2 && c.status !== 'on_hold');
    const tags = [...c!.tag_ids];
    const closeReason = c!.close_reason;
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', c!.id, '--status', 'on_hold'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${HEADER}${okRow(c!.id, tags)}`);
    assert.equal(result.stderr, '');
    const sent = apiRequests(sandbox, from).map((r) => `${r.method} ${r.url}`);
    assert.deepEqual(sent, [`GET /v1.3/conversations/${c!.id}?fields=tags`, `PATCH /v1.3/conversations/${c!.id}`]);
    assert.deepEqual(patches(from)[0]!.body, { status: 'on_hold', tag_ids: tags });
    assert.deepEqual(await readBack(c!.id), { status: 'on_hold', tags, close_reason: closeReason });
  });

  test('--add-tags and --remove-tags apply to the current tags (no duplicates, unknown removals ignored)', async () => {
    const [c] = freshConversations(1, (c) => c.tag_ids.length >= 2 && !c.tag_ids.includes('7006') && !c.tag_ids.includes('7007'));
    const [first, ...rest] = c!.tag_ids;
    const kept = rest[0]!;
    const from = sandbox.requests.length;
    const result = await runCli(
      ['conversations', 'update', c!.id, '--status', 'on_hold', '--add-tags', `7006,${kept},7007,7006`, '--remove-tags', `${first},7005`],
      { sandbox },
    );
    assert.equal(result.code, 0, result.stderr);
    const expected = [...rest, '7006', '7007'];
    assert.deepEqual(patches(from)[0]!.body, { status: 'on_hold', tag_ids: expected });
    assert.equal(result.stdout, `${HEADER}${okRow(c!.id, expected)}`);
    assert.deepEqual((await readBack(c!.id)).tags, expected);
  });

  test("--tags '' clears every tag without reading the current ones", async () => {
    const [c] = freshConversations(1, (c) => c.tag_ids.length >= 1);
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', c!.id, '--status', 'on_hold', '--tags', ''], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      apiRequests(sandbox, from).map((r) => r.method),
      ['PATCH'],
    );
    assert.deepEqual(patches(from)[0]!.body, { status: 'on_hold', tag_ids: [] });
    assert.equal(result.stdout, `${HEADER}${okRow(c!.id, [])}`);
    assert.deepEqual((await readBack(c!.id)).tags, []);
  });

  test('--tags replaces the list; closing sends the close reason', async () => {
    const [c] = freshConversations(1, (c) => c.status !== 'closing');
    const from = sandbox.requests.length;
    const result = await runCli(['-o', 'json', 'conversations', 'update', c!.id, '--status', 'closing', '--close-reason', 'resolved', '--tags', '7005, 7006'], {
      sandbox,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(patches(from)[0]!.body, { status: 'closing', tag_ids: ['7005', '7006'], close_reason: 'resolved' });
    assert.deepEqual(JSON.parse(result.stdout), [{ id: c!.id, ok: true, status: 'closing', tags: ['7005', '7006'], error: null }]);
    assert.deepEqual(await readBack(c!.id), { status: 'closing', tags: ['7005', '7006'], close_reason: 'resolved' });
  });
});

describe('conversations update: batches', () => {
  test('ids from stdin, one per line, blank lines and surrounding spaces ignored', async () => {
    const [a, b] = freshConversations(2, (c) => c.status !== 'on_hold');
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', '-', '--status', 'on_hold'], { sandbox, stdin: `\n  ${a!.id}  \n\n\t${b!.id}\r\n   \n` });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${HEADER}${okRow(a!.id, a!.tag_ids)}${okRow(b!.id, b!.tag_ids)}`);
    // One PATCH per id; with several ids in flight, not necessarily in input order.
    assert.deepEqual(
      patches(from)
        .map((p) => p.url)
        .sort(),
      [`/v1.3/conversations/${a!.id}`, `/v1.3/conversations/${b!.id}`].sort(),
    );
    assert.equal((await readBack(b!.id)).status, 'on_hold');
  });

  test("ids from a list's output: its header line `id` is skipped, so `list --columns id | update -` works", async () => {
    const [a, b] = freshConversations(2, (c) => c.status !== 'on_hold');
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', '-', '--status', 'on_hold'], { sandbox, stdin: `\nid\r\n${a!.id}\n\n${b!.id}\n` });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${HEADER}${okRow(a!.id, a!.tag_ids)}${okRow(b!.id, b!.tag_ids)}`);
    assert.equal(patches(from).length, 2);
  });

  test('`id` is a header only on the first line: later, it is an id like any other', async () => {
    const [a] = freshConversations(1, (c) => c.status !== 'on_hold');
    const result = await runCli(['conversations', 'update', '-', '--status', 'on_hold', '--dry-run'], { sandbox, stdin: `${a!.id}\nid\n` });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /'id'/);
  });

  test('a first line naming an id column (author.id, conversation_id) is a header too, for every command reading ids from -', async () => {
    assert.deepEqual(idsFromText('author.id\nm:1\n'), ['m:1']);
    assert.deepEqual(idsFromText('conversation_id\r\n500002\r\n'), ['500002']);
    assert.deepEqual(idsFromText('assigned_to.id\n3001\n'), ['3001']);
    // Only a column name: an id, or a word that names no id column, is read as given.
    assert.deepEqual(idsFromText('m:1\nauthor.id\n'), ['m:1', 'author.id']);
    assert.deepEqual(idsFromText('name\n7005\n'), ['name', '7005']);
    const authors = await runCli(['conversations', 'list', '--status', 'unread', '--limit', '3', '--columns', 'author.id'], { sandbox });
    const listed = await runCli(['authors', 'list', '-', '--columns', 'id'], { sandbox, stdin: authors.stdout });
    assert.equal(listed.code, 0, listed.stderr);
    const [a] = freshConversations(1, (c) => c.status !== 'on_hold');
    const content = await runCli(['conversations', 'content', '-', '--columns', 'conversation_id', '-o', 'tsv'], { sandbox, stdin: `id\n${a!.id}\n` });
    const update = await runCli(['conversations', 'update', '-', '--status', 'on_hold', '--dry-run'], { sandbox, stdin: content.stdout });
    assert.equal(update.code, 0, update.stderr);
  });

  test('an id given twice is updated once, with a notice', async () => {
    const [a, b] = freshConversations(2, (c) => c.status !== 'on_hold');
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', '-', '--status', 'on_hold'], { sandbox, stdin: `${a!.id}\n${b!.id}\n${a!.id}\n${a!.id}\n` });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${HEADER}${okRow(a!.id, a!.tag_ids)}${okRow(b!.id, b!.tag_ids)}`);
    assert.equal(result.stderr, `ids: ${a!.id} was given more than once; each id is taken once\n`);
    // One PATCH per id; with several ids in flight, not necessarily in input order.
    assert.deepEqual(
      patches(from)
        .map((p) => p.url)
        .sort(),
      [`/v1.3/conversations/${a!.id}`, `/v1.3/conversations/${b!.id}`].sort(),
    );
    assert.equal((await runCli(['conversations', 'update', a!.id, a!.id, '--status', 'on_hold', '--quiet'], { sandbox })).stderr, '');
    const many = ['9001', '9002', '9003', '9004', '9005', '9006', '9007'];
    const dry = await runCli(['conversations', 'update', '-', '--status', 'on_hold', '--tags', '', '--dry-run'], {
      sandbox,
      stdin: [...many, ...many].join('\n'),
    });
    assert.equal(dry.stdout.split('\n').length - 1, many.length);
    assert.equal(dry.stderr, 'ids: 9001, 9002, 9003, 9004, 9005 and 2 more were given more than once; each id is taken once\n');
  });

  test('a 403 fails its id with exit 3 while the other ids are still updated', async () => {
    const [a, b] = freshConversations(2, (c) => c.status !== 'on_hold');
    const locked = FIXTURES.readOnlyConversationId;
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', a!.id, locked, b!.id, '--status', 'on_hold'], { sandbox });
    assert.equal(result.code, 3);
    const denied = `The API key lacks the Manage Conversations permission for channel ${FIXTURES.readOnlyChannelId} (HTTP 403)`;
    assert.equal(result.stdout, `${HEADER}${okRow(a!.id, a!.tag_ids)}${failedRow(locked, 'forbidden', 403, denied)}${okRow(b!.id, b!.tag_ids)}`);
    assert.equal(result.stderr, `carectl: 1 of 3 updates failed (first: ${locked}: ${denied})\n`);
    assert.deepEqual(
      patches(from)
        .map((p) => p.url)
        .sort(),
      [a!.id, locked, b!.id].map((id) => `/v1.3/conversations/${id}`).sort(),
    );
    assert.equal((await readBack(b!.id)).status, 'on_hold');
    assert.notEqual((await readBack(locked)).status, 'on_hold');
  });

  test('the exit code is that of the first failure (404 before 403)', async () => {
    const result = await runCli(['conversations', 'update', '999999', FIXTURES.readOnlyConversationId, '--status', 'on_hold'], { sandbox });
    assert.equal(result.code, 4);
    assert.match(result.stderr, /^carectl: 2 of 2 updates failed \(first: 999999: No conversation with id '999999' \(HTTP 404\)\)\n$/);
  });

  test('a tag to add that is inactive: exit 2 before any conversation is read (the tags list is the one request)', async () => {
    const [a] = freshConversations(1, () => true);
    const from = sandbox.requests.length;
    const result = await runCli(['-o', 'ndjson', 'conversations', 'update', a!.id, '--status', 'on_hold', '--add-tags', 'refund-bug'], { sandbox });
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr, 'carectl: --add-tags: refund-bug (7008) is inactive; the service takes active tags only (carectl tags list --active)\n');
    assert.deepEqual(
      apiRequests(sandbox, from).map((r) => `${r.method} ${r.url.split('?')[0]}`),
      ['GET /v1.3/tags', 'GET /v1.3/tags'],
      'the tags list: its two pages',
    );
    const replace = await runCli(['conversations', 'update', a!.id, '--status', 'on_hold', '--tags', `7005,${FIXTURES.inactiveTagId}`], { sandbox });
    assert.equal(replace.code, 2);
    assert.match(replace.stderr, /^carectl: --tags: refund-bug \(7008\) is inactive/);
  });

  test("the service's 400 messages reach the user readably, kind refused with the status", async () => {
    const [b] = freshConversations(1, () => true);
    const reason = await runCli(['conversations', 'update', b!.id, '--status', 'closing', '--close-reason', 'fixed'], { sandbox });
    assert.equal(reason.code, 1);
    const message = `Unknown close reason 'fixed'; accepted: ${FIXTURES.closeReasons.join(', ')} (HTTP 400)`;
    assert.equal(reason.stdout, `${HEADER}${failedRow(b!.id, 'refused', 400, message)}`);
    assert.deepEqual((await readBack(b!.id)).tags, b!.tag_ids, 'a refused update changes nothing');
  });
});

describe('conversations update: a refused tag', () => {
  /** A manageable conversation carrying an inactive tag, and that tag (the first of them). */
  function carryingInactive(): { c: ConversationRecord; inactive: string } {
    const { data } = sandbox;
    const c = data.conversations.find(
      (x) =>
        Number(x.id) > 500003 &&
        x.channel_ids.every((id) => data.byId.channels.get(id)!.can_manage_conversations) &&
        x.tag_ids.some((id) => !data.byId.tags.get(id)!.is_active),
    );
    assert.ok(c, 'the sandbox has a manageable conversation carrying an inactive tag');
    return { c, inactive: c.tag_ids.find((id) => !data.byId.tags.get(id)!.is_active)! };
  }

  test("an inactive tag among the conversation's own: the hint says carectl kept its tags, even with --add-tags", async () => {
    const { c, inactive } = carryingInactive();
    const all = c.tag_ids.filter((id) => !sandbox.data.byId.tags.get(id)!.is_active);
    const named = all.map((id) => `${sandbox.data.byId.tags.get(id)!.name} (${id})`).join(', ');
    const result = await runCli(['-o', 'ndjson', 'conversations', 'update', c.id, '--status', 'on_hold', '--add-tags', '7005'], { sandbox });
    assert.equal(result.code, 1);
    const hint = `carectl kept the conversation's tags, and the service refuses ${named}: --drop-inactive-tags leaves ${all.length > 1 ? 'them' : 'it'} out`;
    assert.deepEqual(JSON.parse(result.stdout), {
      id: c.id,
      ok: false,
      status: null,
      tags: null,
      error: { kind: 'refused', status: 400, message: `Tag ${inactive} is inactive (HTTP 400); ${hint}` },
    });
  });

  test('--drop-inactive-tags leaves the deactivated ones out and the row says which', async () => {
    const { c, inactive } = carryingInactive();
    const kept = c.tag_ids.filter((id) => sandbox.data.byId.tags.get(id)!.is_active);
    const from = sandbox.requests.length;
    const result = await runCli(['-o', 'ndjson', 'conversations', 'update', c.id, '--status', 'on_hold', '--drop-inactive-tags'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${JSON.stringify({ id: c.id, ok: true, status: 'on_hold', tags: kept, dropped: [inactive], error: null })}\n`);
    assert.deepEqual(patches(from)[0]!.body, { status: 'on_hold', tag_ids: kept });
    assert.deepEqual((await readBack(c.id)).tags, kept);
    // The table reads it in its RESULT cell; csv has a dropped column.
    const csv = await runCli(['-o', 'csv', 'conversations', 'update', c.id, '--status', 'on_hold', '--drop-inactive-tags'], { sandbox });
    assert.equal(csv.stdout.split('\r\n')[0], 'id,ok,status,tags,dropped,error.kind,error.status,error.message');
  });

  test('--drop-inactive-tags with --tags: exit 2, nothing sent', async () => {
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', '500010', '--status', 'on_hold', '--tags', '7005', '--drop-inactive-tags'], { sandbox });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^carectl: --drop-inactive-tags leaves out current tags; --tags sends the whole list/);
    assert.equal(sandbox.requests.length, from);
  });

  test('a message that names no tag: every place the refused one can have come from; the tags list names every inactive one kept', () => {
    const sent = { flag: '--add-tags' as const, given: ['7008'], kept: ['7005', '7016', '7024'] };
    const given = '--add-tags 7008: the service takes active tags only (carectl tags list --active)';
    const kept = "carectl kept the conversation's tags, and the service refuses";
    const someKept = `${kept} one of them: --drop-inactive-tags leaves out those it deactivated`;
    assert.equal(refusedTagHint('A tag is inactive', sent), `${given}; or ${someKept}`);
    assert.equal(refusedTagHint('A tag is inactive', { ...sent, given: [] }), someKept);
    assert.equal(refusedTagHint('Tag 7016 is inactive', sent), `${kept} 7016: --drop-inactive-tags leaves it out`);
    assert.equal(refusedTagHint('Tag 70080 is inactive', { ...sent, kept: [] }), given);
    // What the tags list says: both inactive tags kept, named, whichever one the service named.
    const inactive = new Map([
      ['7016', 'login-info'],
      ['7024', 'refund-urgent'],
      ['7008', 'refund-bug'],
    ]);
    const both = `${kept} login-info (7016), refund-urgent (7024): --drop-inactive-tags leaves them out`;
    assert.equal(refusedTagHint('Tag 7016 is inactive', sent, inactive), both);
    assert.equal(refusedTagHint('A tag is inactive', { ...sent, given: [] }, inactive), both);
    assert.equal(refusedTagHint('Tag 7005 is inactive', sent, new Map()), `${kept} 7005: --drop-inactive-tags leaves it out`);
  });
});

describe('conversations update --dry-run', () => {
  test('prints every PATCH it would send and sends none (current tags read with GET only)', async () => {
    const [a, b] = freshConversations(2, (c) => c.tag_ids.length >= 1 && c.status !== 'on_hold');
    const before = [a!, b!].map((c) => ({ status: c.status, tags: [...c.tag_ids] }));
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', a!.id, b!.id, '--status', 'on_hold', '--add-tags', '7005', '--dry-run'], { sandbox });
    assert.equal(result.code, 0, result.stderr);
    const body = (c: ConversationRecord): string => JSON.stringify({ status: 'on_hold', tag_ids: [...new Set([...c.tag_ids, '7005'])] });
    assert.equal(result.stdout, `PATCH /v1.3/conversations/${a!.id} ${body(a!)}\nPATCH /v1.3/conversations/${b!.id} ${body(b!)}\n`);
    // The tags list (names and ids, read once for the run: its two pages), then each conversation's tags.
    assert.deepEqual(
      apiRequests(sandbox, from).map((r, index) => (index < 2 ? r.url.split('?')[0] : `${r.method} conversation`)),
      ['/v1.3/tags', '/v1.3/tags', 'GET conversation', 'GET conversation'],
    );
    assert.deepEqual(
      [a!, b!].map((c) => ({ status: c.status, tags: c.tag_ids })),
      before,
    );
  });

  test('--add-tags given twice adds the tags of both', async () => {
    const [c] = freshConversations(1, (c) => !c.tag_ids.includes('7005') && !c.tag_ids.includes('7006'));
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', c!.id, '--status', 'on_hold', '--add-tags', '7005', '--add-tags', '7006', '--dry-run'], {
      sandbox,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `PATCH /v1.3/conversations/${c!.id} ${JSON.stringify({ status: 'on_hold', tag_ids: [...c!.tag_ids, '7005', '7006'] })}\n`);
    assert.deepEqual(
      apiRequests(sandbox, from).map((r) => r.method),
      ['GET', 'GET', 'GET'],
    );
  });

  test('with --tags it reads no conversation: the tags list is all it reads', async () => {
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', '500020', '--status', 'closing', '--close-reason', 'spam', '--tags', '7006', '--dry-run'], {
      sandbox,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'PATCH /v1.3/conversations/500020 {"status":"closing","tag_ids":["7006"],"close_reason":"spam"}\n');
    assert.deepEqual(
      apiRequests(sandbox, from).map((r) => `${r.method} ${r.url.split('?')[0]}`),
      ['GET /v1.3/tags', 'GET /v1.3/tags'],
    );
    // Plain lines have no columns: a --columns meant for the real run does not stop the dry run.
    const withColumns = await runCli(['conversations', 'update', '500020', '--status', 'on_hold', '--tags', '7006', '--dry-run', '--columns', 'id,result'], {
      sandbox,
    });
    assert.equal(withColumns.code, 0, withColumns.stderr);
    assert.equal(withColumns.stdout, 'PATCH /v1.3/conversations/500020 {"status":"on_hold","tag_ids":["7006"]}\n');
  });

  test('with an output format chosen, prints the requests as records in it', async () => {
    const argv = ['conversations', 'update', '500020', '500021', '--status', 'closing', '--close-reason', 'spam', '--tags', '7006', '--dry-run'];
    const body = { status: 'closing', tag_ids: ['7006'], close_reason: 'spam' };
    const request = (id: string): object => ({ id, method: 'PATCH', path: `/v1.3/conversations/${id}`, body });
    const from = sandbox.requests.length;

    const ndjson = await runCli([...argv, '-o', 'ndjson'], { sandbox });
    assert.equal(ndjson.code, 0, ndjson.stderr);
    assert.equal(ndjson.stdout, `${JSON.stringify(request('500020'))}\n${JSON.stringify(request('500021'))}\n`);

    const json = await runCli(argv, { sandbox, env: { CARECTL_OUTPUT: 'json' } });
    assert.deepEqual(JSON.parse(json.stdout), [request('500020'), request('500021')]);

    const csv = await runCli([...argv, '-o', 'csv', '--columns', 'id,body.tag_ids'], { sandbox });
    // A list cell in csv is a JSON array (tag ids go as the strings the service uses).
    assert.equal(csv.stdout, 'id,body.tag_ids\r\n500020,"[""7006""]"\r\n500021,"[""7006""]"\r\n');
    assert.deepEqual(
      apiRequests(sandbox, from).filter((r) => r.method !== 'GET'),
      [],
      'nothing sent but reads',
    );
  });

  test('an id that cannot be read is reported on stderr with its exit code', async () => {
    const result = await runCli(['conversations', 'update', '999998', '--status', 'on_hold', '--dry-run'], { sandbox });
    assert.equal(result.code, 4);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^carectl: 999998: No conversation with id '999998' \(HTTP 404\)\ncarectl: 1 of 1 conversations could not be read/);
  });
});

describe('conversations update: interrupt', () => {
  test('Ctrl-C stops the batch before the next id (exit 130)', async () => {
    const [a, b] = freshConversations(2, (c) => c.status !== 'on_hold');
    const controller = new AbortController();
    controller.abort();
    const from = sandbox.requests.length;
    const result = await runCli(['conversations', 'update', a!.id, b!.id, '--status', 'on_hold', '--tags', ''], { sandbox, signal: controller.signal });
    assert.equal(result.code, 130);
    assert.match(result.stderr, /interrupted after 0 of 2 conversations/);
    assert.equal(sandbox.requests.length, from);
  });
});
