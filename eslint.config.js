// ESLint over everything but the build: the recommended rules of ESLint and typescript-eslint,
// three promise rules with type information for src and test, and limits on a function's length
// and branching in place of a cap on a file's length. Formatting is Prettier's (.prettierrc.json).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      complexity: ['error', 20],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Terminal text is made and cleaned here: escapes in patterns are the point.
      'no-control-regex': 'off',
    },
  },
  {
    // With type information, where it finds what the others cannot: a promise nobody awaits, one
    // passed where a plain function is expected, an async function that never waits.
    files: ['src/**/*.ts', 'test/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/require-await': 'error',
    },
  },
  {
    // A test double implements an async interface (a writer, a page source, a sleep) without waiting.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // The entry and the bench's probes are CommonJS on purpose (bin/carectl.js explains why).
    files: ['**/*.cjs', 'bin/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // A describe block's length is its number of cases; a bench script is one long scenario.
    files: ['test/**', 'bench/**'],
    rules: { 'max-lines-per-function': 'off', complexity: 'off' },
  },
);
