import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { listenRefused } from '../src/commands/sandbox.js';
import {
  type ConversationRecord,
  FIXTURES,
  HOSTILE,
  MICROBLOG_PLACEHOLDER_DATE,
  MICROBLOG_PLACEHOLDER_LINK,
  type Sandbox,
  type SandboxOptions,
  reportFileContent,
  startSandbox,
} from '../src/sandbox/index.js';
import { asNobody, runCli } from './helpers.js';
import { ANCHOR, NOON, authHeader, call, get, type Answer, type Json } from './sandbox-client.js';

function assertError(answer: Answer, status: number, message?: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(answer.body.status, 'error');
  assert.equal(typeof answer.body.message, 'string');
  if (message) assert.match(answer.body.message, message);
}

/** Follows next_page to the end; returns the records and every page's paging object. */
async function walk(sandbox: Sandbox, path: string, key: string): Promise<{ records: Json[]; pagings: Json[] }> {
  const records: Json[] = [];
  const pagings: Json[] = [];
  let next: string | null = path;
  while (next !== null) {
    const body: Json = await get(sandbox, next);
    records.push(...body[key]);
    pagings.push(body.paging);
    next = body.paging.next_page;
    assert.ok(pagings.length < 500, 'paging does not end');
  }
  return { records, pagings };
}

function ids(records: ReadonlyArray<{ id: unknown }>): string[] {
  return records.map((record) => String(record.id));
}

function byOldest(a: ConversationRecord, b: ConversationRecord): number {
  return a.oldestMs - b.oldestMs || a.seq - b.seq;
}

async function withSandbox(options: SandboxOptions, run: (sandbox: Sandbox) => Promise<void>): Promise<void> {
  const sandbox = await startSandbox({ anchor: ANCHOR, ...options });
  try {
    await run(sandbox);
  } finally {
    await sandbox.close();
  }
}

