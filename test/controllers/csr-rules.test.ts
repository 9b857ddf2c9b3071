// What the well-known signers permit (src/controllers/csr-rules.ts, used by csrapproving and
// csrsigning), as Kubernetes' ValidateKubeletClientCSR / ValidateKubeletServingCSR check it: an agent
// certificate's usages are exactly {digital signature, key encipherment, client|server auth}, or that
// set without key encipherment; anything else is `usages did not match [...]`.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {agentClientProblem, agentServingProblem, signerProblem} from '../../src/controllers/csr-rules.js'
import {createCSR, type ParsedCSR} from '../../src/machinery/pki.js'

function request(overrides: Partial<ParsedCSR> = {}): ParsedCSR {
  return {
    subject: 'CN=system:node:n1,O=system:nodes',
    commonName: 'system:node:n1',
    organizations: ['system:nodes'],
    publicKey: '',
    publicKeyAlgorithm: 'ECDSA',
    signatureValid: true,
    dnsNames: [],
    ipAddresses: [],
    emailAddresses: [],
    uris: [],
    ...overrides,
  }
}

const CLIENT_MISMATCH = 'usages did not match [client auth digital signature key encipherment]'
const SERVING_MISMATCH = 'usages did not match [digital signature key encipherment server auth]'

describe('agent signer usages (Kubernetes kubelet-client and kubelet-serving checks)', () => {
  it('agent client: exactly {digital signature, key encipherment, client auth} or {digital signature, client auth}', () => {
    assert.equal(agentClientProblem(request(), ['digital signature', 'key encipherment', 'client auth']), undefined)
    assert.equal(agentClientProblem(request(), ['client auth', 'digital signature']), undefined)
    for (const usages of [['client auth'], ['key encipherment', 'client auth'], ['digital signature', 'key encipherment'], ['digital signature', 'key encipherment', 'client auth', 'server auth'], []]) {
      assert.equal(agentClientProblem(request(), usages), CLIENT_MISMATCH, usages.join(','))
    }
  })

  it('agent serving: exactly {digital signature, key encipherment, server auth} or {digital signature, server auth}; checked before the common name', () => {
    const serving = request({dnsNames: ['n1']})
    assert.equal(agentServingProblem(serving, ['digital signature', 'key encipherment', 'server auth']), undefined)
    assert.equal(agentServingProblem(serving, ['digital signature', 'server auth']), undefined)
    for (const usages of [['server auth'], ['digital signature', 'client auth'], ['key encipherment', 'server auth']]) {
      assert.equal(agentServingProblem(serving, usages), SERVING_MISMATCH, usages.join(','))
    }
    assert.equal(agentServingProblem(request({dnsNames: ['n1'], commonName: 'n1'}), ['server auth']), SERVING_MISMATCH)
    assert.equal(agentServingProblem(request({dnsNames: ['n1'], commonName: 'n1'}), ['digital signature', 'server auth']), 'subject common name does not begin with system:node:')
  })

  it('the apiserver-client signer keeps its optional usages: client auth required, digital signature and key encipherment allowed', async () => {
    const {csrPem} = await createCSR({commonName: 'jane'})
    const csr = (signerName: string, usages: string[]) => ({spec: {request: Buffer.from(csrPem).toString('base64'), signerName, usages}})
    assert.equal(signerProblem(csr('orch.io/apiserver-client', ['client auth'])), undefined)
    assert.equal(signerProblem(csr('orch.io/apiserver-client', ['key encipherment', 'client auth'])), undefined)
    assert.equal(signerProblem(csr('orch.io/apiserver-client', ['server auth', 'client auth'])), 'invalid usage for client certificate: server auth')
  })
})
