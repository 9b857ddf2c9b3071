// The certificate admission plugins below the HTTP layer, against the server's real authorizer
// (system:masters first, then Node and RBAC) with the default roles and a few bindings.
import assert from 'node:assert/strict'
import {before, describe, it} from 'node:test'
import {CertificateApproval, CertificateSigning, CertificateSubjectRestriction, isAuthorizedForSignerName} from '../../src/admission/certificates.js'
import type {PolicyAuthorizer} from '../../src/admission/policy/engine.js'
import type {AdmissionAttributes, Operation} from '../../src/admission/types.js'
import {certificateSigningRequest} from '../../src/api/certificates/certificatesigningrequest.js'
import type {AnyObject, UserInfo} from '../../src/api/types.js'
import {buildAuthorizer} from '../../src/apiserver/authorize.js'
import {defaultRBACObjects, PodNodeGraph, staticSource} from '../../src/apiserver/authz/index.js'
import {createCSR} from '../../src/machinery/pki.js'
import {ApiError} from '../../src/machinery/status.js'

const rbac = 'rbac.orch.io/v1'
const user = (username: string, ...groups: string[]): UserInfo => ({username, groups: [...groups, 'system:authenticated']})
const admin = user('orch-admin', 'system:masters')
const carl = user('carl')
const approver = user('approver')
const domainApprover = user('domain-approver')
const signer = user('signer')

function bind(name: string, rules: AnyObject[]): AnyObject[] {
  return [
    {apiVersion: rbac, kind: 'ClusterRole', metadata: {name}, rules},
    {apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: {name}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name}, subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name}]},
  ]
}

const csrRules = [{verbs: ['create', 'get', 'update'], apiGroups: ['certificates.orch.io'], resources: ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status']}]
const fixtures: AnyObject[] = [
  ...defaultRBACObjects(),
  ...bind('carl', csrRules),
  {apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: {name: 'approver-client'}, roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'system:certificates.orch.io:apiserver-client-approver'}, subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'approver'}]},
  ...bind('domain-approver', [{verbs: ['approve'], apiGroups: ['certificates.orch.io'], resources: ['signers'], resourceNames: ['example.com/*']}]),
  ...bind('signer', [{verbs: ['sign'], apiGroups: ['certificates.orch.io'], resources: ['signers'], resourceNames: ['example.com/custom']}]),
]

const server = buildAuthorizer(['Node', 'RBAC'], staticSource(fixtures), new PodNodeGraph())
const authorizer: PolicyAuthorizer = (check) =>
  server.evaluate({user: check.user, verb: check.verb, isResourceRequest: true, apiGroup: check.group ?? '', apiVersion: '*', resource: check.resource ?? '', subresource: '', namespace: '', name: check.name ?? ''})

async function csr(name: string, signerName: string, subject: {cn: string; o?: string[]}): Promise<AnyObject> {
  const {csrPem} = await createCSR({commonName: subject.cn, organizations: subject.o})
  return {
    apiVersion: 'certificates.orch.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: {name},
    spec: {request: Buffer.from(csrPem).toString('base64'), signerName, usages: ['digital signature', 'client auth']},
    status: {},
  }
}

function attributes(operation: Operation, subresource: string, object: AnyObject, oldObject: AnyObject | null, userInfo: UserInfo): AdmissionAttributes {
  return {
    operation,
    kind: {group: 'certificates.orch.io', version: 'v1', kind: 'CertificateSigningRequest'},
    resource: {group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests'},
    subresource,
    name: object.metadata!.name,
    namespace: '',
    object,
    oldObject,
    userInfo,
    dryRun: false,
    options: null,
    declaration: certificateSigningRequest,
    namespaceObject: async () => null,
    warn: () => {},
    annotate: () => {},
  }
}

function approved(object: AnyObject): AnyObject {
  return {...object, status: {conditions: [{type: 'Approved', status: 'True', reason: 'Test'}]}}
}

async function forbidden(promise: Promise<void>, message: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError)
    assert.equal(error.code, 403)
    assert.equal(error.reason, 'Forbidden')
    assert.equal(error.message, message)
    return true
  })
}

describe('CertificateApproval', () => {
  const plugin = new CertificateApproval(authorizer)
  let client: AnyObject
  let custom: AnyObject
  before(async () => {
    client = await csr('eve', 'orch.io/apiserver-client', {cn: 'eve'})
    custom = await csr('custom', 'example.com/custom', {cn: 'x'})
  })

  it('user not permitted to approve requests with signerName %q: /approval without approve on signers is 403, though RBAC allows the update', async () => {
    await forbidden(
      plugin.validate(attributes('UPDATE', 'approval', approved(client), client, carl)),
      'certificatesigningrequests.certificates.orch.io "eve" is forbidden: user not permitted to approve requests with signerName "orch.io/apiserver-client"',
    )
  })

  it('approve on signers by name (the default apiserver-client-approver role), by <domain>/*, or system:masters is allowed', async () => {
    await plugin.validate(attributes('UPDATE', 'approval', approved(client), client, approver))
    await forbidden(plugin.validate(attributes('UPDATE', 'approval', approved(custom), custom, approver)), 'certificatesigningrequests.certificates.orch.io "custom" is forbidden: user not permitted to approve requests with signerName "example.com/custom"')
    await plugin.validate(attributes('UPDATE', 'approval', approved(custom), custom, domainApprover))
    await plugin.validate(attributes('UPDATE', 'approval', approved(client), client, admin))
  })

  it('checks the stored signerName, not the body\'s, and leaves other writes alone', async () => {
    const renamed = {...approved(client), spec: {...client.spec, signerName: 'example.com/custom'}}
    await forbidden(plugin.validate(attributes('UPDATE', 'approval', renamed, client, domainApprover)), 'certificatesigningrequests.certificates.orch.io "eve" is forbidden: user not permitted to approve requests with signerName "orch.io/apiserver-client"')
    await plugin.validate(attributes('UPDATE', '', approved(client), client, carl))
    await plugin.validate(attributes('UPDATE', 'status', approved(client), client, carl))
    await plugin.validate(attributes('CREATE', '', client, null, carl))
  })
})