describe('sandbox (read-only behaviour)', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox({ anchor: ANCHOR, now: () => NOON });
  });
  after(() => sandbox.close());

  test('missing or wrong credentials: 401 with the error body and a Basic challenge', async () => {
    for (const init of [{ auth: false }, { headers: { authorization: authHeader(sandbox, 'wrong') } }]) {
      const answer = await call(sandbox, '/v1.3/tags', init);
      assertError(answer, 401);
      assert.equal(answer.headers.get('www-authenticate'), 'Basic realm="carectl-sandbox"');
    }
  });

  test('unknown id, version, resource, or resource outside its versions: 404; wrong method: 405', async () => {
    assertError(await call(sandbox, '/v1.3/tags/999999'), 404, /999999/);
    assertError(await call(sandbox, '/v2/tags'), 404, /version/);
    assertError(await call(sandbox, '/v1.3/widgets'), 404, /widgets/);
    assertError(await call(sandbox, '/v1.3/users'), 404, /v1\.2/);
    assertError(await call(sandbox, '/v1.1/accounts'), 404);
    assertError(await call(sandbox, '/v1.2/authors/f:666000001'), 404);
    assertError(await call(sandbox, '/api/2/annotations'), 404);
    // A doubled slash is a path, not a host name (as a base address with a trailing slash would send).
    assertError(await call(sandbox, '//v1.3/tags'), 404, /\/\/v1\.3\/tags/);
    assertError(await call(sandbox, '//elsewhere/v1.3/tags/7001'), 404);
    assertError(await call(sandbox, '/v1.3/tags/7001', { method: 'DELETE' }), 405);
    assertError(await call(sandbox, '/v1.2/conversations/500004', { method: 'PATCH', body: '{}' }), 405);
    assertError(await call(sandbox, '/v1.3/reports', { method: 'POST', body: '{}' }), 404);
  });

  test('v1 channels and accounts are bare; later versions wrap them', async () => {
    const bare = await get(sandbox, '/v1/channels');
    assert.ok(Array.isArray(bare));
    assert.deepEqual(ids(bare), FIXTURES.channelIds);
    const wrapped = await get(sandbox, '/v1.1/channels');
    assert.deepEqual(ids(wrapped.channels), FIXTURES.channelIds);
    assert.equal((await get(sandbox, '/v1/channels/201')).id, '201');
    const single = await get(sandbox, '/v1.3/channels/201?fields=account,type');
    assert.equal(single.channel.url, `${sandbox.baseUrl}/v1.3/channels/201`);
    assert.equal(single.channel.type, 'microblog');
    assert.equal(typeof single.channel.account.id, 'number');
    const accounts = await get(sandbox, '/v1/accounts?fields=name');
    assert.deepEqual(
      accounts.map((account: Json) => account.id),
      FIXTURES.accountIds,
    );
    assert.equal((await get(sandbox, '/v1/accounts/1002')).url, `${sandbox.baseUrl}/v1/accounts/1002`);
    assert.deepEqual(ids(await get(sandbox, '/v1/accounts?id=1001&id=1003')), ['1001', '1003']);
  });

  test('fields: id and url by default, plus exactly the requested ones; unknown names are refused', async () => {
    const plain = await get(sandbox, '/v1.2/tags');
    assert.deepEqual(Object.keys(plain.tags[0]), ['id', 'url']);
    const named = await get(sandbox, '/v1.2/tags?fields=name,is_active');
    assert.deepEqual(Object.keys(named.tags[0]).sort(), ['id', 'is_active', 'name', 'url']);
    assert.equal(named.tags[0].name, sandbox.data.tags[0]!.name);
    assertError(await call(sandbox, '/v1.2/tags?fields=colour'), 400, /colour/);
    assertError(await call(sandbox, '/v1.2/teams?fields=is_active'), 400);
    assert.equal((await get(sandbox, '/v1.2/teams/801?fields=is_active')).team.is_active, true);
    const user = await get(sandbox, `/v1.2/users/${FIXTURES.userId}?fields=is_active,account`);
    assert.equal(user.user.account.url, `${sandbox.baseUrl}/v1/accounts/${user.user.account.id}`);
    assertError(await call(sandbox, '/v1.2/users?fields=account'), 400);
  });

  test('authors: full records by default, fields narrow them, lookups by id list', async () => {
    const [hostileA, hostileB] = FIXTURES.hostile.authorIds;
    const full = await get(sandbox, `/v1.3/authors/${hostileA}`);
    assert.equal(full.author.screen_name, HOSTILE.osc8Hyperlink);
    assert.equal(full.author.platform, 'facebook');
    assert.equal(full.author.url, `${sandbox.baseUrl}/v1.3/authors/${hostileA}`);
    const narrow = await get(sandbox, `/v1.1/authors/${encodeURIComponent(hostileB)}?fields=platform`);
    assert.deepEqual(Object.keys(narrow.author), ['id', 'url', 'platform']);
    const list = await get(sandbox, `/v1.3/authors?id=${hostileB},nope:1,${hostileA}`);
    assert.deepEqual(ids(list.authors), [hostileB, hostileA]);
    assert.equal(list.paging, undefined);
    const tooMany = sandbox.data.authors
      .slice(0, 51)
      .map((author) => author.id)
      .join(',');
    assertError(await call(sandbox, `/v1.3/authors?id=${tooMany}`), 400, /50/);
    assertError(await call(sandbox, '/v1.3/authors'), 400);
  });

  test('skip paging walks teams, queues, tags and reports completely, links repeating the query', async () => {
    const collections = [
      ['teams', sandbox.data.teams],
      ['queues', sandbox.data.queues],
      ['tags', sandbox.data.tags],
      ['reports', sandbox.data.reports],
    ] as const;
    for (const [name, records] of collections) {
      const version = name === 'reports' ? 'v1.1' : 'v1.3';
      const { records: walked, pagings } = await walk(sandbox, `/${version}/${name}?page_size=7&fields=name`, name);
      assert.deepEqual(ids(walked), ids(records), name);
      assert.equal(pagings[0].prev_page, null);
      assert.equal(pagings[pagings.length - 1].next_page, null);
      assert.match(pagings[0].next_page, new RegExp(`^${sandbox.baseUrl}/${version}/${name}\\?`));
      assert.match(pagings[0].next_page, /fields=name/);
      assert.ok(walked.every((record: Json) => typeof record.name === 'string'));
    }
    const inactive = await walk(sandbox, '/v1.1/tags?is_active=false&page_size=3', 'tags');
    assert.deepEqual(ids(inactive.records), ids(sandbox.data.tags.filter((tag) => !tag.is_active)));
    assert.ok(inactive.records.length >= 8);
    // Queues (spec): "paging holds next_page and prev_page, both null on the last page".
    const queuePages = (await walk(sandbox, '/v1.3/queues?page_size=7', 'queues')).pagings;
    assert.ok(queuePages.length >= 3);
    assert.deepEqual(queuePages[queuePages.length - 1], { next_page: null, prev_page: null });
    assert.match(queuePages[1].prev_page, /skip=0/);
    const tagPages = (await walk(sandbox, '/v1.3/tags?page_size=7', 'tags')).pagings;
    assert.match(tagPages[tagPages.length - 1].prev_page, /skip=/, 'other resources keep prev_page on the last page');
    const defaultPage = await get(sandbox, '/v1.3/queues');
    assert.equal(defaultPage.queues.length, 25);
    assert.equal((await get(sandbox, '/v1.3/queues?page_size=500')).queues.length, 50);
    assertError(await call(sandbox, '/v1.3/queues?page_size=0'), 400);
    // A number past what a link can spell exactly (1e+23) is refused, not echoed into a link.
    assertError(await call(sandbox, '/v1.3/conversations?is_priority=true&skip=99999999999999999999999'), 400, /skip/);
    assertError(await call(sandbox, '/v1.3/tags?page_size=99999999999999999999999'), 400, /page_size/);
  });

  test('users page with limit/offset; links carry limit, offset and fields', async () => {
    const { records, pagings } = await walk(sandbox, '/v1.2/users?limit=17&fields=email', 'users');
    assert.deepEqual(ids(records), ids(sandbox.data.users));
    assert.equal(records[0].email, sandbox.data.users[0]!.email);
    assert.equal(pagings[0].prev_page, null);
    assert.equal(pagings[0].next_page, `${sandbox.baseUrl}/v1.2/users?limit=17&offset=17&fields=email`);
    assert.equal(pagings[1].prev_page, `${sandbox.baseUrl}/v1.2/users?limit=17&offset=0&fields=email`);
    assert.equal((await get(sandbox, '/v1.2/users')).users.length, 25);
    // fields given twice: the links keep both, or page 2 would lose a column.
    const twice = await get(sandbox, '/v1.2/users?limit=5&fields=first_name&fields=email');
    assert.equal(twice.paging.next_page, `${sandbox.baseUrl}/v1.2/users?limit=5&offset=5&fields=first_name&fields=email`);
    assert.ok('email' in (await get(sandbox, twice.paging.next_page)).users[0]);
    assert.equal((await get(sandbox, '/v1.2/users?limit=1000')).users.length, 100);
    const utc = await get(sandbox, '/v1.2/users?timezone=UTC&limit=100');
    assert.deepEqual(ids(utc.users), ids(sandbox.data.users.filter((user) => user.timezone === 'UTC')));
    const joined = await get(sandbox, '/v1.2/users?date_joined_gte=2023-01-01&date_joined_lt=2024-01-01&limit=100&fields=date_joined');
    assert.deepEqual(ids(joined.users), ids(sandbox.data.users.filter((user) => user.date_joined.startsWith('2023'))));
  });

  test('api/1 pages with an opaque page_token that must not be modified', async () => {
    const types = await walk(sandbox, '/api/1/annotation-types?page_size=4', 'annotationtypes');
    assert.deepEqual(ids(types.records), ids(sandbox.data.annotationTypes));
    assert.deepEqual(Object.keys(types.records[0]).sort(), ['format', 'id', 'is_active', 'name', 'url']);
    const annotations = await walk(sandbox, '/api/1/annotations', 'annotations');
    assert.deepEqual(ids(annotations.records), ids(sandbox.data.annotations));
    assert.equal(annotations.pagings.length, Math.ceil(sandbox.data.annotations.length / 10));
    const link = new URL(types.pagings[0].next_page);
    const token = link.searchParams.get('page_token')!;
    const forged = Buffer.from(Buffer.from(token, 'base64url').toString().replace(/:4:/, ':8:')).toString('base64url');
    assertError(await call(sandbox, `/api/1/annotation-types?page_token=${forged}`), 400, /page_token/);
    assertError(await call(sandbox, `/api/1/annotations?page_token=${token}`), 400);
  });

  test('conversation pages cover every record once, in sort order with ties broken by id', async () => {
    const oldest = sandbox.data.conversations.map((conversation) => conversation.oldestMs);
    assert.ok(new Set(oldest).size < oldest.length - 50, 'the data has many shared sort dates');
    const expected = sandbox.data.conversations.filter((conversation) => conversation.is_priority).sort(byOldest);
    const { records, pagings } = await walk(sandbox, '/v1.3/conversations?is_priority=true&page_size=9', 'conversations');
    assert.deepEqual(ids(records), ids(expected));
    assert.deepEqual(Object.keys(records[0]), ['id', 'url']);
    for (const paging of pagings) assert.equal(typeof paging.prev_page, 'string');
    const rest = await walk(sandbox, '/v1.3/conversations?is_priority=false&page_size=50', 'conversations');
    assert.equal(records.length + rest.records.length, sandbox.data.conversations.length);
  });

  test('conversation links repeat query, sort and page_size with the keyset bound and skip; prev_page never ends', async () => {
    const first = await get(sandbox, '/v1.3/conversations?status=closed&channel=202&page_size=5&fields=status');
    const next = new URL(first.paging.next_page);
    assert.equal(`${next.origin}${next.pathname}`, `${sandbox.baseUrl}/v1.3/conversations`);
    assert.equal(next.searchParams.get('status'), 'closed');
    assert.equal(next.searchParams.get('channel'), '202');
    assert.equal(next.searchParams.get('fields'), 'status');
    assert.equal(next.searchParams.get('sort'), 'oldest_sort_date');
    assert.equal(next.searchParams.get('page_size'), '5');
    // The bound is the sort date of the page's last record; skip counts the records at that date already returned.
    const matching = sandbox.data.conversations.filter((c) => c.status === 'closed' && c.channel_ids.includes('202')).sort(byOldest);
    const last = matching[4]!;
    const bound = new Date(last.oldestMs).toISOString().slice(0, 19);
    assert.equal(next.searchParams.get('oldest_sort_date_gte'), bound);
    assert.ok(first.paging.next_page.includes(`oldest_sort_date_gte=${bound.replace(/:/g, '%3A')}`));
    assert.equal(next.searchParams.get('skip'), String(matching.slice(0, 5).filter((c) => c.oldestMs === last.oldestMs).length));
    assert.equal(next.searchParams.get('oldest_sort_date_lte'), null, 'no bound the query did not have');
    // prev_page of the first page is the first page again: following it never ends.
    assert.equal(new URL(first.paging.prev_page).searchParams.get('skip'), '0');
    const back = await get(sandbox, first.paging.prev_page);
    assert.deepEqual(ids(back.conversations), ids(first.conversations));
    assert.equal(typeof back.paging.prev_page, 'string');

    // A descending sort bounds from above (_lte) and keeps the other field's filter as given.
    const bounded = await get(
      sandbox,
      '/v1.1/conversations?is_priority=false&newest_sort_date_gte=2024-01-01&newest_sort_date_lt=2024-03-01&sort=-oldest_sort_date&page_size=3',
    );
    const link = new URL(bounded.paging.next_page);
    assert.equal(link.searchParams.get('newest_sort_date_lt'), '2024-03-01');
    assert.equal(link.searchParams.get('newest_sort_date_gte'), '2024-01-01');
    assert.equal(link.searchParams.get('newest_sort_date_lte'), null);
    assert.match(link.searchParams.get('oldest_sort_date_lte') ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    assert.equal(link.searchParams.get('sort'), '-oldest_sort_date');
    const { records } = await walk(sandbox, bounded.paging.next_page, 'conversations');
    const expected = sandbox.data.conversations
      .filter((c) => !c.is_priority && c.newestMs >= Date.parse('2024-01-01T00:00:00Z') && c.newestMs < Date.parse('2024-03-01T00:00:00Z'))
      .sort(byOldest)
      .reverse();
    assert.deepEqual([...ids(bounded.conversations), ...ids(records)], ids(expected));
  });

  test('several sort fields: the page is sorted but both links are null', async () => {
    const body = await get(sandbox, '/v1.3/conversations?status=unread&sort=-newest_sort_date,oldest_sort_date&page_size=50');
    assert.deepEqual(body.paging, { next_page: null, prev_page: null });
    const expected = sandbox.data.conversations
      .filter((c) => c.status === 'unread')
      .sort((a, b) => b.newestMs - a.newestMs || a.oldestMs - b.oldestMs || a.seq - b.seq)
      .slice(0, 50);
    assert.deepEqual(ids(body.conversations), ids(expected));
  });

  test('conversation list: page_size cap, required filters and parameter validation', async () => {
    assert.equal((await get(sandbox, '/v1.3/conversations?is_priority=false&page_size=51')).conversations.length, 50);
    assert.equal((await get(sandbox, '/v1.3/conversations?is_priority=false')).conversations.length, 25);
    assertError(await call(sandbox, '/v1.3/conversations'), 400, /^Either is_priority or status must be supplied$/);
    assertError(await call(sandbox, '/v1.3/conversations?status=open'), 400, /open/);
    assertError(await call(sandbox, '/v1.3/conversations?is_priority=yes'), 400);
    assertError(
      await call(sandbox, '/v1.3/conversations?is_priority=true&oldest_sort_date_gte=2024-01-01&newest_sort_date_lte=2024-02-01'),
      400,
      /^oldest_sort_date cannot be combined with newest_sort_date$/,
    );
    assertError(await call(sandbox, '/v1.3/conversations?is_priority=true&oldest_sort_date_gte=2024-02-30'), 400);
    assertError(await call(sandbox, '/v1.3/conversations?is_priority=true&oldest_sort_date_gte=yesterday'), 400);
    assertError(await call(sandbox, '/v1.3/conversations?is_priority=true&sort=created'), 400, /created/);
    assertError(await call(sandbox, '/v1.3/conversations?is_priority=true&include=content,notes'), 400);
    assertError(await call(sandbox, '/v1.3/conversations?is_priority=true&fields=subject'), 400);
    assertError(await call(sandbox, `/v1.2/conversations?is_priority=true&queue_id=${FIXTURES.queueId}`), 400, /v1\.3/);
    const queued = await walk(sandbox, `/v1.3/conversations?status=archived&queue_id=9001&queue_id=9002&page_size=50`, 'conversations');
    const expected = sandbox.data.conversations.filter((c) => c.status === 'archived' && ['9001', '9002'].includes(c.queue_id)).sort(byOldest);
    assert.deepEqual(ids(queued.records), ids(expected));
  });

  test('date bounds: a date-only bound covers its whole day; one bound alone is accepted', async () => {
    const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
    const target = sandbox.data.conversations[100]!;
    const date = day(target.oldestMs);
    const next = day(target.oldestMs + 86_400_000);
    const previous = day(target.oldestMs - 86_400_000);
    const onDay = sandbox.data.conversations.filter((c) => day(c.oldestMs) === date).sort(byOldest);
    const gteLte = await walk(
      sandbox,
      `/v1.3/conversations?status=${target.status}&oldest_sort_date_gte=${date}&oldest_sort_date_lte=${date}`,
      'conversations',
    );
    assert.deepEqual(ids(gteLte.records), ids(onDay.filter((c) => c.status === target.status)));
    const gtLt = await walk(
      sandbox,
      `/v1.3/conversations?is_priority=${target.is_priority}&oldest_sort_date_gt=${previous}&oldest_sort_date_lt=${next}`,
      'conversations',
    );
    assert.deepEqual(ids(gtLt.records), ids(onDay.filter((c) => c.is_priority === target.is_priority)));
    const single = await walk(sandbox, `/v1.3/conversations?is_priority=true&oldest_sort_date_gte=${date}&page_size=50`, 'conversations');
    const after = sandbox.data.conversations.filter((c) => c.is_priority && day(c.oldestMs) >= date).sort(byOldest);
    assert.deepEqual(ids(single.records), ids(after));
  });

  test('conversation filters: tag by name, author, assigned_to, contains_private', async () => {
    const tag = sandbox.data.tags.find((t) => t.id === FIXTURES.activeTagIds[1])!;
    const byTag = await walk(sandbox, `/v1.3/conversations?is_priority=false&tag=${encodeURIComponent(tag.name)}&page_size=50&fields=tags`, 'conversations');
    assert.ok(byTag.records.length > 0);
    assert.ok(byTag.records.every((c: Json) => c.tags.some((t: Json) => t.name === tag.name && t.url.endsWith(`/v1.3/tags/${t.id}`))));
    const hostileTag = await get(sandbox, `/v1.3/conversations?status=unread&tag=${encodeURIComponent(HOSTILE.formulaHyperlink)}`);
    assert.deepEqual(ids(hostileTag.conversations), [FIXTURES.hostile.conversationId]);
    const conversation = sandbox.data.conversations.find((c) => c.assigned_to !== null && c.seq > 500100)!;
    const filtered = await walk(
      sandbox,
      `/v1.3/conversations?status=${conversation.status}&author=${conversation.author_id}&assigned_to=${conversation.assigned_to}&contains_private=${conversation.contains_private}`,
      'conversations',
    );
    assert.ok(ids(filtered.records).includes(conversation.id));
    const expected = sandbox.data.conversations.filter(
      (c) =>
        c.status === conversation.status &&
        c.author_id === conversation.author_id &&
        c.assigned_to === conversation.assigned_to &&
        c.contains_private === conversation.contains_private,
    );
    assert.equal(filtered.records.length, expected.length);
  });

  test('include side-loads content, notes and actions, with their ids on the conversations', async () => {
    const body = await get(sandbox, '/v1.2/conversations?is_priority=true&page_size=4&include=content&include=notes&include=actions');
    const contentIds = body.conversations.flatMap((c: Json) => c.content_ids);
    assert.deepEqual(ids(body.content), contentIds);
    assert.deepEqual(
      ids(body.notes),
      body.conversations.flatMap((c: Json) => c.note_ids),
    );
    assert.deepEqual(
      ids(body.actions),
      body.conversations.flatMap((c: Json) => c.action_ids),
    );
    assert.ok(body.content.every((item: Json) => typeof item.imported_date === 'string' && /\.\d{3}$/.test(item.imported_date)));
    const plain = await get(sandbox, '/v1.2/conversations?is_priority=true&page_size=4');
    assert.equal(plain.content, undefined);
    assert.equal(plain.conversations[0].content_ids, undefined);
  });

  test('microblog items are restricted in every version; outbound replies are exempt', async () => {
    const items = FIXTURES.multiPlatformItemIds;
    for (const version of ['v1.1', 'v1.2', 'v1.3']) {
      const body = await get(sandbox, `/${version}/conversations/${FIXTURES.multiPlatformConversationId}?include=content&fields=channels`);
      assert.deepEqual(ids(body.conversation.channels), [FIXTURES.microblogChannelId, FIXTURES.facebookChannelId]);
      const item = (id: string): Json => body.content.find((candidate: Json) => candidate.id === id);
      const inbound = item(items.restrictedInbound);
      assert.equal(inbound.platform, 'microblog');
      assert.equal(inbound.created_date, MICROBLOG_PLACEHOLDER_DATE);
      assert.equal(inbound.link, MICROBLOG_PLACEHOLDER_LINK);
      assert.ok(inbound.link.endsWith('#this-info-is-unavailable'));
      assert.equal(inbound.text, null);
      assert.match(inbound.imported_date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/);
      assert.equal(typeof inbound.imported_delta, 'number');
      const ownPost = item(items.restrictedOwnPost);
      assert.equal(ownPost.created_date, MICROBLOG_PLACEHOLDER_DATE);
      assert.equal(ownPost.text, 'We are looking into delays on route 12.');
      const exempt = item(items.exemptReply);
      assert.notEqual(exempt.created_date, MICROBLOG_PLACEHOLDER_DATE);
      assert.match(exempt.link, /^https:\/\/microblog\.example\/status\/\d+$/);
      assert.equal(exempt.user.id, FIXTURES.userId);
      const facebook = item(items.facebookReply);
      assert.equal(facebook.platform, 'facebook');
      const timing = version !== 'v1.1';
      assert.equal('imported_date' in exempt, timing, `${version} exempt item`);
      assert.equal('imported_delta' in facebook, timing, `${version} facebook item`);
    }
  });

  test('hostile fixtures carry terminal escapes and formulas verbatim', async () => {
    const body = await get(sandbox, `/v1.3/conversations/${FIXTURES.hostile.conversationId}?include=content&fields=tags,author`);
    const names = body.conversation.tags.map((tag: Json) => tag.name);
    assert.ok(names.includes(HOSTILE.formulaHyperlink));
    assert.ok(names.some((name: string) => name.includes(HOSTILE.osc52Clipboard)));
    const text = body.content.map((item: Json) => item.text).join('\n');
    for (const payload of [
      HOSTILE.clearScreen,
      HOSTILE.osc8Hyperlink,
      HOSTILE.crOverwrite,
      HOSTILE.c1Csi,
      HOSTILE.del,
      HOSTILE.bell,
      HOSTILE.tabAndNewline,
      HOSTILE.formulaFullWidth,
    ]) {
      assert.ok(text.includes(payload), JSON.stringify(payload));
    }
    for (const id of FIXTURES.hostile.tagIds) assert.equal(sandbox.data.byId.tags.get(id)!.is_active, true);
  });

  test('report downloads come from another origin, byte for byte, and refuse credentials', async () => {
    assert.notEqual(new URL(sandbox.downloadBaseUrl).origin, new URL(sandbox.baseUrl).origin);
    const report = (await get(sandbox, `/v1.1/reports/${FIXTURES.reports.generatedId}?fields=download,generated_date,account`)).report;
    assert.ok(report.download.startsWith(`${sandbox.downloadBaseUrl}/downloads/`));
    assert.ok(report.download.endsWith(`/${FIXTURES.reports.generatedId}.csv`));
    const response = await fetch(report.download);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/csv/);
    const bytes = Buffer.from(await response.arrayBuffer());
    const expected = reportFileContent(sandbox.data.byId.reports.get(FIXTURES.reports.generatedId)!, 'csv');
    assert.ok(bytes.equals(expected));
    // Compressed, as fetch asks for it: the length is the coded one.
    assert.equal(response.headers.get('content-encoding'), 'gzip');
    assert.ok(Number(response.headers.get('content-length')) < expected.length / 3);
    assert.ok(expected.length > 100_000 && expected.length < 300_000, String(expected.length));
    assertError(await call(sandbox, report.download, { auth: true }), 400, /[Cc]redentials/);
    assertError(await call(sandbox, `${sandbox.downloadBaseUrl}/downloads/x/60001.csv`, { auth: false }), 404);
    const failed = (await get(sandbox, `/v1.1/reports/${FIXTURES.reports.failedId}?fields=failure,download,channel`)).report;
    assert.match(failed.failure, /phase/);
    assert.equal(failed.download, undefined);
    assert.equal(failed.channel.id, FIXTURES.failingReportChannelId);
    const xlsx = reportFileContent(sandbox.data.byId.reports.get(FIXTURES.reports.generatedId)!, 'xlsx');
    assert.equal(xlsx.subarray(0, 4).toString('latin1'), 'PK\x03\x04');
  });

  test('requests are recorded in order with method, url, authorization and status', async () => {
    sandbox.requests.length = 0;
    await call(sandbox, '/v1.3/tags?page_size=1');
    await call(sandbox, '/v1.3/tags', { auth: false });
    assert.deepEqual(
      sandbox.requests.map((r) => [r.listener, r.method, r.url, r.authorization === authHeader(sandbox), r.status]),
      [
        ['api', 'GET', '/v1.3/tags?page_size=1', true, 200],
        ['api', 'GET', '/v1.3/tags', false, 401],
      ],
    );
  });
});

