// CertificateSigningRequest end to end (seed 002): field rules, the /approval and /status
// subresources, the csrsigning and csrapproving controllers, `orch certificate approve|deny`,
// `orch get csr`, and the audit log — against a real `orch server` child process.
import assert from 'node:assert/strict'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {createCSR, parseCertificate, verifyCertificate} from '../../src/machinery/pki.js'
import {call, type Caller} from '../support/http.js'
import {runOrch, startOrchServer, tempDir, type OrchServer} from '../support/server.js'
import {until} from '../support/until.js'

const CSRS = '/apis/certificates.orch.io/v1/certificatesigningrequests'
const BOOTSTRAP = 'abcdef.0123456789abcdef'
const JANE = 'jane-token-0123456789'
const STATUS_WRITER = 'status-writer-token-0123'
const CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth']

const b64 = (text: string) => Buffer.from(text).toString('base64')

async function csrObject(name: string, options: {cn: string; o?: string[]; signer: string; usages?: string[]; expirationSeconds?: number; dns?: string[]}) {
  const {csrPem, keyPem} = await createCSR({commonName: options.cn, organizations: options.o, dnsNames: options.dns})
  const object: Record<string, any> = {
    apiVersion: 'certificates.orch.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: {name},
    spec: {request: b64(csrPem), signerName: options.signer, usages: options.usages ?? CLIENT_USAGES},
  }
  if (options.expirationSeconds !== undefined) object.spec.expirationSeconds = options.expirationSeconds
  return {object, keyPem}
}

function approval(csr: Record<string, any>, type = 'Approved'): Record<string, any> {
  return {...csr, status: {...(csr.status ?? {}), conditions: [...(csr.status?.conditions ?? []), {type, status: 'True', reason: 'Test', message: 'by the test'}]}}
}

