// The certificate admission plugins (CertificateApproval, CertificateSigning,
// CertificateSubjectRestriction) against a real `orch server` with token users: RBAC lets them write
// /approval and /status, admission asks for `approve` / `sign` on the signer.
import assert from 'node:assert/strict'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {createCSR, parseCertificate} from '../../src/machinery/pki.js'
import {call, type Caller} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

const CSRS = '/apis/certificates.orch.io/v1/certificatesigningrequests'
const RBAC = '/apis/rbac.orch.io/v1'
const CARL: Caller = {token: 'carl-token-0123456789'}
const ANNE: Caller = {token: 'anne-token-0123456789'}
const SID: Caller = {token: 'sid-token-01234567890'}
const CLIENT_SIGNER = 'orch.io/apiserver-client'

const b64 = (text: string) => Buffer.from(text).toString('base64')

async function csrObject(name: string, signerName: string, cn: string, o: string[]) {
  const {csrPem} = await createCSR({commonName: cn, organizations: o})
  return {
    apiVersion: 'certificates.orch.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: {name},
    spec: {request: b64(csrPem), signerName, usages: ['digital signature', 'key encipherment', 'client auth']},
  }
}

function approval(csr: Record<string, any>): Record<string, any> {
  return {...csr, status: {...(csr.status ?? {}), conditions: [...(csr.status?.conditions ?? []), {type: 'Approved', status: 'True', reason: 'Test', message: 'by the test'}]}}
}

