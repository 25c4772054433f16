/**
 * The folder tree is the architecture (docs/ARCHITECTURE.md): these checks keep it so. They read
 * the compiled modules (dist/src), whose imports are exactly the runtime ones: type-only imports
 * are gone, dynamic import() calls stay.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

const compiled = fileURLToPath(new URL('../src/', import.meta.url));
const sources = resolve(compiled, '../../src');

function filesBelow(dir: string, extension: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesBelow(path, extension);
    return path.endsWith(extension) ? [path] : [];
  });
}

/** Module (relative to dist/src, without .js) → the project modules it imports at run time. */
export function runtimeImports(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of filesBelow(root, '.js')) {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s*)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1] as string);
    const name = (path: string): string => relative(root, path).replace(/\.js$/, '');
    graph.set(
      name(file),
      specifiers.map((specifier) => name(resolve(dirname(file), specifier))),
    );
  }
  return graph;
}

/** One cycle of the graph as a path a → … → a, or undefined. */
export function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

/**
 * The layers of src/, lowest first (docs/ARCHITECTURE.md draws the same map). A folder imports
 * its own files and the folders of lower layers; folders of one layer do not import each other.
 * '.' is the top: the entry files and the command tree (program.ts).
 */
const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['catalogue', 'http', 'sandbox'],
  ['output', 'api'],
  ['config'],
  ['cli'],
  ['docs'],
  ['commands'],
  ['.'],
];

const layerOf = (folder: string): number => {
  const layer = LAYERS.findIndex((folders) => folders.includes(folder));
  assert.ok(layer >= 0, `src/${folder}/ is in no layer of the map`);
  return layer;
};

export function mayImport(from: string, to: string): boolean {
  return from === to || layerOf(to) < layerOf(from);
}

/** The folder of a module named relative to src/ ('api/list-run' → 'api'; 'main' → '.'). */
const folderOf = (module: string): string => (module.includes('/') ? (module.split('/')[0] as string) : '.');

/** Module (relative to src/, without extension) → the project modules it names, type-only imports too. */
function sourceImports(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of filesBelow(root, '.ts')) {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s*)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1] as string);
    const name = (path: string): string => relative(root, path).replace(/\.[jt]s$/, '');
    graph.set(
      name(file),
      specifiers.map((specifier) => name(resolve(dirname(file), specifier))),
    );
  }
  return graph;
}

describe('architecture', () => {
  const graph = runtimeImports(compiled);

  test('the cycle finder finds a cycle, dynamic imports included', () => {
    assert.deepEqual(
      findCycle(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
        ]),
      ),
      ['a', 'b', 'c', 'a'],
    );
    assert.equal(
      findCycle(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
      undefined,
    );
  });

  test('no import cycles between modules (dynamic imports included)', () => {
    assert.ok(graph.size > 50, `read ${graph.size} modules`);
    assert.equal(findCycle(graph)?.join(' → '), undefined);
  });

  test('src/ holds only the entry files beside the layer folders', () => {
    const loose = readdirSync(sources).filter((name) => !statSync(join(sources, name)).isDirectory());
    assert.deepEqual(loose.sort(), ['main.ts', 'process.ts', 'program.ts']);
  });

  test('folders import only the layers below them (type imports included), as the layer map says', () => {
    const imports = sourceImports(sources);
    assert.ok(imports.size > 50, `read ${imports.size} modules`);
    const offending = [...imports].flatMap(([module, imports]) =>
      imports.filter((target) => !mayImport(folderOf(module), folderOf(target))).map((target) => `${module} → ${target}`),
    );
    assert.deepEqual(offending, []);
    const commanderUsers = filesBelow(join(compiled, 'api'), '.js').filter((file) => /from ['"]commander['"]/.test(readFileSync(file, 'utf8')));
    assert.deepEqual(commanderUsers, []);
  });

  test('the layer check finds an import upward and one across a layer', () => {
    assert.equal(mayImport('http', 'output'), false);
    assert.equal(mayImport('cli', 'commands'), false);
    assert.equal(mayImport('http', 'sandbox'), false, 'one layer, two folders: neither imports the other');
    assert.equal(mayImport('api', 'output'), false, 'the list engine imports no writer: its records go to its own RecordSink');
    assert.equal(mayImport('commands', 'cli'), true);
    assert.equal(mayImport('.', 'commands'), true);
    assert.equal(mayImport('api', 'api'), true);
  });

  test("every test file has its subject in ARCHITECTURE.md's test map, and every file the map names exists", () => {
    const project = resolve(sources, '..');
    const architecture = readFileSync(join(project, 'docs/ARCHITECTURE.md'), 'utf8');
    const map = architecture.slice(architecture.indexOf('## Test map'), architecture.indexOf('\n## ', architecture.indexOf('## Test map') + 1));
    const named = new Set([...map.matchAll(/[\w-]+\.test\.ts/g)].map((m) => m[0]));
    const files = readdirSync(join(project, 'test')).filter((name) => name.endsWith('.test.ts'));
    assert.ok(files.length > 50, `read ${files.length} test files`);
    assert.deepEqual(
      files.filter((name) => !named.has(name)),
      [],
      'test files missing from the map',
    );
    assert.deepEqual(
      [...named].filter((name) => !files.includes(name)),
      [],
      'files the map names that do not exist',
    );
  });
});
