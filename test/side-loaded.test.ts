/** Side-loaded content the service gets wrong: bad items are left out, a missing id list is made up from the parents. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from './helpers.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

const item = (id: string, parent: string, text: string) => ({
  id,
  parent,
  type: 'message',
  platform: 'x',
  created_date: `2026-01-0${id.slice(-1)}T10:00:00`,
  text,
});

describe('side-loaded content', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi((request) => {
      // An item with its conversation's id (another id space), content_ids naming items not sent, content not a list.
      if (request.url.includes('/conversations/500005'))
        return { json: { conversation: { id: '500005', url: 'x' }, content: [item('500005', '500005', 'self'), item('c2', '500005', 'reply')] } };
      if (request.url.includes('/conversations/500006'))
        return { json: { conversation: { id: '500006', url: 'x', content_ids: ['c1', 'c404', null] }, content: [item('c1', '500006', 'kept')] } };
      if (request.url.includes('/conversations/500007'))
        return { json: { conversation: { id: '500007', url: 'x', content_ids: ['c1'] }, content: { c1: item('c1', '500007', 'in an object') } } };
      if (request.url.includes('/conversations/500011')) {
        // One conversation, no content_ids, items without a parent (one answering the other): they are all its own.
        const { parent: _none, ...first } = item('c1', '', 'orphan');
        return { json: { conversation: { id: '500011', url: 'x' }, content: [first, item('c2', 'c1', 'answer')] } };
      }
      if (request.url.includes('/conversations/500002')) {
        // No content_ids: items found by parent (the conversation, or an earlier item), in their order.
        return {
          json: {
            conversation: { id: '500002', url: 'x' },
            content: [
              item('c1', '500002', 'first'),
              item('c2', 'c1', 'reply'),
              item('c3', '500003', 'another conversation'),
              item('c4', 'c5', 'loop'),
              item('c5', 'c4', 'loop'),
            ],
          },
        };
      }
      if (request.url.includes('is_priority=false')) return { json: { conversations: [], paging: { next_page: null } } };
      return {
        json: {
          conversations: [{ id: '500001', url: 'x', content_ids: ['c1', 'c2', 'c3'] }],
          content: [null, item('c1', '500001', 'hello'), 'junk', { text: 'no id' }, item('c3', 'c1', 'bye')],
          paging: { next_page: null },
        },
      };
    });
  });
  after(() => api.close());

  test('a null (or any item that is not an object with an id) in content is left out, the rest is shown', async () => {
    const out = await runCli(['conversations', 'list', '--include', 'content', '--columns', 'id,content.text', '-o', 'csv', '--verbose'], {
      env: scriptedEnv(api),
    });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, 'id,content.text\r\n500001,"[""hello"",""bye""]"\r\n');
    assert.doesNotMatch(out.stderr, /TypeError|Cannot read/);
  });

  test('content without content_ids: the items whose parent leads to the conversation', async () => {
    const out = await runCli(['conversations', 'content', '500002', '-o', 'tsv', '--columns', 'id,text'], { env: scriptedEnv(api) });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, 'id\ttext\nc1\tfirst\nc2\treply\n');
    assert.equal(out.stderr, '');
  });

  test('one conversation, no content_ids, items without a parent: every item is its own (get and content)', async () => {
    const got = await runCli(['conversations', 'get', '500011', '--include', 'content', '--columns', 'id,content.id', '-o', 'json'], { env: scriptedEnv(api) });
    assert.equal(got.code, 0, got.stderr);
    assert.deepEqual(
      (JSON.parse(got.stdout) as { content: { id: string }[] }).content.map((one) => one.id),
      ['c1', 'c2'],
    );
    const content = await runCli(['conversations', 'content', '500011', '-o', 'tsv', '--columns', 'id,text'], { env: scriptedEnv(api) });
    assert.equal(content.code, 0, content.stderr);
    assert.equal(content.stdout, 'id\ttext\nc1\torphan\nc2\tanswer\n');
    assert.equal(content.stderr, '');
  });

  test("an item whose id is its conversation's id does not hide the conversation's other items", async () => {
    const out = await runCli(['conversations', 'content', '500005', '-o', 'tsv', '--columns', 'id,text'], { env: scriptedEnv(api) });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, 'id\ttext\nc2\treply\n500005\tself\n');
  });

  test('content_ids naming items not sent, and content that is not a list, are said on stderr; the good items stay', async () => {
    const missing = await runCli(['conversations', 'content', '500006', '-o', 'tsv', '--columns', 'id,text'], { env: scriptedEnv(api) });
    assert.equal(missing.code, 0, missing.stderr);
    assert.equal(missing.stdout, 'id\ttext\nc1\tkept\n');
    assert.equal(missing.stderr, "carectl: the service's reply left out content: conversation 500006 names 2 content items it does not hold (c404, null)\n");
    const notList = await runCli(['conversations', 'content', '500007', '-o', 'tsv', '--columns', 'id,text'], { env: scriptedEnv(api) });
    assert.match(notList.stderr, /^carectl: the service's reply left out content: its "content" is not a list\n/);
  });
});

describe('side-loaded notes and actions without id lists', () => {
  let api: ScriptedApi;
  before(async () => {
    api = await scriptedApi((request) => {
      if (request.url.includes('/conversations/500008'))
        return { json: { conversation: { id: '500008', url: 'x' }, notes: [{ id: 'n1', text: 'call back' }], actions: [{ id: 'a1', type: 'closed' }] } };
      // Two pages, each leaving out whose notes they are.
      const url = new URL(request.url, api.baseUrl);
      const second = url.searchParams.get('skip') === '2';
      url.searchParams.set('skip', '2');
      return {
        json: {
          conversations: (second ? ['500011', '500012'] : ['500009', '500010']).map((id) => ({ id, url: 'x' })),
          notes: [{ id: 'n1', text: 'whose?' }],
          paging: { next_page: second ? null : url.href },
        },
      };
    });
  });
  after(() => api.close());

  test('one conversation: all of them are its own', async () => {
    const out = await runCli(['conversations', 'get', '500008', '--include', 'notes,actions', '--columns', 'id,notes,actions', '-o', 'json'], {
      env: scriptedEnv(api),
    });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), { id: '500008', notes: [{ id: 'n1', text: 'call back' }], actions: [{ id: 'a1', type: 'closed' }] });
  });

  test('a page of several: not guessed at, and said on stderr once, not for every page', async () => {
    const out = await runCli(['conversations', 'list', '--status', 'on_hold', '--include', 'notes', '--columns', 'id,notes', '-o', 'csv', '--parallel', '1'], {
      env: scriptedEnv(api),
    });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, 'id,notes\r\n500009,\r\n500010,\r\n500011,\r\n500012,\r\n');
    assert.equal(out.stderr, "carectl: the service's reply left out content: its 1 notes items name no conversation (no note_ids)\n");
  });
});

test('conversations get --include content in table form: 20,000 items (200,000 keys) are shown, whatever the size', async () => {
  const items = Array.from({ length: 20_000 }, (_, i) => ({
    id: `c${i}`,
    parent: '500001',
    type: 'message',
    platform: 'x',
    platform_id: `p${i}`,
    is_private: false,
    is_priority: false,
    is_by_source: i % 2 === 0,
    created_date: '2026-01-01T10:00:00',
    text: `item ${i}`,
  }));
  const api = await scriptedApi(() => ({ json: { conversation: { id: '500001', url: 'x', content_ids: items.map((one) => one.id) }, content: items } }));
  try {
    const out = await runCli(['conversations', 'get', '500001', '--include', 'content', '-o', 'table'], { env: scriptedEnv(api) });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^id +500001\n/);
    assert.match(out.stdout, /\ncontent\.19999\.text +item 19999\n$/);
  } finally {
    await api.close();
  }
});
