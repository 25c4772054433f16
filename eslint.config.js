// ESLint over everything but the build: the recommended rules of ESLint and typescript-eslint
// (without type information, so `npm run lint` stays quick), and limits on a function's length
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
