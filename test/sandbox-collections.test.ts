/**
 * The sandbox's replies, byte for byte, a few per collection: what registering a collection once
 * (router.ts's list) derives: routes, versions in errors and record urls, by-id lookups, paging
 * links, writes and their method checks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { ANCHOR, NOON, authHeader } from './sandbox-client.js';

/** Method, path, body, status, the reply with the base address as BASE, and its Allow header. */
type Row = [string, string, string | null, number, string, string?];

const ROWS: Row[] = [
  [
    'GET',
    '/v1.3/tags?page_size=2&skip=10&fields=id,name',
    null,
    200,
    '{"tags":[{"id":"7011","url":"BASE/v1.3/tags/7011","name":"order-vip"},{"id":"7012","url":"BASE/v1.3/tags/7012","name":"billing-feedback"}],"paging":{"next_page":"BASE/v1.3/tags?page_size=2&skip=12&fields=id%2Cname","prev_page":"BASE/v1.3/tags?page_size=2&skip=8&fields=id%2Cname"}}',
  ],
  ['GET', '/v1.3/tags/7005', null, 200, '{"tag":{"id":"7005","url":"BASE/v1.3/tags/7005"}}'],
  ['GET', '/v1/tags', null, 404, '{"status":"error","message":"Resource \'tags\' does not exist in v1 (it exists in v1.1, v1.2, v1.3)"}'],
  [
    'GET',
    '/v1.3/queues?page_size=2&skip=58&fields=id',
    null,
    200,
    '{"queues":[{"id":"9059","url":"BASE/v1.3/queues/9059"},{"id":"9060","url":"BASE/v1.3/queues/9060"}],"paging":{"next_page":null,"prev_page":null}}',
  ],
  [
    'GET',
    '/v1.2/teams/801?fields=account,is_active',
    null,
    200,
    '{"team":{"id":"801","url":"BASE/v1.2/teams/801","account":{"id":1001,"url":"BASE/v1/accounts/1001"},"is_active":true}}',
  ],
  [
    'GET',
    '/v1/channels?type=facebook&fields=id,account',
    null,
    200,
    '[{"id":"202","url":"BASE/v1/channels/202","account":{"id":1001,"url":"BASE/v1/accounts/1001"}},{"id":"206","url":"BASE/v1/channels/206","account":{"id":1002,"url":"BASE/v1/accounts/1002"}}]',
  ],
  [
    'GET',
    '/v1.3/channels/202?fields=reports,account',
    null,
    200,
    '{"channel":{"id":"202","url":"BASE/v1.3/channels/202","reports":"BASE/v1.1/reports?channel=202","account":{"id":1001,"url":"BASE/v1/accounts/1001"}}}',
  ],
  [
    'GET',
    '/v1/accounts/1002?fields=channels',
    null,
    200,
    '{"id":1002,"url":"BASE/v1/accounts/1002","channels":[{"id":"204","url":"BASE/v1/channels/204"},{"id":"205","url":"BASE/v1/channels/205"},{"id":"206","url":"BASE/v1/channels/206"}]}',
  ],
  [
    'GET',
    '/v1.2/users?limit=1&fields=id',
    null,
    200,
    '{"users":[{"id":"3001","url":"BASE/v1.2/users/3001"}],"paging":{"next_page":"BASE/v1.2/users?limit=1&offset=1&fields=id","prev_page":null}}',
  ],
  ['GET', '/v1.2/users/nope', null, 404, '{"status":"error","message":"No user with id \'nope\'"}'],
  [
    'GET',
    '/v1.3/authors?id=m:880001&fields=id,screen_name',
    null,
    200,
    '{"authors":[{"id":"m:880001","url":"BASE/v1.3/authors/m:880001","screen_name":"acme_microblog"}]}',
  ],
  [
    'GET',
    '/v1.3/conversations/500003?fields=id,channels,author,tags',
    null,
    200,
    '{"conversation":{"id":"500003","url":"BASE/v1.3/conversations/500003","channels":[{"id":"204","url":"BASE/v1.3/channels/204","platform_id":"880004","name":"Globex WhatsApp"}],"author":{"id":"w:1000004","url":"BASE/v1.3/authors/w:1000004"},"tags":[]}}',
  ],
  [
    'PATCH',
    '/v1.2/conversations/500003',
    '{}',
    405,
    '{"status":"error","message":"Method PATCH is not allowed on /v1.2/conversations/500003; allowed: GET"}',
    'GET',
  ],
  [
    'GET',
    '/v1.1/reports?page_size=1&fields=id,account,channel',
    null,
    200,
    '{"reports":[{"id":"60001","url":"BASE/v1.1/reports/60001","account":{"id":1001,"url":"BASE/v1/accounts/1001"}}],"paging":{"next_page":"BASE/v1.1/reports?page_size=1&fields=id%2Caccount%2Cchannel&skip=1","prev_page":null}}',
  ],
  [
    'POST',
    '/v1.1/reports',
    '{"account":1001,"date_from":"2024-01-01","date_to":"2024-01-31","date_type":"created_date"}',
    200,
    '{"report":{"id":"60031","url":"BASE/v1.1/reports/60031"}}',
  ],
  ['POST', '/v1.3/tags', '{}', 405, '{"status":"error","message":"Method POST is not allowed on /v1.3/tags; allowed: GET"}', 'GET'],
  [
    'GET',
    '/api/1/annotation-types?page_size=1',
    null,
    200,
    '{"annotationtypes":[{"id":"1","name":"Sentiment override","format":"short","is_active":true,"url":"BASE/api/1/annotation-types/1"}],"paging":{"next_page":"BASE/api/1/annotation-types?page_size=1&page_token=YW5ub3RhdGlvbi10eXBlczoxOjJlbnU1cA"}}',
  ],
  [
    'GET',
    '/api/1/annotations/1',
    null,
    200,
    '{"annotation":{"id":"1","type_id":"9","value":"Waiting for the warehouse. Could you tell us which version of the app you use?","created_date":"2024-02-14T09:36:36","moderator_id":"3076","url":"BASE/api/1/annotations/1"}}',
  ],
  ['GET', '/v1.3/annotations', null, 404, '{"status":"error","message":"Unknown resource \'annotations\'"}'],
  ['GET', '/api/1/tags', null, 404, '{"status":"error","message":"No such path: /api/1/tags"}'],
  ['GET', '/v1.3/constructor', null, 404, '{"status":"error","message":"Unknown resource \'constructor\'"}'],
  ['GET', '/api/1/toString', null, 404, '{"status":"error","message":"No such path: /api/1/toString"}'],
];

describe('sandbox collections: replies byte for byte', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox({ anchor: ANCHOR, now: () => NOON, conversations: 300 });
  });
  after(() => sandbox.close());

  for (const row of ROWS) {
    const [method, path, body, status, text, allow] = row;
    test(`${method} ${path}`, async () => {
      const response = await fetch(sandbox.baseUrl + path, { method, body, headers: { authorization: authHeader(sandbox) } });
      assert.equal(response.status, status);
      assert.equal((await response.text()).split(sandbox.baseUrl).join('BASE'), text);
      assert.equal(response.headers.get('allow'), allow ?? null);
    });
  }
});
