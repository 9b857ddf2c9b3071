// Lint: typescript-eslint's recommended rules plus the layer order of docs/architecture.md.
// Each layer may import only the layers below it; an import pointing up fails lint.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

// Top to bottom. A file in layer i may import layers i+1.. only.
const layers = ['cli', 'apiserver', 'admission', 'controllers', 'agent', 'client', 'storage', 'machinery', 'api']

function layerRules(index) {
  const forbidden = layers.slice(0, index)
  const patterns = forbidden.map((name) => ({
    group: [`**/src/${name}/**`, `../${name}/**`, `../../${name}/**`, `../../src/${name}/**`],
    message: `src/${layers[index]} sits below src/${name} in the layer order (docs/architecture.md): imports may only point down.`,
  }))
  patterns.push({
    group: ['**/commands/**'],
    message: 'src/ may not import commands/: commands are the top layer.',
  })
  return patterns
}

export default tseslint.config(
  {ignores: ['dist/**', 'node_modules/**', 'bin/**', 'scripts/**', 'eslint.config.js']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_'}],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-constant-condition': ['error', {checkLoops: false}],
    },
  },
  ...layers.map((name, index) => ({
    files: [`src/${name}/**/*.ts`],
    rules: {'no-restricted-imports': ['error', {patterns: layerRules(index)}]},
  })),
)
