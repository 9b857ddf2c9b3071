// `orch auth can-i --list`: kubectl's table over a SubjectRulesReviewStatus, without a server.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {rulesTable} from '../../src/cli/auth.js'

describe('orch auth can-i --list table', () => {
  const status = {
    resourceRules: [
      {verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log']},
      {verbs: ['create'], apiGroups: ['authorization.orch.io'], resources: ['selfsubjectaccessreviews']},
      {verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a', 'b']},
      {verbs: ['watch'], apiGroups: [''], resources: ['pods']},
    ],
    nonResourceRules: [{verbs: ['get'], nonResourceURLs: ['/api', '/healthz']}],
    incomplete: false,
  }
  const row = (...cells: string[]) => `${cells[0].padEnd(49)}${cells[1].padEnd(20)}${cells[2].padEnd(17)}${cells[3]}\n`

  it('"Resources  Non-Resource URLs  Resource Names  Verbs": rules broken down, compacted per resource and sorted as kubectl sorts them', () => {
    assert.equal(
      rulesTable(status),
      row('Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs') +
        row('selfsubjectaccessreviews.authorization.orch.io', '[]', '[]', '[create]') +
        // sorted by PolicyRule.String(), verbs first: "[get list watch]" sorts before "[get list]"
        row('pods', '[]', '[]', '[get list watch]') +
        row('pods/log', '[]', '[]', '[get list]') +
        row('', '[/api]', '[]', '[get]') +
        row('', '[/healthz]', '[]', '[get]') +
        row('configmaps', '[]', '[a]', '[get]') +
        row('configmaps', '[]', '[b]', '[get]'),
    )
  })

  it('--no-headers leaves the header out; an empty status is the header alone', () => {
    assert.ok(!rulesTable(status, true).includes('Resources'))
    assert.equal(rulesTable({resourceRules: [], nonResourceRules: []}), 'Resources   Non-Resource URLs   Resource Names   Verbs\n')
  })
})