test('dates nothing later than the moment it serves, even early in its anchor day', async () => {
  // Half a minute into the anchor day: an import time or a note a few minutes after the last message would be ahead of it.
  const now = Date.parse('2024-06-30T00:00:30Z');
  const sandbox = await startSandbox({ now: () => now });
  try {
    const times: string[] = [];
    const collect = (value: Json): void => {
      if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) times.push(value);
      else if (value !== null && typeof value === 'object') for (const inner of Object.values(value)) collect(inner);
    };
    for (const priority of ['true', 'false']) {
      collect(
        await get(
          sandbox,
          `/v1.3/conversations?is_priority=${priority}&sort=-newest_sort_date&page_size=50&include=content&include=notes&include=actions&fields=handling_times`,
        ),
      );
    }
    collect((await walk(sandbox, '/v1.2/users?limit=100&fields=last_login,date_joined', 'users')).records);
    collect((await walk(sandbox, '/v1.1/reports?page_size=50&fields=date_from,date_to,generation_start_date,generated_date', 'reports')).records);
    assert.ok(times.length > 300, `${times.length} dates seen`);
    const latest = times.map((time) => Date.parse(/Z|[+-]\d\d:\d\d$/.test(time) ? time : `${time}Z`)).reduce((a, b) => Math.max(a, b));
    assert.ok(latest <= now, `latest date ${new Date(latest).toISOString()} is after now`);
  } finally {
    await sandbox.close();
  }
});