describe('certificate admission', () => {
  let server: OrchServer

  async function grant(name: string, rules: Record<string, unknown>[], subject: string): Promise<void> {
    const role = await call(server.url, 'POST', `${RBAC}/clusterroles`, {apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRole', metadata: {name}, rules})
    assert.equal(role.status, 201, role.text)
    await bindRole(name, name, subject)
  }

  async function bindRole(binding: string, role: string, subject: string): Promise<void> {
    const result = await call(server.url, 'POST', `${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRoleBinding', metadata: {name: binding},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: role},
      subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: subject}],
    })
    assert.equal(result.status, 201, result.text)
  }

  before(async () => {
    const files = tempDir('orch-csr-admission-')
    const tokens = join(files, 'tokens.csv')
    writeFileSync(tokens, `${CARL.token},carl,uid-carl\n${ANNE.token},anne,uid-anne\n${SID.token},sid,uid-sid\n`)
    server = await startOrchServer(['--controllers=csrsigning,csrapproving', '--token-auth-file', tokens])
    // what the probe's carl had: create/get/update on CSRs and /approval, nothing on signers; anne and
    // sid the same, plus /status for sid
    const csrRules = (extra: string[] = []) => [{apiGroups: ['certificates.orch.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval', ...extra], verbs: ['create', 'get', 'update']}]
    await grant('carl', csrRules(), 'carl')
    await grant('anne', csrRules(), 'anne')
    await bindRole('anne-approves-clients', 'system:certificates.orch.io:apiserver-client-approver', 'anne')
    await grant('sid', csrRules(['certificatesigningrequests/status']), 'sid')
    await until('the bindings in the authorizer', async () => ((await call(server.url, 'GET', `${CSRS}/none`, undefined, {}, {as: SID})).status === 404 ? true : undefined))
  })
  after(async () => server.cleanup())

  it('use of orch.io/apiserver-client signer with system:masters group is not allowed: creating such a request is 403, for the admin too, and nothing is stored', async () => {
    for (const [who, as] of [['carl', CARL], ['admin', undefined]] as const) {
      const object = await csrObject(`masters-${who}`, CLIENT_SIGNER, 'eve', ['system:masters'])
      const created = await call(server.url, 'POST', CSRS, object, {}, as ? {as} : {})
      assert.equal(created.status, 403, created.text)
      assert.equal(created.json.reason, 'Forbidden')
      assert.equal(created.json.message, `certificatesigningrequests.certificates.orch.io "masters-${who}" is forbidden: use of orch.io/apiserver-client signer with system:masters group is not allowed`)
      assert.deepEqual(created.json.details, {name: `masters-${who}`, group: 'certificates.orch.io', kind: 'certificatesigningrequests'})
      assert.equal((await call(server.url, 'GET', `${CSRS}/masters-${who}`)).status, 404)
    }
    // the agent signer's system:nodes, and system:masters for another signer, are not this plugin's business
    const custom = await call(server.url, 'POST', CSRS, await csrObject('masters-custom', 'example.com/custom', 'eve', ['system:masters']), {}, {as: CARL})
    assert.equal(custom.status, 201, custom.text)
  })

  it('user not permitted to approve requests with signerName "orch.io/apiserver-client": /approval without approve on signers is 403; with the apiserver-client-approver role it is approved and csrsigning issues', async () => {
    const created = await call(server.url, 'POST', CSRS, await csrObject('eve', CLIENT_SIGNER, 'eve', ['devs']), {}, {as: CARL})
    assert.equal(created.status, 201, created.text)
    const refused = await call(server.url, 'PUT', `${CSRS}/eve/approval`, approval(created.json), {}, {as: CARL})
    assert.equal(refused.status, 403, refused.text)
    assert.equal(refused.json.message, 'certificatesigningrequests.certificates.orch.io "eve" is forbidden: user not permitted to approve requests with signerName "orch.io/apiserver-client"')
    assert.equal((await call(server.url, 'GET', `${CSRS}/eve`)).json.status.conditions, undefined, 'not approved')

    // the CLI prints the server's message as its one error line
    const cli = await runOrch(['certificate', 'approve', 'eve', '--as', 'carl'], {env: server.cliEnv})
    assert.equal(cli.code, 1)
    assert.equal(cli.stderr, 'error: certificatesigningrequests.certificates.orch.io "eve" is forbidden: user not permitted to approve requests with signerName "orch.io/apiserver-client"\n')

    const allowed = await call(server.url, 'PUT', `${CSRS}/eve/approval`, approval(created.json), {}, {as: ANNE})
    assert.equal(allowed.status, 200, allowed.text)
    const issued = await until('the certificate', async () => (await call(server.url, 'GET', `${CSRS}/eve`)).json.status?.certificate)
    assert.deepEqual(parseCertificate(Buffer.from(issued, 'base64').toString()).organizations, ['devs'])

    // anne's role names one signer: another signer's request is still refused to her
    const other = await call(server.url, 'POST', CSRS, await csrObject('other-signer', 'example.com/custom', 'x', []), {}, {as: ANNE})
    const otherRefused = await call(server.url, 'PUT', `${CSRS}/other-signer/approval`, approval(other.json), {}, {as: ANNE})
    assert.equal(otherRefused.status, 403, otherRefused.text)
    assert.match(otherRefused.json.message, /user not permitted to approve requests with signerName "example.com\/custom"$/)
  })

  it('user not permitted to sign requests with signerName "example.com/custom": setting status.certificate without sign on signers is 403; with sign on example.com/* it is stored', async () => {
    const created = (await call(server.url, 'POST', CSRS, await csrObject('to-sign', 'example.com/custom', 'x', []))).json
    const approved = (await call(server.url, 'PUT', `${CSRS}/to-sign/approval`, approval(created))).json
    // any valid CERTIFICATE PEM will do for status.certificate: the cluster CA's
    const certificate = b64(readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8'))
    const refused = await call(server.url, 'PUT', `${CSRS}/to-sign/status`, {...approved, status: {...approved.status, certificate}}, {}, {as: SID})
    assert.equal(refused.status, 403, refused.text)
    assert.equal(refused.json.message, 'certificatesigningrequests.certificates.orch.io "to-sign" is forbidden: user not permitted to sign requests with signerName "example.com/custom"')
    // a /status write that leaves the certificate alone needs no sign permission
    const failed = await call(server.url, 'PUT', `${CSRS}/to-sign/status`, {...approved, status: {conditions: [...approved.status.conditions, {type: 'Failed', status: 'True', reason: 'Test'}]}}, {}, {as: SID})
    assert.equal(failed.status, 200, failed.text)

    await grant('sid-signs', [{apiGroups: ['certificates.orch.io'], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['sign']}], 'sid')
    const signed = await until('sid may sign', async () => {
      const current = (await call(server.url, 'GET', `${CSRS}/to-sign`)).json
      const result = await call(server.url, 'PUT', `${CSRS}/to-sign/status`, {...current, status: {...current.status, certificate}}, {}, {as: SID})
      return result.status === 200 ? result : undefined
    })
    assert.equal(signed.json.status.certificate, certificate)
  })

  it('the agent bootstrap flow still works: a bootstrapper-style agent client request is auto-approved and issued by the in-process controllers', async () => {
    await bindRole('carl-nodeclient', 'system:certificates.orch.io:certificatesigningrequests:nodeclient', 'carl')
    const object = await csrObject('agent-client', 'orch.io/apiserver-client-agent', 'system:node:n1', ['system:nodes'])
    await until('carl may ask for node client certificates', async () => {
      const review = await call(server.url, 'POST', '/apis/authorization.orch.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview',
        spec: {user: 'carl', resourceAttributes: {group: 'certificates.orch.io', resource: 'certificatesigningrequests', subresource: 'nodeclient', verb: 'create'}},
      })
      return review.json.status?.allowed === true ? true : undefined
    })
    assert.equal((await call(server.url, 'POST', CSRS, object, {}, {as: CARL})).status, 201)
    const issued = await until('auto-approval and signing', async () => (await call(server.url, 'GET', `${CSRS}/agent-client`)).json.status?.certificate)
    assert.equal(parseCertificate(Buffer.from(issued, 'base64').toString()).commonName, 'system:node:n1')
  })
})
