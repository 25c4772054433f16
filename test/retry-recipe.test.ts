/**
 * The README's retry loop (`### Scripts`), run as printed under its own `set -euo pipefail` in
 * bash, against the sandbox: down (every request dropped) for the first attempt, back after the
 * loop's `sleep`. issue 49 (9): the first attempt sends nothing (the tags list cannot be read),
 * yet every id comes as a row, so the loop tries again instead of giving up.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURES, type Sandbox } from '../src/sandbox/index.js';
import { apiRequests, openSandbox, scratchFolder } from './helpers.js';
import { serve, type Served } from './scripted-server.js';
import { describeRun, openShellSession, type ShellSession } from './shell.js';

const README = new URL('../../README.md', import.meta.url);

/** The loop: the first text block after the heading. */
async function retryLoop(): Promise<string> {
  const markdown = await readFile(README, 'utf8');
  const section = markdown.slice(markdown.indexOf('### Scripts'));
  const block = /```text\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block?.startsWith('#!/bin/bash\nset -euo pipefail\n'), 'README.md: ### Scripts has its loop in a ```text block, under set -euo pipefail');
  return block as string;
}

describe("the README's retry loop", () => {
  let sandbox: Sandbox;
  let shell: ShellSession;
  /** What the loop's `sleep` calls: it brings the service back. */
  let wake: Served;
  const slept: string[] = [];
  before(async () => {
    sandbox = await openSandbox();
    shell = await openShellSession(sandbox);
    wake = await serve((req, res) => {
      slept.push(req.url ?? '');
      sandbox.setFaults(undefined);
      res.end('awake\n');
    });
  });
  after(async () => {
    await wake.close();
    await shell.close();
    await sandbox.close();
  });

  it('the service down on the first attempt: every id comes back as a network row, and the second attempt parks them', async () => {
    const site = scratchFolder('carectl-retry-');
    const fake = join(site, 'bin');
    mkdirSync(fake);
    // `sleep` returns at once, once the service is back; `carectl` does not retry a request
    // (the backoff would be real seconds in a child process): the loop does the retrying.
    writeFileSync(
      join(fake, 'sleep'),
      `#!/bin/bash\nexec 3<>/dev/tcp/127.0.0.1/${new URL(wake.url).port}\nprintf 'GET /%s HTTP/1.0\\r\\n\\r\\n' "$1" >&3\ncat <&3 >/dev/null\n`,
    );
    writeFileSync(join(fake, 'carectl'), '#!/bin/sh\nexec "$CARECTL_REAL" --retries 0 "$@"\n');
    for (const name of ['sleep', 'carectl']) chmodSync(join(fake, name), 0o755);
    const script = join(site, 'park');
    writeFileSync(script, await retryLoop());
    const data = sandbox.data;
    const [a, b] = data.conversations
      .filter((c) => Number(c.id) > 500003 && c.status !== 'on_hold' && c.channel_ids.every((id) => data.byId.channels.get(id)!.can_manage_conversations))
      .map((c) => c.id);
    const locked = FIXTURES.readOnlyConversationId;
    writeFileSync(join(site, 'ids.txt'), `${a}\n999999\n${b}\n${locked}\n`);

    sandbox.setFaults({ rate: 1, kinds: ['drop'] });
    const from = sandbox.requests.length;
    const line = `cd '${site}' && CARECTL_REAL="$(command -v carectl)" PATH='${fake}':"$PATH" bash ./park`;
    const result = await shell.run(line, { timeoutMs: 30_000 });

    // The second attempt: two parked, two named (not worth another try); the exit code of its first failure (404).
    assert.equal(result.code, 4, describeRun('park', result));
    assert.deepEqual(slept, ['/60']);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 4, result.stderr);
    assert.match(
      lines[0]!,
      /^carectl: nothing was sent \(the tags list could not be read: GET http:\/\/127\.0\.0\.1:\d+\/v1\.3\/tags failed: .*\): 4 not sent, rows with error\.kind network$/,
    );
    const denied = `The API key lacks the Manage Conversations permission for channel ${FIXTURES.readOnlyChannelId} (HTTP 403)`;
    assert.deepEqual(lines.slice(1), [
      `carectl: 2 of 4 updates failed (first: 999999: No conversation with id '999999' (HTTP 404))`,
      "999999: not_found No conversation with id '999999' (HTTP 404)",
      `${locked}: forbidden ${denied}`,
    ]);
    assert.equal(readFileSync(join(site, 'todo.txt'), 'utf8'), '');
    assert.deepEqual(
      readFileSync(join(site, 'results.ndjson'), 'utf8')
        .trim()
        .split('\n')
        .map((row) => {
          const { id, ok, error } = JSON.parse(row) as { id: string; ok: boolean; error: { kind: string } | null };
          return [id, ok, error?.kind ?? null];
        }),
      [
        [a, true, null],
        ['999999', false, 'not_found'],
        [b, true, null],
        [locked, false, 'forbidden'],
      ],
    );
    for (const id of [a!, b!]) assert.equal(data.byId.conversations.get(id)!.status, 'on_hold');
    assert.equal(apiRequests(sandbox, from).filter((r) => r.method === 'PATCH').length, 3, 'the second attempt sent a, b and the locked one');
  });
});