describe('sandbox (state changes)', () => {
  test('PATCH validates, refuses read-only channels, and its change shows in later reads', async () => {
    await withSandbox({ conversations: 100 }, async (sandbox) => {
      const target = sandbox.data.conversations.find((c) => c.seq > 500010 && c.channel_ids[0] !== FIXTURES.readOnlyChannelId)!;
      const path = `/v1.3/conversations/${target.id}`;
      const patch = (body: unknown, at = path): Promise<Answer> => call(sandbox, at, { method: 'PATCH', body: JSON.stringify(body) });
      const [tagA, tagB] = FIXTURES.activeTagIds;
      assertError(await patch({ status: 'closed', tag_ids: [] }), 400, /on_hold, closing/);
      assertError(await patch({ status: 'on_hold' }), 400, /tag_ids/);
      assertError(await patch({ status: 'on_hold', tag_ids: ['123456'] }), 400, /^Unknown tag id 123456$/);
      assertError(await patch({ status: 'on_hold', tag_ids: [FIXTURES.inactiveTagId] }), 400, new RegExp(`^Tag ${FIXTURES.inactiveTagId} is inactive$`));
      assertError(await patch({ status: 'closing', tag_ids: [] }), 400, /close_reason/);
      assertError(await patch({ status: 'closing', tag_ids: [], close_reason: 'bored' }), 400, /^Unknown close reason 'bored'/);
      assertError(await patch({ status: 'on_hold', tag_ids: [], close_reason: 'bored' }), 400);
      assertError(await call(sandbox, path, { method: 'PATCH', body: 'not json' }), 400);
      assertError(await patch({ status: 'on_hold', tag_ids: [] }, `/v1.3/conversations/${FIXTURES.readOnlyConversationId}`), 403);
      assertError(await patch({ status: 'on_hold', tag_ids: [] }, '/v1.3/conversations/1'), 404);
      assert.equal(sandbox.data.byId.conversations.get(target.id)!.status, target.status);

      const done = await patch({ status: 'closing', tag_ids: [tagA, tagB], close_reason: FIXTURES.closeReasons[1] });
      assert.equal(done.status, 200);
      assert.deepEqual(done.body, { conversation: { id: target.id, url: `${sandbox.baseUrl}${path}` } });
      const after = (await get(sandbox, `${path}?fields=status,tags,close_reason`)).conversation;
      assert.equal(after.status, 'closing');
      assert.deepEqual(ids(after.tags), [tagA, tagB]);
      assert.equal(after.close_reason, FIXTURES.closeReasons[1]);
      const closing = await walk(sandbox, '/v1.3/conversations?status=closing&page_size=50', 'conversations');
      assert.ok(ids(closing.records).includes(target.id));

      assert.equal((await patch({ status: 'on_hold', tags: [tagB] })).status, 200);
      const held = (await get(sandbox, `/v1.1/conversations/${target.id}?fields=status,tags`)).conversation;
      assert.equal(held.status, 'on_hold');
      assert.deepEqual(ids(held.tags), [tagB]);
    });
  });

  test('report lifecycle follows the injected clock: queued, generating, generated or failed', async () => {
    let clock = NOON;
    await withSandbox({ now: () => clock, reportDelayMs: 10_000 }, async (sandbox) => {
      const post = (body: unknown): Promise<Answer> => call(sandbox, '/v1.1/reports', { method: 'POST', body: JSON.stringify(body) });
      const valid = { account: FIXTURES.accountIds[0], date_from: '2024-05-01', date_to: '2024-05-31', date_type: 'created_date' };
      assertError(await post({ ...valid, channel: '201' }), 400, /account or channel/);
      assertError(await post({ date_from: '2024-05-01', date_to: '2024-05-31', date_type: 'created_date' }), 400, /account or channel/);
      assertError(await post({ ...valid, account: 999 }), 400, /999/);
      assertError(await post({ ...valid, date_from: '2024-06-01' }), 400, /date_from/);
      assertError(await post({ ...valid, date_to: '31-05-2024' }), 400, /date_to/);
      assertError(await post({ ...valid, date_type: 'sent_date' }), 400, /date_type/);
      assertError(await post({ ...valid, format: 'pdf' }), 400, /format/);
      const reportCount = sandbox.data.reports.length;

      const created = await post({ ...valid, format: 'json' });
      assert.equal(created.status, 200, 'the spec: a successful request returns HTTP 200');
      const id = created.body.report.id;
      assert.equal(created.body.report.url, `${sandbox.baseUrl}/v1.1/reports/${id}`);
      assert.equal(sandbox.data.reports.length, reportCount + 1);
      const fields = 'fields=generation_start_date,generated_date,download,failure,account,date_from';
      const read = async (): Promise<Json> => (await get(sandbox, `/v1.1/reports/${id}?${fields}`)).report;

      const queued = await read();
      assert.equal(queued.date_from, '2024-05-01');
      assert.equal(queued.account.id, FIXTURES.accountIds[0]);
      for (const key of ['generation_start_date', 'generated_date', 'download', 'failure']) assert.equal(key in queued, false, key);
      clock += 5_000;
      const generating = await read();
      assert.equal(generating.generation_start_date, '2024-06-30T12:00:05');
      assert.equal(generating.generated_date, '');
      assert.equal(generating.download, undefined);
      clock += 5_000;
      const generated = await read();
      assert.equal(generated.generated_date, '2024-06-30T12:00:10');
      assert.ok(generated.download.startsWith(sandbox.downloadBaseUrl));
      const download = await fetch(generated.download);
      assert.match(download.headers.get('content-type') ?? '', /^application\/json/);
      assert.ok(Buffer.from(await download.arrayBuffer()).equals(reportFileContent(sandbox.data.byId.reports.get(id)!, 'json')));

      const failing = await post({ channel: FIXTURES.failingReportChannelId, date_from: '2024-05-01', date_to: '2024-05-01', date_type: 'updated_date' });
      clock += 10_000;
      const failed = (await get(sandbox, `/v1.1/reports/${failing.body.report.id}?${fields}`)).report;
      assert.match(failed.failure, /^Generation failed in phase '/);
      assert.equal(failed.download, undefined);
      const listed = await get(sandbox, `/v1.1/reports?channel=${FIXTURES.failingReportChannelId}&page_size=50`);
      assert.ok(ids(listed.reports).includes(failing.body.report.id));
    });
  });

  test('faults: each kind, Retry-After forms, and the seeded dice', async () => {
    await withSandbox({ conversations: 10 }, async (sandbox) => {
      for (const kind of ['429', '500', '502', '503'] as const) {
        sandbox.setFaults({ rate: 1, kinds: [kind] });
        const answer = await call(sandbox, '/v1.3/tags');
        assertError(answer, Number(kind));
        if (kind === '429') assert.equal(answer.headers.get('retry-after'), '1');
      }
      sandbox.setFaults({ rate: 1, kinds: ['429'], retryAfter: 'date', retryAfterSeconds: 30 });
      const dated = (await call(sandbox, '/v1.3/tags')).headers.get('retry-after')!;
      assert.ok(Math.abs(Date.parse(dated) - Date.now() - 30_000) < 2_000, dated);

      sandbox.setFaults({ rate: 1, kinds: ['drop'] });
      sandbox.requests.length = 0;
      await assert.rejects(fetch(`${sandbox.baseUrl}/v1.3/tags`, { headers: { authorization: authHeader(sandbox) } }));
      assert.equal(sandbox.requests[0]!.status, 0);

      sandbox.setFaults({ rate: 1, kinds: ['slow'], slowMs: 60 });
      const started = Date.now();
      assert.equal((await call(sandbox, '/v1.3/tags')).status, 200);
      assert.ok(Date.now() - started >= 55);

      const pattern = async (): Promise<number[]> => {
        sandbox.setFaults({ rate: 0.5, kinds: ['500'], seed: 7 });
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++) statuses.push((await call(sandbox, '/v1.3/tags/7005')).status);
        return statuses;
      };
      const once = await pattern();
      assert.deepEqual(await pattern(), once);
      assert.ok(once.includes(500) && once.includes(200), once.join());
      sandbox.setFaults(undefined);
      assert.equal((await call(sandbox, '/v1.3/tags')).status, 200);
    });
  });

  test('failListAfterPages, dropPostAfterBody and breakDownloads', async () => {
    await withSandbox({ conversations: 10, reportDelayMs: 0 }, async (sandbox) => {
      sandbox.setFaults({ failListAfterPages: 2 });
      assert.equal((await call(sandbox, '/v1.3/tags')).status, 200);
      assert.equal((await call(sandbox, '/v1.3/queues?skip=25')).status, 200);
      assertError(await call(sandbox, '/v1.3/tags?skip=25'), 500);
      assertError(await call(sandbox, '/v1.3/conversations?is_priority=true'), 500);
      assert.equal((await call(sandbox, '/v1.3/tags/7005')).status, 200);
      sandbox.setFaults(undefined);
      assert.equal((await call(sandbox, '/v1.3/tags?skip=25')).status, 200);

      sandbox.setFaults({ dropPostAfterBody: true });
      const before = sandbox.data.reports.length;
      const body = JSON.stringify({ channel: '202', date_from: '2024-06-01', date_to: '2024-06-02', date_type: 'created_date', format: 'csv' });
      await assert.rejects(
        fetch(`${sandbox.baseUrl}/v1.1/reports`, { method: 'POST', body, headers: { authorization: authHeader(sandbox), 'content-type': 'application/json' } }),
      );
      assert.equal(sandbox.data.reports.length, before + 1);
      const recorded = sandbox.requests[sandbox.requests.length - 1]!;
      assert.deepEqual([recorded.method, recorded.body, recorded.status], ['POST', body, 0]);

      sandbox.setFaults({ breakDownloads: true });
      const report = sandbox.data.reports[sandbox.data.reports.length - 1]!;
      const link = (await get(sandbox, `/v1.1/reports/${report.id}?fields=download`)).report.download;
      const response = await fetch(link);
      assert.equal(response.status, 200);
      await assert.rejects(response.arrayBuffer());
      assert.equal(sandbox.requests[sandbox.requests.length - 1]!.listener, 'download');
    });
  });

  test('the same seed gives the same data; another seed differs; fixtures exist for every seed', async () => {
    const snapshot = async (seed: number): Promise<string> => {
      const sandbox = await startSandbox({ anchor: ANCHOR, seed, conversations: 300 });
      const { byId: _byId, fixedContent: _fixed, ...rest } = sandbox.data;
      const hostile = sandbox.data.byId.conversations.get(FIXTURES.hostile.conversationId);
      assert.deepEqual(hostile?.tag_ids, FIXTURES.hostile.tagIds);
      assert.equal(sandbox.data.byId.tags.get(FIXTURES.inactiveTagId)?.is_active, false);
      assert.equal(sandbox.data.conversations.length, 300);
      await sandbox.close();
      return JSON.stringify(rest);
    };
    const first = await snapshot(1);
    assert.equal(await snapshot(1), first);
    assert.notEqual(await snapshot(2), first);
  });
});

