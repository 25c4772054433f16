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
    graph.set(name(file), specifiers.map((specifier) => name(resolve(dirname(file), specifier))));
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

describe('architecture', () => {
  const graph = runtimeImports(compiled);

  test('the cycle finder finds a cycle, dynamic imports included', () => {
    assert.deepEqual(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])), ['a', 'b', 'c', 'a']);
    assert.equal(findCycle(new Map([['a', ['b']], ['b', []]])), undefined);
  });

  test('no import cycles between modules (dynamic imports included)', () => {
    assert.ok(graph.size > 50, `read ${graph.size} modules`);
    assert.equal(findCycle(graph)?.join(' → '), undefined);
  });

  test('src/ holds only the entry files beside the layer folders', () => {
    const loose = readdirSync(sources).filter((name) => !statSync(join(sources, name)).isDirectory());
    assert.deepEqual(loose.sort(), ['main.ts', 'process.ts']);
  });

  test('no source file over 300 lines outside the sandbox', () => {
    const long = filesBelow(sources, '.ts')
      .filter((file) => !relative(sources, file).startsWith('sandbox'))
      .map((file) => [relative(sources, file), readFileSync(file, 'utf8').split('\n').length] as const)
      .filter(([, lines]) => lines > 300);
    assert.deepEqual(long, []);
  });

  test('layers import only downward: the API layer knows no command line, docs read no command files', () => {
    const offending = [...graph].flatMap(([module, imports]) =>
      imports
        .filter((target) => {
          if (module.startsWith('api/') || module.startsWith('http/') || module.startsWith('core/') || module.startsWith('output/')) {
            return target.startsWith('cli/') || target.startsWith('commands/');
          }
          if (module.startsWith('docs/')) return target.startsWith('commands/');
          return false;
        })
        .map((target) => `${module} → ${target}`),
    );
    assert.deepEqual(offending, []);
    const commanderUsers = filesBelow(join(compiled, 'api'), '.js').filter((file) => /from ['"]commander['"]/.test(readFileSync(file, 'utf8')));
    assert.deepEqual(commanderUsers, []);
  });
});