describe('CertificateSigning', () => {
  const plugin = new CertificateSigning(authorizer)
  let custom: AnyObject
  before(async () => {
    custom = approved(await csr('custom', 'example.com/custom', {cn: 'x'}))
  })
  const issued = (object: AnyObject, certificate = 'Y2VydA==') => ({...object, status: {...object.status, certificate}})

  it('user not permitted to sign requests with signerName %q: a /status update that sets status.certificate without sign on signers is 403', async () => {
    await forbidden(
      plugin.validate(attributes('UPDATE', 'status', issued(custom), custom, carl)),
      'certificatesigningrequests.certificates.orch.io "custom" is forbidden: user not permitted to sign requests with signerName "example.com/custom"',
    )
  })

  it('sign on the signer (or system:masters) may set the certificate; a /status update leaving it as it is needs no sign permission', async () => {
    await plugin.validate(attributes('UPDATE', 'status', issued(custom), custom, signer))
    await plugin.validate(attributes('UPDATE', 'status', issued(custom), custom, admin))
    const failed = {...custom, status: {conditions: [...custom.status.conditions, {type: 'Failed', status: 'True'}]}}
    await plugin.validate(attributes('UPDATE', 'status', failed, custom, carl))
    await plugin.validate(attributes('UPDATE', 'status', issued(custom), issued(custom), carl))
    await forbidden(plugin.validate(attributes('UPDATE', 'status', issued(custom, 'b3RoZXI='), issued(custom), carl)), 'certificatesigningrequests.certificates.orch.io "custom" is forbidden: user not permitted to sign requests with signerName "example.com/custom"')
    await plugin.validate(attributes('UPDATE', 'approval', issued(custom), custom, carl))
  })
})

describe('CertificateSubjectRestriction', () => {
  const plugin = new CertificateSubjectRestriction()

  it('use of orch.io/apiserver-client signer with system:masters group is not allowed: 403 on create, for the admin too', async () => {
    const masters = await csr('eve', 'orch.io/apiserver-client', {cn: 'eve', o: ['devs', 'system:masters']})
    for (const who of [carl, admin]) {
      await forbidden(
        plugin.validate(attributes('CREATE', '', masters, null, who)),
        'certificatesigningrequests.certificates.orch.io "eve" is forbidden: use of orch.io/apiserver-client signer with system:masters group is not allowed',
      )
    }
  })

  it('other organizations, other signers, and writes other than create are let through', async () => {
    await plugin.validate(attributes('CREATE', '', await csr('ok', 'orch.io/apiserver-client', {cn: 'jane', o: ['devs']}), null, carl))
    const mastersElsewhere = await csr('m', 'example.com/custom', {cn: 'x', o: ['system:masters']})
    await plugin.validate(attributes('CREATE', '', mastersElsewhere, null, carl))
    const masters = await csr('eve', 'orch.io/apiserver-client', {cn: 'eve', o: ['system:masters']})
    await plugin.validate(attributes('UPDATE', '', masters, masters, carl))
  })

  it('failed to parse CSR: an unparsable request is 403', async () => {
    const garbage = {...(await csr('bad', 'orch.io/apiserver-client', {cn: 'x'}))}
    garbage.spec = {...garbage.spec, request: Buffer.from('garbage').toString('base64')}
    await assert.rejects(plugin.validate(attributes('CREATE', '', garbage, null, carl)), (error: unknown) => error instanceof ApiError && error.code === 403 && /is forbidden: failed to parse CSR: /.test(error.message))
  })
})

describe('isAuthorizedForSignerName', () => {
  it('asks for the signer by name, then for <domain>/*', () => {
    const asked: string[] = []
    const recording: PolicyAuthorizer = (check) => {
      asked.push(`${check.verb} ${check.group}/${check.resource} ${check.name}`)
      return {decision: 'no-opinion', reason: ''}
    }
    assert.equal(isAuthorizedForSignerName(recording, carl, 'approve', 'example.com/a/b'), false)
    assert.deepEqual(asked, ['approve certificates.orch.io/signers example.com/a/b', 'approve certificates.orch.io/signers example.com/*'])
  })

  it('an allow that comes with an evaluation error is not an allow', () => {
    const erring: PolicyAuthorizer = () => ({decision: 'allow', reason: '', error: 'boom'})
    assert.equal(isAuthorizedForSignerName(erring, carl, 'sign', 'example.com/a'), false)
  })
})