describe('carectl sandbox', () => {
  test('--port N already in use: one line that says so and how to choose another, exit 1', async () => {
    const occupant = createServer();
    await new Promise<void>((resolve) => occupant.listen(0, '127.0.0.1', resolve));
    const { port } = occupant.address() as AddressInfo;
    try {
      const result = await runCli(['sandbox', '--port', String(port)]);
      assert.equal(result.code, 1);
      assert.equal(result.stderr, `carectl: sandbox: port ${port} is already in use; choose another --port, or 0 for a free one\n`);
      assert.equal(result.stdout, '');
    } finally {
      await new Promise((resolve) => occupant.close(resolve));
    }
  });

  test('--port below 1024 as an ordinary user (EACCES): one line naming the port and the privilege, exit 1', async (t) => {
    // Tests run as root, where any port opens: the sandbox runs as nobody, where the kernel keeps low ports privileged.
    const lowest = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim() || '1024');
    const nobody = asNobody();
    if (typeof nobody === 'string') return t.skip(nobody);
    if (lowest <= 81) return t.skip(`needs port 81 privileged (ip_unprivileged_port_start ${lowest})`);
    const child = spawnSync(process.execPath, [fileURLToPath(new URL('../../bin/carectl.js', import.meta.url)), 'sandbox', '--port', '81'], {
      ...nobody,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent/carectl-test-config' },
      timeout: 30_000,
    });
    assert.equal(child.stderr, `${privilegedLine('--port', 81)}\n`);
    assert.equal(child.status, 1);
    assert.equal(child.stdout, '');
  });

  test('the listen errors as lines: EACCES and EADDRINUSE name the flag of the listener that failed; others pass through', () => {
    const flags = { port: 81, annotationsPort: 82 };
    const error = (code: string, listener?: string) => Object.assign(new Error(`listen ${code}`), { code, ...(listener && { listener }) });
    assert.equal((listenRefused(error('EACCES'), flags) as Error).message, privilegedLine('--port', 81).replace(/^carectl: /, ''));
    assert.equal((listenRefused(error('EACCES', 'annotations'), flags) as Error).message, privilegedLine('--annotations-port', 82).replace(/^carectl: /, ''));
    assert.match((listenRefused(error('EADDRINUSE'), flags) as Error).message, /^sandbox: port 81 is already in use; choose another --port/);
    const other = error('EADDRNOTAVAIL');
    assert.equal(listenRefused(other, flags), other);
  });
});

function privilegedLine(flag: string, port: number): string {
  return `carectl: sandbox: port ${port} needs privileges this user does not have (ports below 1024 are root's, or need CAP_NET_BIND_SERVICE); choose a ${flag} of 1024 or above, or 0 for a free one`;
}
