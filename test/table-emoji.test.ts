/**
 * One grid for newer emoji too (issue 48 item 5): tags named with emoji of Unicode 13 and 14
 * (🫠 🥲 🥸) keep their row's columns where the header's start, and every value whole, at 80
 * columns; CJK and ASCII rows as before. cli-table3 pads with carectl's measure, from tsc's
 * output (in process) and from the bundle (under a pseudo-terminal).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { displayWidth } from '../src/output/width.js';
import { runCli } from './helpers.js';
import { ptyRunner, runInPty } from './pty.js';
import { scriptedApi, scriptedEnv, type ScriptedApi } from './scripted-server.js';

const TAGS = [
  { id: '7001', url: 'x', name: 'melting 🫠 face', is_active: false },
  { id: '7002', url: 'x', name: 'smile 🥲 tear', is_active: true },
  { id: '7003', url: 'x', name: 'disguise 🥸 ok', is_active: false },
  { id: '7004', url: 'x', name: '中文标签 cjk', is_active: true },
  { id: '7005', url: 'x', name: 'plain ascii', is_active: true },
  // Longer than 80 columns: the name is cut, the last column stays whole.
  { id: '7006', url: 'x', name: `${'melting 🫠 face '.repeat(6)}end`, is_active: false },
];

/** Each row's is_active value starts in the header's column, whole (`false`, not `fals`). */
function assertOneGrid(screen: string): void {
  const lines = screen
    .replace(/\r/g, '')
    .split('\n')
    .filter((line) => line !== '');
  const header = lines[0]!;
  // The last header (IS_ACTIVE, or its short form where the name takes the room).
  const column = displayWidth(header.slice(0, header.lastIndexOf(' ') + 1));
  const rows = lines.slice(1);
  assert.equal(rows.length, TAGS.length, screen);
  rows.forEach((line, index) => {
    const value = String(TAGS[index]!.is_active);
    assert.ok(line.endsWith(`  ${value}`), `row ${index + 1} ends with its whole value:\n${screen}`);
    assert.equal(displayWidth(line.slice(0, line.length - value.length)), column, `row ${index + 1} on the header's grid:\n${screen}`);
    assert.ok(displayWidth(line) <= 80, line);
  });
}

let api: ScriptedApi;
before(async () => {
  api = await scriptedApi(() => ({ json: { tags: TAGS, paging: { next_page: null } } }));
});
after(() => api.close());

test('in process (tsc output): a table of such tags is one grid at 80 columns', async () => {
  const out = await runCli(['tags', 'list'], { env: { ...scriptedEnv(api), NO_COLOR: '1' }, stdoutTTY: true, columns: 80 });
  assert.equal(out.code, 0, out.stderr);
  assertOneGrid(out.stdout);
});

const runner = ptyRunner();
describe('in a pseudo-terminal (the bundle)', { skip: typeof runner === 'string' ? runner : false }, () => {
  test('a table of such tags is one grid at 80 columns', async () => {
    const { code, screen } = await runInPty(['tags', 'list'], { columns: 80, env: { ...scriptedEnv(api), NO_COLOR: '1' } });
    assert.equal(code, 0, screen);
    assertOneGrid(screen);
  });
});