describe('CertificateSigningRequest', () => {
  let server: OrchServer
  let auditPath: string
  const get = async (name: string) => (await call(server.url, 'GET', `${CSRS}/${name}`)).json

  before(async () => {
    const files = tempDir('orch-csr-')
    const tokens = join(files, 'tokens.csv')
    writeFileSync(tokens, `${JANE},jane,uid-jane,"devs"\n${STATUS_WRITER},status-writer,uid-sw\n`)
    auditPath = join(files, 'audit.log')
    server = await startOrchServer([
      '--controllers=csrsigning,csrapproving',
      '--token-auth-file', tokens,
      '--bootstrap-token', BOOTSTRAP,
      '--cluster-signing-duration', '2h',
      '--audit-log-path', auditPath,
    ])
    // status-writer may write CSR status (a signer's permission) but not approve
    const rbac = '/apis/rbac.orch.io/v1'
    assert.equal((await call(server.url, 'POST', `${rbac}/clusterroles`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRole', metadata: {name: 'csr-signer'},
      rules: [{apiGroups: ['certificates.orch.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/status'], verbs: ['get', 'update', 'patch']}],
    })).status, 201)
    assert.equal((await call(server.url, 'POST', `${rbac}/clusterrolebindings`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRoleBinding', metadata: {name: 'status-writer-signs'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'csr-signer'},
      subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'status-writer'}],
    })).status, 201)
    // jane may create and read CSRs, but has no nodeclient permission
    assert.equal((await call(server.url, 'POST', `${rbac}/clusterrolebindings`, {
      apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRoleBinding', metadata: {name: 'jane-requests'},
      roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'system:node-bootstrapper'},
      subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'jane'}],
    })).status, 201)
    await until('the bindings in the authorizer', async () => {
      const result = await call(server.url, 'GET', CSRS, undefined, {}, {as: {token: JANE}})
      return result.status === 200 ? true : undefined
    })
  })
  after(async () => server.cleanup())

  it('only request, signerName, expirationSeconds and usages are settable on create; username, uid, groups and extra are set by the server from the caller', async () => {
    const {object} = await csrObject('identity', {cn: 'someone', signer: 'example.com/custom'})
    object.spec.username = 'forged'
    object.spec.groups = ['system:masters']
    object.spec.uid = 'forged-uid'
    object.status = {certificate: b64('nope')}
    const created = await call(server.url, 'POST', CSRS, object, {}, {as: {token: JANE}})
    assert.equal(created.status, 201, created.text)
    assert.equal(created.json.spec.username, 'jane')
    assert.equal(created.json.spec.uid, 'uid-jane')
    assert.deepEqual(created.json.spec.groups, ['devs', 'system:authenticated'])
    assert.deepEqual(created.json.status, {}, 'a new request has an empty status, encoded as Kubernetes does ("status":{})')
    assert.match(created.text, /"status":\{\}/)
  })

  it('spec.request must be a valid PEM CERTIFICATE REQUEST: malformed PEM and a public key that does not match the signature are 422 and nothing is stored', async () => {
    const {object} = await csrObject('bad-pem', {cn: 'x', signer: 'example.com/custom'})
    object.spec.request = b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')
    const bad = await call(server.url, 'POST', CSRS, object)
    assert.equal(bad.status, 422, bad.text)
    assert.equal(bad.json.details.causes[0].field, 'spec.request')
    assert.match(bad.json.message, /PEM block type must be CERTIFICATE REQUEST/)

    const {object: forged} = await csrObject('bad-signature', {cn: 'x', signer: 'example.com/custom'})
    const pem = Buffer.from(forged.spec.request, 'base64').toString()
    const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64')
    der[der.length - 8] ^= 0x55 // inside the signature's s: still DER, no longer the key's signature
    forged.spec.request = b64(`-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`)
    const mismatch = await call(server.url, 'POST', CSRS, forged)
    assert.equal(mismatch.status, 422, mismatch.text)
    assert.match(mismatch.json.message, /spec\.request.*does not match its signature/)
    for (const name of ['bad-pem', 'bad-signature']) assert.equal((await call(server.url, 'GET', `${CSRS}/${name}`)).status, 404)
  })

  it('usages come from the seed list, expirationSeconds is at least 600 and signerName is domain/path (422 with field paths)', async () => {
    const {object} = await csrObject('bad-fields', {cn: 'x', signer: 'notqualified', usages: ['client auth', 'flying'], expirationSeconds: 599})
    const result = await call(server.url, 'POST', CSRS, object)
    assert.equal(result.status, 422, result.text)
    const fields = result.json.details.causes.map((c: {field: string}) => c.field).sort()
    assert.deepEqual(fields, ['spec.expirationSeconds', 'spec.signerName', 'spec.usages[1]'])
    assert.match(result.json.message, /may not specify a duration less than 600 seconds/)
  })

  it('spec is immutable after creation: an update keeps the stored spec', async () => {
    const {object} = await csrObject('immutable', {cn: 'x', signer: 'example.com/custom'})
    const created = (await call(server.url, 'POST', CSRS, object)).json
    const changed = {...created, metadata: {...created.metadata, labels: {a: 'b'}}, spec: {...created.spec, signerName: 'example.com/other', usages: ['client auth']}}
    const updated = await call(server.url, 'PUT', `${CSRS}/immutable`, changed)
    assert.equal(updated.status, 200, updated.text)
    assert.equal(updated.json.spec.signerName, 'example.com/custom')
    assert.deepEqual(updated.json.spec.usages, CLIENT_USAGES)
    assert.deepEqual(updated.json.metadata.labels, {a: 'b'}, 'metadata still changes')
  })

  it('/approval adds Approved or Denied: mutually exclusive, one per type, status always True, never removed, lastTransitionTime defaulted', async () => {
    const {object} = await csrObject('approvals', {cn: 'x', signer: 'example.com/custom'})
    const created = (await call(server.url, 'POST', CSRS, object)).json
    const withoutStatus = {...created, status: {conditions: [{type: 'Approved', reason: 'Test'}]}}
    const approved = await call(server.url, 'PUT', `${CSRS}/approvals/approval`, withoutStatus)
    assert.equal(approved.status, 200, approved.text)
    const condition = approved.json.status.conditions[0]
    assert.equal(condition.status, 'True', 'a condition without status defaults to True')
    assert.match(condition.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    assert.match(condition.lastUpdateTime, /^\d{4}-\d\d-\d\dT/)

    const both = await call(server.url, 'PUT', `${CSRS}/approvals/approval`, approval(approved.json, 'Denied'))
    assert.equal(both.status, 422, both.text)
    assert.match(both.json.message, /status\.conditions\[1\]\.type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive/)
    // /approval takes the whole conditions list: a condition of another type sent with it is kept
    const withOther = await call(server.url, 'PUT', `${CSRS}/approvals/approval`, {...approved.json, status: {conditions: [...approved.json.status.conditions, {type: 'Reviewed', status: 'True', reason: 'Test'}]}})
    assert.equal(withOther.status, 200, withOther.text)
    assert.deepEqual(withOther.json.status.conditions.map((c: {type: string}) => c.type), ['Approved', 'Reviewed'])
    const twice = await call(server.url, 'PUT', `${CSRS}/approvals/approval`, approval(withOther.json, 'Approved'))
    assert.equal(twice.status, 422)
    assert.match(twice.json.message, /Duplicate value: "Approved"/)
    const removed = await call(server.url, 'PUT', `${CSRS}/approvals/approval`, {...withOther.json, status: {conditions: []}})
    assert.equal(removed.status, 422)
    assert.match(removed.json.message, /updates may not remove a condition of type "Approved"/)
    const falseStatus = (await csrObject('false-status', {cn: 'x', signer: 'example.com/custom'})).object
    const fresh = (await call(server.url, 'POST', CSRS, falseStatus)).json
    const notTrue = await call(server.url, 'PUT', `${CSRS}/false-status/approval`, {...fresh, status: {conditions: [{type: 'Approved', status: 'False'}]}})
    assert.equal(notTrue.status, 422)
    assert.match(notTrue.json.message, /Unsupported value: "False": supported values: "True"/)
  })

  it('/status may not add or remove Approved/Denied conditions (422 Forbidden; a changed one is put back, as Kubernetes), sets status.certificate only after Approved, validates it as PEM CERTIFICATE blocks, and never changes it once set', async () => {
    const {object} = await csrObject('status-rules', {cn: 'x', signer: 'example.com/custom'})
    const created = (await call(server.url, 'POST', CSRS, object)).json
    const sneaky = await call(server.url, 'PUT', `${CSRS}/status-rules/status`, approval(created))
    assert.equal(sneaky.status, 422, sneaky.text)
    assert.equal(sneaky.json.message, `CertificateSigningRequest.certificates.orch.io "status-rules" is invalid: status.conditions: Forbidden: updates may not add a condition of type "Approved"`)
    const sneakyMain = await call(server.url, 'PUT', `${CSRS}/status-rules`, approval(created))
    assert.equal(sneakyMain.status, 200, sneakyMain.text)
    assert.equal(sneakyMain.json.status.conditions, undefined, 'a plain update keeps the stored status')

    const caPem = readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8')
    const early = await call(server.url, 'PUT', `${CSRS}/status-rules/status`, {...sneakyMain.json, status: {certificate: b64(caPem)}})
    assert.equal(early.status, 422, early.text)
    assert.match(early.json.message, /status\.certificate: Forbidden: may only be set once the request is Approved/)

    const approved = (await call(server.url, 'PUT', `${CSRS}/status-rules/approval`, approval(sneakyMain.json))).json
    const removedByStatus = await call(server.url, 'PUT', `${CSRS}/status-rules/status`, {...approved, status: {conditions: []}})
    assert.equal(removedByStatus.status, 422, removedByStatus.text)
    assert.match(removedByStatus.json.message, /status\.conditions: Forbidden: updates may not remove a condition of type "Approved"/)
    const changedByStatus = await call(server.url, 'PUT', `${CSRS}/status-rules/status`, {...approved, status: {conditions: [{...approved.status.conditions[0], reason: 'Changed'}]}})
    assert.equal(changedByStatus.status, 200, changedByStatus.text)
    assert.equal(changedByStatus.json.status.conditions[0].reason, 'Test', 'a changed Approved condition is put back as stored')
    // (the write went through: the manager's managedFields record the change it asked for, as
    // Kubernetes' field manager runs before the strategy puts the condition back)
    const current = changedByStatus.json
    const notPem = await call(server.url, 'PUT', `${CSRS}/status-rules/status`, {...current, status: {...current.status, certificate: b64('not a certificate')}})
    assert.equal(notPem.status, 422, notPem.text)
    assert.match(notPem.json.message, /status\.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block/)
    assert.equal((await get('status-rules')).status.certificate, undefined, 'nothing stored')

    const withText = `issued by hand\n${caPem}trailing text\n`
    const issued = await call(server.url, 'PUT', `${CSRS}/status-rules/status`, {...current, status: {...current.status, certificate: b64(withText)}})
    assert.equal(issued.status, 200, issued.text)
    const again = await call(server.url, 'PUT', `${CSRS}/status-rules/status`, {...issued.json, status: {...issued.json.status, certificate: b64(caPem)}})
    assert.equal(again.status, 422)
    assert.match(again.json.message, /updates may not modify existing certificate content/)
  })

  it('subresources are authorized separately: a user allowed only /status gets 403 on /approval, the admin approves', async () => {
    const {object} = await csrObject('authz', {cn: 'x', signer: 'example.com/custom'})
    const created = (await call(server.url, 'POST', CSRS, object)).json
    const as: Caller = {token: STATUS_WRITER}
    const denied = await call(server.url, 'PUT', `${CSRS}/authz/approval`, approval(created), {}, {as})
    assert.equal(denied.status, 403, denied.text)
    assert.equal(
      denied.json.message,
      'certificatesigningrequests.certificates.orch.io "authz" is forbidden: User "status-writer" cannot update resource "certificatesigningrequests/approval" in API group "certificates.orch.io" at the cluster scope',
    )
    assert.equal((await call(server.url, 'PUT', `${CSRS}/authz/approval`, approval(created))).status, 200)
  })

  it('csrsigning issues an approved orch.io/apiserver-client request: it verifies against the cluster CA, carries the requested usages and the honoured duration, and authenticates as a client', async () => {
    const {object, keyPem} = await csrObject('client', {cn: 'carol', o: ['ops'], signer: 'orch.io/apiserver-client', expirationSeconds: 3600})
    const created = (await call(server.url, 'POST', CSRS, object)).json
    await call(server.url, 'PUT', `${CSRS}/client/approval`, approval(created))
    const issued = await until('the certificate', async () => (await get('client')).status?.certificate)
    const certPem = Buffer.from(issued, 'base64').toString()
    const caPem = readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8')
    assert.ok(verifyCertificate(certPem, caPem))
    const cert = parseCertificate(certPem)
    assert.deepEqual(new Set(cert.usages), new Set(CLIENT_USAGES))
    const remaining = (cert.notAfter.getTime() - Date.now()) / 1000
    assert.ok(remaining > 3500 && remaining <= 3600, `valid ~1h from now, got ${remaining}s`)
    const who = await call(server.url, 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', {apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview'}, {}, {as: {cert: certPem, key: keyPem}})
    assert.equal(who.status, 201, who.text)
    assert.deepEqual(who.json.status.userInfo, {username: 'carol', groups: ['ops', 'system:authenticated']})
  })

  it('csrsigning honours expirationSeconds only up to --cluster-signing-duration', async () => {
    const {object} = await csrObject('capped', {cn: 'dave', signer: 'orch.io/apiserver-client', expirationSeconds: 86400})
    const created = (await call(server.url, 'POST', CSRS, object)).json
    await call(server.url, 'PUT', `${CSRS}/capped/approval`, approval(created))
    const issued = await until('the certificate', async () => (await get('capped')).status?.certificate)
    const cert = parseCertificate(Buffer.from(issued, 'base64').toString())
    const remaining = (cert.notAfter.getTime() - Date.now()) / 1000
    assert.ok(remaining > 7100 && remaining <= 7200, `capped at 2h, got ${remaining}s`)
  })

  it('csrsigning adds Failed when the signer does not permit the subject or usages; custom signers are left pending for an outside signer', async () => {
    const custom = await csrObject('custom-signer', {cn: 'x', signer: 'example.com/outside'})
    await call(server.url, 'PUT', `${CSRS}/custom-signer/approval`, approval((await call(server.url, 'POST', CSRS, custom.object)).json))
    const wrongSubject = await csrObject('wrong-subject', {cn: 'system:node:n1', o: ['devs'], signer: 'orch.io/apiserver-client-agent'})
    await call(server.url, 'PUT', `${CSRS}/wrong-subject/approval`, approval((await call(server.url, 'POST', CSRS, wrongSubject.object)).json))
    const failed = await until('Failed', async () => (await get('wrong-subject')).status?.conditions?.find((c: {type: string}) => c.type === 'Failed'))
    assert.equal(failed.reason, 'SignerValidationFailure')
    assert.equal(failed.message, 'subject organization is not system:nodes')
    assert.equal((await get('wrong-subject')).status.certificate, undefined)
    const serving = await csrObject('serving-usages', {cn: 'system:node:n1', o: ['system:nodes'], dns: ['n1'], signer: 'orch.io/agent-serving', usages: ['digital signature', 'client auth']})
    await call(server.url, 'PUT', `${CSRS}/serving-usages/approval`, approval((await call(server.url, 'POST', CSRS, serving.object)).json))
    const servingFailed = await until('Failed', async () => (await get('serving-usages')).status?.conditions?.find((c: {type: string}) => c.type === 'Failed'))
    assert.equal(servingFailed.message, 'usages did not match [digital signature key encipherment server auth]')
    // agent certificates take exactly {digital signature, key encipherment, client|server auth} or that set without key encipherment
    const clientUsages = await csrObject('agent-client-usages', {cn: 'system:node:n1', o: ['system:nodes'], signer: 'orch.io/apiserver-client-agent', usages: ['client auth']})
    await call(server.url, 'PUT', `${CSRS}/agent-client-usages/approval`, approval((await call(server.url, 'POST', CSRS, clientUsages.object)).json))
    const clientFailed = await until('Failed', async () => (await get('agent-client-usages')).status?.conditions?.find((c: {type: string}) => c.type === 'Failed'))
    assert.equal(clientFailed.message, 'usages did not match [client auth digital signature key encipherment]')
    // the custom request was approved before these were handled: still no certificate, no Failed
    const pending = await get('custom-signer')
    assert.equal(pending.status.certificate, undefined)
    assert.deepEqual(pending.status.conditions.map((c: {type: string}) => c.type), ['Approved'])
  })

  it('csrapproving auto-approves agent client requests from bootstrappers only; others stay pending', async () => {
    const fromJane = await csrObject('agent-by-jane', {cn: 'system:node:n2', o: ['system:nodes'], signer: 'orch.io/apiserver-client-agent'})
    assert.equal((await call(server.url, 'POST', CSRS, fromJane.object, {}, {as: {token: JANE}})).status, 201)
    const clientByBootstrap = await csrObject('client-by-bootstrap', {cn: 'system:node:n1', o: ['system:nodes'], signer: 'orch.io/apiserver-client'})
    assert.equal((await call(server.url, 'POST', CSRS, clientByBootstrap.object, {}, {as: {token: BOOTSTRAP}})).status, 201)
    const wrongUsages = await csrObject('agent-wrong-usages', {cn: 'system:node:n1', o: ['system:nodes'], signer: 'orch.io/apiserver-client-agent', usages: ['key encipherment', 'client auth']})
    assert.equal((await call(server.url, 'POST', CSRS, wrongUsages.object, {}, {as: {token: BOOTSTRAP}})).status, 201)
    const agent = await csrObject('agent-by-bootstrap', {cn: 'system:node:n1', o: ['system:nodes'], signer: 'orch.io/apiserver-client-agent'})
    assert.equal((await call(server.url, 'POST', CSRS, agent.object, {}, {as: {token: BOOTSTRAP}})).status, 201)
    const issued = await until('auto-approval and signing', async () => (await get('agent-by-bootstrap')).status?.certificate)
    const approvedCondition = (await get('agent-by-bootstrap')).status.conditions.find((c: {type: string}) => c.type === 'Approved')
    assert.equal(approvedCondition.reason, 'AutoApproved')
    const cert = parseCertificate(Buffer.from(issued, 'base64').toString())
    assert.equal(cert.commonName, 'system:node:n1')
    assert.deepEqual(cert.organizations, ['system:nodes'])
    for (const name of ['agent-by-jane', 'client-by-bootstrap', 'agent-wrong-usages']) {
      assert.equal((await get(name)).status?.conditions, undefined, `${name} is not auto-approved`)
    }
  })

  it('orch certificate approve and deny go through /approval; orch get csr shows NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION', async () => {
    for (const name of ['cli-a', 'cli-b', 'cli-c']) {
      const {object} = await csrObject(name, {cn: 'x', signer: 'example.com/custom', expirationSeconds: 86400})
      assert.equal((await call(server.url, 'POST', CSRS, object)).status, 201)
    }
    const approved = await runOrch(['certificate', 'approve', 'cli-a', 'cli-b'], {env: server.cliEnv})
    assert.equal(approved.code, 0, approved.stderr)
    assert.equal(approved.stdout, 'certificatesigningrequest.certificates.orch.io/cli-a approved\ncertificatesigningrequest.certificates.orch.io/cli-b approved\n')
    const condition = (await get('cli-a')).status.conditions[0]
    assert.equal(condition.type, 'Approved')
    assert.equal(condition.reason, 'OrchApprove')
    const denyApproved = await runOrch(['certificate', 'deny', 'cli-a'], {env: server.cliEnv})
    assert.equal(denyApproved.code, 1)
    assert.equal(denyApproved.stderr, 'error: certificate signing request "cli-a" is already Approved\n')
    const denied = await runOrch(['certificate', 'deny', 'cli-c'], {env: server.cliEnv})
    assert.equal(denied.code, 0, denied.stderr)
    const approveDenied = await runOrch(['certificate', 'approve', 'cli-c'], {env: server.cliEnv})
    assert.equal(approveDenied.code, 1)
    assert.equal(approveDenied.stderr, 'error: certificate signing request "cli-c" is already Denied\n', 'the condition type, as kubectl prints it')
    const missing = await runOrch(['certificate', 'approve', 'no-such-csr'], {env: server.cliEnv})
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /^error: certificatesigningrequests.certificates.orch.io "no-such-csr" not found\n$/)

    const table = await runOrch(['get', 'csr', 'cli-a', 'cli-c'], {env: server.cliEnv})
    assert.equal(table.code, 0, table.stderr)
    const [header, first, second] = table.stdout.trimEnd().split('\n')
    assert.match(header, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION$/)
    assert.match(first, /^cli-a\s+\S+\s+example\.com\/custom\s+orch-admin\s+24h\s+Approved$/)
    assert.match(second, /^cli-c\s+\S+\s+example\.com\/custom\s+orch-admin\s+24h\s+Denied$/)
  })

  it('the audit log records each request as a JSON line with user, verb, resource, name, code and the authorization annotations, denials, 401s and 422s included', async () => {
    const before = readFileSync(auditPath, 'utf8').split('\n').length
    await call(server.url, 'GET', `${CSRS}/audited`, undefined, {}, {as: {token: JANE}})
    await call(server.url, 'DELETE', `${CSRS}/audited`, undefined, {}, {as: {token: JANE}})
    await call(server.url, 'PUT', `${CSRS}/audited`, {}, {}, {as: {token: 'forged-token'}})
    const bad = (await csrObject('audited', {cn: 'x', signer: 'example.com/custom'})).object
    bad.spec.request = b64('garbage')
    assert.equal((await call(server.url, 'POST', CSRS, bad)).status, 422)
    const events = await until('the audit lines', async () => {
      // only whole lines: the server may be writing the last one
      const text = readFileSync(auditPath, 'utf8')
      const lines = text.slice(0, text.lastIndexOf('\n') + 1).split('\n').slice(before - 1).filter(Boolean).map((l) => JSON.parse(l))
      const mine = lines.filter((e) => e.objectRef?.name === 'audited' || (e.objectRef?.resource === 'certificatesigningrequests' && e.verb === 'create'))
      return mine.length >= 4 ? mine : undefined
    })
    const [read, deleted, unauthenticated, invalid] = events
    assert.equal(unauthenticated.responseStatus.code, 401, 'a forged token is recorded')
    assert.deepEqual(unauthenticated.user, {})
    assert.equal(invalid.verb, 'create')
    assert.equal(invalid.objectRef.name, 'audited', 'a create names the object its body names')
    assert.equal(invalid.responseStatus.code, 422, 'a rejected CSR is recorded')
    assert.match(invalid.responseStatus.message, /spec\.request/)
    assert.equal(read.kind, 'Event')
    assert.equal(read.apiVersion, 'audit.orch.io/v1')
    assert.equal(read.user.username, 'jane')
    assert.equal(read.verb, 'get')
    assert.deepEqual(read.objectRef, {resource: 'certificatesigningrequests', name: 'audited', apiGroup: 'certificates.orch.io', apiVersion: 'v1'})
    assert.equal(read.responseStatus.code, 404)
    assert.equal(read.annotations['authorization.orch.io/decision'], 'allow')
    // "authorization.k8s.io/reason": the authorizer's reason, on allow too (WithAuthorization)
    assert.equal(
      read.annotations['authorization.orch.io/reason'],
      'RBAC: allowed by ClusterRoleBinding "jane-requests" of ClusterRole "system:node-bootstrapper" to User "jane"',
    )
    assert.equal(deleted.verb, 'delete')
    assert.equal(deleted.responseStatus.code, 403)
    assert.equal(deleted.annotations['authorization.orch.io/decision'], 'forbid')
    assert.equal(deleted.annotations['authorization.orch.io/reason'], '', 'the reason alone (RBAC gives none), not the 403 message')
    assert.match(deleted.responseStatus.message, /User "jane" cannot delete resource "certificatesigningrequests"/)
  })
})
