// The CLI's own usage errors (flags, arguments, commands) are one readable line, as every orch error.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {runOrch} from '../support/server.js'

describe('usage errors', () => {
  const cases: [string, string[], RegExp][] = [
    ['a flag value not among its options', ['get', 'ns', '-o', 'foo'], /^error: Expected --output=foo to be one of: json, yaml, name, wide$/],
    ['an unknown flag', ['get', 'ns', '--bogus'], /^error: Nonexistent flag: --bogus$/],
    ['an unknown command', ['nosuch'], /^error: command nosuch not found$/],
    ['a missing argument', ['certificate', 'approve'], /^error: Missing 1 required arg: names /],
    ['a missing required flag', ['apply'], /^error: Missing required flag filename$/],
    ['a flag without its value', ['get', 'ns', '-n'], /^error: Flag --namespace expects a value$/],
  ]
  for (const [what, args, expected] of cases) {
    it(`"the CLI prints one readable line and exits non-zero": ${what} (orch ${args.join(' ')})`, async () => {
      const result = await runOrch(args)
      assert.equal(result.code, 2, result.stderr)
      assert.equal(result.stderr.split('\n').filter(Boolean).length, 1, result.stderr)
      assert.match(result.stderr.trim(), expected)
      assert.equal(result.stdout, '', 'no usage text')
    })
  }
})
