// The layer order of docs/architecture.md is a lint rule: an import pointing up the list fails.
import assert from 'node:assert/strict'
import {resolve} from 'node:path'
import {describe, it} from 'node:test'
import {ESLint} from 'eslint'

const root = resolve(import.meta.dirname, '../../..')
const eslint = new ESLint({cwd: root})

async function importErrors(file: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import {x} from '${specifier}'\nexport const y = x\n`, {filePath: resolve(root, file)})
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message)
}

describe('layer order lint rule', () => {
  it('an import pointing up the list fails lint (storage importing apiserver)', async () => {
    const messages = await importErrors('src/storage/example.ts', '../apiserver/server.js')
    assert.equal(messages.length, 1)
    assert.match(messages[0], /src\/storage sits below src\/apiserver/)
  })

  it('controllers may not import the apiserver; the client may not import controllers', async () => {
    assert.equal((await importErrors('src/controllers/example.ts', '../apiserver/registry.js')).length, 1)
    assert.equal((await importErrors('src/client/example.ts', '../controllers/x.js')).length, 1)
    assert.equal((await importErrors('src/api/example.ts', '../machinery/status.js')).length, 1)
  })

  it('an import pointing down the list passes (apiserver -> storage, controllers -> client, machinery -> api)', async () => {
    assert.deepEqual(await importErrors('src/apiserver/example.ts', '../storage/index.js'), [])
    assert.deepEqual(await importErrors('src/controllers/example.ts', '../client/index.js'), [])
    assert.deepEqual(await importErrors('src/machinery/example.ts', '../api/types.js'), [])
  })

  it('src may not import commands/', async () => {
    assert.equal((await importErrors('src/cli/example.ts', '../../commands/server.js')).length, 1)
  })
})
