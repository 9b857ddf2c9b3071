// Bad input, fuzzed: for every kind that can be created (and its subresources), mutations of a valid
// object — values of the wrong type at any depth, odd values of the right type, missing fields, unknown
// keys — sent as POST, PUT, every PATCH type and DELETE with odd DeleteOptions, plus bad query
// parameters and odd Content-Type/Accept headers. The rule ("API server core", Bad input): a Status 4xx
// saying what is wrong, never a 500, never a hang, and the server still healthy at the end.
// Deterministic: one seeded PRNG, a fixed number of cases.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {Agent, fetch as undiciFetch} from 'undici'
import {allDeclarations, type AnyObject, type KindDeclaration, type Schema} from '../../src/api/index.js'
import {podBinding, podEviction} from '../../src/api/core/pod.js'
import {createCSR} from '../../src/machinery/pki.js'
import {tlsOptions} from '../support/http.js'
import {startOrchServer, type OrchServer} from '../support/server.js'
import {prng} from '../support/prng.js'

const SEED = Number(process.env.ORCH_FUZZ_SEED ?? 0x5eed_2025)
const ITERATIONS_PER_KIND = Number(process.env.ORCH_FUZZ_ITERATIONS ?? 24)
const NS = 'fuzz'


const rand = prng(SEED)
const chance = (p: number) => rand() < p
const int = (n: number) => Math.floor(rand() * n)
const pick = <T>(items: readonly T[]): T => items[int(items.length)]

function nested(depth: number, array: boolean): unknown {
  let value: unknown = 'deep'
  for (let i = 0; i < depth; i++) value = array ? [value] : {a: value}
  return value
}

const ODD_STRINGS = [
  '', ' ', '-1', '0', 'NaN', 'Infinity', '1e400', 'null', 'true', '💥ünï©ødé', '\u0000\u0001', 'a\nb', '../..', '/', '*', 'a=b,c',
  '${x}', '%zz', 'x'.repeat(300), 'y'.repeat(70_000), 'UPPER_case', '-leading', 'trailing-', '1.2.3.4', '::1', '10.0.0.0/8', '300.1.1.1',
  '2025-01-01T00:00:00Z', 'not-a-time', '1Gi', '-1Gi', '1e999', '0x10', 'a'.repeat(64), 'ab.cd', '\u202e',
]
const ODD_NUMBERS = [0, -1, -5, 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, -(2 ** 53), 1e20, 1e308, -1e308, 1.5, 0.000001, 2 ** 63]

/** Any JSON value, likely of the wrong type for where it goes. */
function wrongValue(): unknown {
  return pick<() => unknown>([
    () => null,
    () => pick(ODD_STRINGS),
    () => pick(ODD_NUMBERS),
    () => chance(0.5),
    () => ({}),
    () => [],
    () => ({'': 1, ' ': null}),
    () => [null, 1, 'x'],
    () => nested(20 + int(300), chance(0.5)),
    () => ({nested: nested(5, false), list: [{}]}),
  ])()
}

/** A value of the schema's type, chosen to be odd (empty, negative, huge, long, unicode, …). */
function oddValue(schema: Schema, depth = 0): unknown {
  switch (schema.type) {
    case 'string':
      if (schema.enum && chance(0.5)) return pick(schema.enum)
      if (schema.format === 'byte') return pick(['', 'AAAA', 'aGVsbG8=', Buffer.from('x'.repeat(2000)).toString('base64')])
      return pick(ODD_STRINGS)
    case 'integer':
    case 'number':
      return pick(ODD_NUMBERS)
    case 'boolean':
      return chance(0.5)
    case 'time':
      return pick(['2025-01-01T00:00:00Z', '1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '0001-01-01T00:00:00Z'])
    case 'quantity':
      return chance(0.3) ? pick(ODD_NUMBERS) : pick(['', '-1', '0', '1e400', 'abc', '999999999999999999999Ei', '1.5m', '1Gi', '-0.0001', '1e-400'])
    case 'int-or-string':
      return chance(0.5) ? pick(ODD_NUMBERS) : pick(ODD_STRINGS)
    case 'raw':
      return wrongValue()
    case 'map': {
      if (depth > 4 || chance(0.3)) return {}
      const out: Record<string, unknown> = {}
      for (const key of ['', pick(ODD_STRINGS).slice(0, 400), 'ok', 'a/b/c']) out[key] = oddValue(schema.values, depth + 1)
      return out
    }
    case 'array': {
      if (depth > 4 || chance(0.3)) return []
      const item = oddValue(schema.items, depth + 1)
      return chance(0.5) ? [item, item] : [item, oddValue(schema.items, depth + 1), null]
    }
    case 'object': {
      const out: Record<string, unknown> = {}
      if (depth > 4 || chance(0.2)) return out
      const fields = Object.entries(schema.fields)
      for (let i = 0; i < 1 + int(3) && fields.length > 0; i++) {
        const [name, field] = pick(fields)
        if (name === '') continue
        out[name] = oddValue(field, depth + 1)
      }
      return out
    }
  }
}

/** A random path into the schema (an array step is index 0), and the schema there. */
function schemaPath(schema: Schema, maxDepth: number): {path: (string | number)[]; leaf: Schema} {
  const path: (string | number)[] = []
  let here: Schema = schema
  for (let depth = 0; depth < maxDepth; depth++) {
    if (here.type === 'object') {
      const fields = Object.entries(here.fields).filter(([name]) => name !== '' && name !== 'apiVersion' && name !== 'kind')
      if (fields.length === 0) break
      const [name, field] = pick(fields)
      path.push(name)
      here = field
    } else if (here.type === 'array') {
      path.push(0)
      here = here.items
    } else if (here.type === 'map') {
      path.push(pick(['k', '', 'a.b/c']))
      here = here.values
    } else break
    if (chance(0.25)) break
  }
  return {path, leaf: here}
}

function setPath(object: AnyObject, path: (string | number)[], value: unknown): void {
  let here: any = object
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]
    const next = here[key]
    if (next === null || typeof next !== 'object') here[key] = typeof path[i + 1] === 'number' ? [] : {}
    here = here[key]
  }
  if (path.length > 0) here[path[path.length - 1]] = value
}

/** Every path to a value in the object. */
function existingPaths(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const path = [...prefix, Array.isArray(value) ? Number(key) : key]
      out.push(path)
      existingPaths(child, path, out)
    }
  }
  return out
}

function deletePath(object: AnyObject, path: (string | number)[]): void {
  let here: any = object
  for (const key of path.slice(0, -1)) here = here?.[key]
  if (here && typeof here === 'object') {
    if (Array.isArray(here)) here.splice(Number(path[path.length - 1]), 1)
    else delete here[path[path.length - 1]]
  }
}

const pointer = (path: (string | number)[]) => '/' + path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

/** One to three mutations of a valid object, after its schema. */
function mutate(object: AnyObject, schema: Schema): AnyObject {
  const out = structuredClone(object)
  for (let i = 0, n = 1 + int(3); i < n; i++) {
    const r = rand()
    if (r < 0.5) {
      const {path, leaf} = schemaPath(schema, 8)
      setPath(out, path, oddValue(leaf))
    } else if (r < 0.65) {
      const {path} = schemaPath(schema, 8)
      setPath(out, path, wrongValue())
    } else if (r < 0.8) {
      const paths = existingPaths(out).filter((p) => p[0] !== 'apiVersion' && p[0] !== 'kind')
      if (paths.length > 0) deletePath(out, pick(paths))
    } else if (r < 0.95) {
      const paths = existingPaths(out)
      if (paths.length > 0) setPath(out, pick(paths), wrongValue())
    } else {
      const paths = existingPaths(out).filter((p) => typeof p[p.length - 1] === 'string')
      setPath(out, [...(paths.length > 0 ? pick(paths) : []), pick(['', 'unknownField', '$patch', '$retainKeys', '$setElementOrder/x'])], wrongValue())
    }
  }
  return out
}

// ---------- valid samples ----------

const apiVersionOf = (d: KindDeclaration) => (d.group ? `${d.group}/${d.version}` : d.version)
const ADM_RULES = {resourceRules: [{apiGroups: ['fuzz.example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['nothing']}]}
/** a real CSR (base64 PEM), made before the cases run */
let CSR_PEM = ''

/** The fields of a small valid object of each kind (besides apiVersion, kind and metadata.name). */
function sampleFields(kind: string, name: string): AnyObject {
  switch (kind) {
    case 'Namespace':
      return {metadata: {labels: {a: 'b'}}}
    case 'ConfigMap':
      return {data: {a: 'b'}}
    case 'Node':
      return {spec: {podCIDR: '10.244.0.0/24'}, status: {capacity: {cpu: '2'}}}
    case 'Pod':
      return {metadata: {labels: {app: 'fz'}}, spec: {containers: [{name: 'app', image: 'nginx:1.27', ports: [{containerPort: 80}], resources: {requests: {cpu: '100m'}}}]}}
    case 'Service':
      return {spec: {selector: {app: 'fz'}, ports: [{port: 80, targetPort: 8080}]}}
    case 'Event':
      return {involvedObject: {kind: 'Pod', name: 'p', namespace: NS}, reason: 'Fuzz', message: 'm', type: 'Normal', count: 1, firstTimestamp: '2025-01-01T00:00:00Z'}
    case 'PersistentVolumeClaim':
      return {spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '1Gi'}}}}
    case 'StatefulSet':
      return {
        spec: {
          replicas: 0,
          serviceName: 'web',
          selector: {matchLabels: {app: name}},
          template: {metadata: {labels: {app: name}}, spec: {containers: [{name: 'c', image: 'nginx'}]}},
        },
      }
    case 'ControllerRevision':
      return {data: {spec: {}}, revision: 1}
    case 'Lease':
      return {spec: {holderIdentity: 'fz', leaseDurationSeconds: 40}}
    case 'ServiceCIDR':
      return {spec: {cidrs: ['10.200.0.0/24']}}
    case 'IPAddress':
      return {metadata: {name: `10.210.0.${1 + int(250)}`}, spec: {parentRef: {group: '', resource: 'services', namespace: NS, name: 's'}}}
    case 'StorageVersionMigration':
      return {spec: {resource: {group: '', resource: 'configmaps'}}}
    case 'CertificateSigningRequest':
      return {spec: {request: CSR_PEM, signerName: 'example.com/fuzz', usages: ['digital signature', 'client auth']}}
    case 'ValidatingWebhookConfiguration':
      return {
        webhooks: [{
          name: 'fz.hooks.example.com',
          clientConfig: {url: 'https://127.0.0.1:1/fz'},
          rules: [{operations: ['CREATE'], apiGroups: ['fuzz.example.com'], apiVersions: ['v1'], resources: ['nothing']}],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Ignore',
        }],
      }
    case 'ValidatingAdmissionPolicy':
      return {spec: {matchConstraints: ADM_RULES, validations: [{expression: 'true'}]}}
    case 'ValidatingAdmissionPolicyBinding':
      return {spec: {policyName: 'fz-none', validationActions: ['Deny']}}
    case 'MutatingAdmissionPolicy':
      return {spec: {matchConstraints: ADM_RULES, reinvocationPolicy: 'Never', mutations: [{patchType: 'ApplyConfiguration', applyConfiguration: {expression: 'Object{}'}}]}}
    case 'MutatingAdmissionPolicyBinding':
      return {spec: {policyName: 'fz-none'}}
    case 'Role':
    case 'ClusterRole':
      return {rules: [{apiGroups: [''], resources: ['configmaps'], verbs: ['get']}]}
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      return {roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'view'}, subjects: [{kind: 'User', apiGroup: 'rbac.orch.io', name: 'jane'}]}
    case 'SubjectAccessReview':
      return {spec: {user: 'jane', resourceAttributes: {verb: 'get', resource: 'pods', namespace: NS}}}
    case 'SelfSubjectAccessReview':
      return {spec: {resourceAttributes: {verb: 'get', resource: 'pods'}}}
    case 'LocalSubjectAccessReview':
      return {spec: {user: 'jane', resourceAttributes: {verb: 'get', resource: 'pods', namespace: NS}}}
    case 'SelfSubjectRulesReview':
      return {spec: {namespace: NS}}
    case 'TokenReview':
      return {spec: {token: 'abc'}}
    case 'SelfSubjectReview':
      return {}
  }
  throw new Error(`no sample for ${kind}`)
}

function sample(d: KindDeclaration, name: string): AnyObject {
  const fields = sampleFields(d.kind, name)
  // the reviews' metadata must be empty
  if (d.virtual) return {...fields, apiVersion: apiVersionOf(d), kind: d.kind}
  return {...fields, apiVersion: apiVersionOf(d), kind: d.kind, metadata: {name, ...(d.namespaced ? {namespace: NS} : {}), ...fields.metadata}}
}

function collection(d: KindDeclaration): string {
  const root = d.group ? `/apis/${d.group}/${d.version}` : `/api/${d.version}`
  return d.namespaced ? `${root}/namespaces/${NS}/${d.resource}` : `${root}/${d.resource}`
}

// ---------- requests ----------

interface Answer {
  status: number
  text: string
  contentType: string
}

const BAD_QUERIES: readonly string[] = [
  'limit=-1', 'limit=abc', 'limit=1e3', 'limit=99999999999999999999', 'continue=garbage', 'continue=eyJ2IjoxfQ', 'continue=%7B%7D',
  'resourceVersion=abc', 'resourceVersion=-1', 'resourceVersion=99999999999999999999', 'resourceVersionMatch=Bogus',
  'resourceVersion=0&resourceVersionMatch=Exact', 'resourceVersionMatch=NotOlderThan', 'timeoutSeconds=x', 'timeoutSeconds=-1',
  'labelSelector=%3D%3D%3D', 'labelSelector=a%20in%20(', 'labelSelector=!', 'labelSelector=a%3D' + 'x'.repeat(300),
  'labelSelector=a,,b', 'fieldSelector=garbage', 'fieldSelector=spec.bogus%3Dx', 'fieldSelector=metadata.name%3D%3D%3D',
  'fieldSelector=metadata.name%20in%20(a)', 'watch=maybe', 'watch=', 'fieldManager=' + 'f'.repeat(200), 'fieldManager=%00%01%7F',
  'dryRun=Bogus', 'dryRun=', 'propagationPolicy=X', 'gracePeriodSeconds=-5', 'gracePeriodSeconds=abc', 'gracePeriodSeconds=99999999999999999999',
  'orphanDependents=maybe', 'pretty=perhaps', 'includeObject=Bogus', 'sendInitialEvents=maybe', 'allowWatchBookmarks=x',
  'fieldValidation=Bogus', 'force=maybe', 'sendInitialEvents=true&resourceVersionMatch=NotOlderThan', 'limit=5&continue=',
  '%zz=1', 'labelSelector=%E2%9C%93%3Dx', 'resourceVersion=0&limit=-3',
]

const BAD_CONTENT_TYPES: readonly string[] = [
  'application/xml', 'text/plain', 'application/json; charset=utf-16', 'application/vnd.kubernetes.protobuf', 'application/cbor',
  'application/yaml', 'application/json;;;', '*/*', 'garbage', 'application/json-patch+json', 'multipart/form-data; boundary=x',
]
const BAD_ACCEPTS: readonly string[] = [
  'application/xml', 'application/json;as=Bogus;g=meta.orch.io;v=v1', 'application/json;as=Table;g=meta.orch.io;v=v1',
  'application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1', 'application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1',
  'application/vnd.kubernetes.protobuf', 'application/yaml', 'application/cbor', '*/*;q=abc', ';;;', 'application/json;q=0', 'text/html',
  'application/vnd.kubernetes.protobuf;as=Table;g=meta.orch.io;v=v1', 'application/json;as=Table;g=meta.orch.io;v=v1beta1',
]

const BAD_BODIES: readonly string[] = [
  '{', '[]', '"x"', '42', 'null', 'true', '{"a":1,"a":2}', '{"metadata":"x"}', '{"metadata":{"name":{}}}', '\u0000', '{"kind":5}',
  `{"apiVersion":"v1","metadata":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`, `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
  `{"metadata":{"name":"deep","labels":{"a":"b"}},"data":{"x":"y"},"spec":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`, '{"metadata":{"name":"a"}}x',
]

describe('bad input, fuzzed: never a 500, never a hang', () => {
  let server: OrchServer
  let agent: Agent
  const failures: string[] = []
  let requests = 0
  const statuses = new Map<number, number>()

  async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, watch = false): Promise<Answer | undefined> {
    requests++
    const init: Record<string, unknown> = {method, headers: {...headers}, dispatcher: agent, signal: AbortSignal.timeout(15_000)}
    if (body !== undefined) {
      init.body = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
      ;(init.headers as Record<string, string>)['Content-Type'] ??= 'application/json'
    }
    const what = `${method} ${path.slice(0, 300)} [${JSON.stringify(headers)}] ${typeof init.body === 'string' ? init.body.slice(0, 400) : ''}`
    let answer: Answer
    try {
      const response = await undiciFetch(server.url + path, init as never)
      const contentType = response.headers.get('content-type') ?? ''
      const query = new URL(server.url + path).searchParams
      const watching = watch || (method === 'GET' && query.has('watch') && !['0', 'false'].includes(query.get('watch')!))
      if (watching && response.status === 200) {
        await response.body?.cancel()
        return {status: 200, text: '', contentType}
      }
      answer = {status: response.status, text: Buffer.from(await response.arrayBuffer()).toString('utf8'), contentType}
    } catch (error) {
      failures.push(`${what}\n  -> no answer: ${(error as Error).message}`)
      return undefined
    }
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    if (answer.status >= 500) {
      failures.push(`${what}\n  -> ${answer.status} ${answer.text.slice(0, 400)}`)
    } else if (answer.status >= 400 && answer.contentType.startsWith('application/json')) {
      let status: any
      try {
        status = JSON.parse(answer.text)
      } catch {
        status = undefined
      }
      if (status?.kind !== 'Status' || status.code !== answer.status || typeof status.message !== 'string') {
        failures.push(`${what}\n  -> ${answer.status} without a matching Status: ${answer.text.slice(0, 300)}`)
      }
    }
    return answer
  }

  before(async () => {
    CSR_PEM = Buffer.from((await createCSR({commonName: 'fuzz'})).csrPem).toString('base64')
    server = await startOrchServer(['--controllers='])
    const {ca, cert, key} = tlsOptions(server.url)
    agent = new Agent({connect: {ca, cert, key}})
    const ns = await send('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: NS}})
    assert.equal(ns?.status, 201, ns?.text)
  })
  after(async () => {
    await agent?.close()
    await server?.cleanup()
  })

  const creatable = allDeclarations.filter((d) => d.verbs.includes('create'))

  it('covers every creatable kind with a valid sample', () => {
    for (const d of creatable) assert.ok(sample(d, 'x').kind === d.kind)
  })

  for (const declaration of creatable) {
    it(`${declaration.kind}: mutated bodies, patches, deletes, queries and headers`, async () => {
      const d = declaration
      const base = collection(d)
      const subresources = new Set((d.subresources ?? []).map((s) => s.name))
      let counter = 0
      const fresh = () => `fz-${d.resource.slice(0, 10)}-${counter++}`
      /** a stored object to write to; recreated when a case removed it */
      const ensure = async (name: string): Promise<AnyObject | undefined> => {
        const path = `${base}/${encodeURIComponent(name)}`
        const got = await send('GET', path)
        if (got?.status === 200) return JSON.parse(got.text)
        const created = await send('POST', base, sample(d, name))
        if (created?.status !== 201) return undefined
        return JSON.parse(created.text)
      }
      if (d.virtual) {
        const ok = await send('POST', base, sample(d, 'x'))
        assert.equal(ok?.status, 201, ok?.text)
        for (let i = 0; i < ITERATIONS_PER_KIND * 3; i++) {
          await send('POST', `${base}${chance(0.2) ? `?${pick(BAD_QUERIES)}` : ''}`, mutate(sample(d, 'x'), d.schema))
          if (chance(0.2)) await send('POST', base, pick(BAD_BODIES), {'Content-Type': pick(BAD_CONTENT_TYPES), Accept: pick(BAD_ACCEPTS)})
        }
        return
      }
      const baseName = d.kind === 'IPAddress' ? '10.210.1.1' : 'fz-base'
      const first = sample(d, baseName)
      if (d.kind === 'IPAddress') first.metadata = {...first.metadata, name: baseName}
      const created = await send('POST', base, first)
      assert.equal(created?.status, 201, `the valid ${d.kind} sample: ${created?.text}`)
      const writeSub = ['status', 'finalize', 'approval'].filter((s) => subresources.has(s))

      for (let i = 0; i < ITERATIONS_PER_KIND; i++) {
        const current = await ensure(baseName)
        if (!current) continue
        const path = `${base}/${encodeURIComponent(baseName)}`
        const query = () => (chance(0.15) ? `?${pick(BAD_QUERIES)}` : '')
        // create
        const body = mutate(sample(d, fresh()), d.schema)
        await send('POST', `${base}${query()}`, body)
        // update
        const updated = mutate(current, d.schema)
        if (chance(0.3)) delete updated.metadata?.resourceVersion
        await send('PUT', `${path}${query()}`, updated)
        // patches
        const {path: fieldPath, leaf} = schemaPath(d.schema, 8)
        const merge: AnyObject = {}
        setPath(merge, fieldPath, chance(0.6) ? oddValue(leaf) : wrongValue())
        await send('PATCH', `${path}${query()}`, merge, {'Content-Type': 'application/merge-patch+json'})
        const strategic = chance(0.5) ? merge : mutate({}, d.schema)
        if (chance(0.2)) setPath(strategic, [...fieldPath.slice(0, -1), pick(['$patch', '$retainKeys', '$setElementOrder/x', '$deleteFromPrimitiveList/x'])], pick(['delete', 'replace', 'merge', 'bogus', [1], {}, null]))
        await send('PATCH', `${path}${query()}`, strategic, {'Content-Type': 'application/strategic-merge-patch+json'})
        const existing = existingPaths(current)
        const ops = Array.from({length: 1 + int(3)}, () => {
          const op: AnyObject = {op: pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus', 5, null] as const)}
          op.path = pick([pointer(fieldPath), pointer(pick(existing)), '', '/', '/metadata/labels/~2', '/spec/-', '/a/b/c', 'noslash', '/metadata/~', '/spec/containers/999', '/metadata/finalizers/-1', 5])
          if (chance(0.8)) op.value = chance(0.5) ? oddValue(leaf) : wrongValue()
          if (chance(0.5)) op.from = pick([pointer(pick(existing)), '', '/nope', 7])
          return op
        })
        await send('PATCH', `${path}${query()}`, chance(0.1) ? pick([{}, 'x', [1], [[]]]) : ops, {'Content-Type': 'application/json-patch+json'})
        const applied = mutate(sample(d, baseName), d.schema)
        if (d.kind === 'IPAddress') applied.metadata = {...applied.metadata, name: baseName}
        await send(
          'PATCH',
          `${path}?${chance(0.8) ? 'fieldManager=fz' : ''}${chance(0.2) ? `&force=${pick(['true', 'x'])}` : ''}`,
          chance(0.15) ? pick(['a: [', '- 1\n- 2', '42', '!!binary x', 'a: &x [*x]', 'metadata: {name: [1, 2]}', '{"metadata": {"name": 5}}']) : JSON.stringify(applied),
          {'Content-Type': 'application/apply-patch+yaml'},
        )
        // subresources
        for (const sub of writeSub) {
          if (!chance(0.6)) continue
          const fresher = await ensure(baseName)
          if (!fresher) break
          await send('PUT', `${path}/${sub}${query()}`, mutate(fresher, d.schema))
          if (sub !== 'finalize') {
            const patch: AnyObject = {}
            const p = schemaPath(d.schema, 8)
            setPath(patch, p.path, oddValue(p.leaf))
            await send('PATCH', `${path}/${sub}`, patch, {'Content-Type': pick(['application/merge-patch+json', 'application/strategic-merge-patch+json'])})
            await send('PATCH', `${path}/${sub}`, [{op: pick(['add', 'replace']), path: pointer(p.path), value: wrongValue()}], {'Content-Type': 'application/json-patch+json'})
          }
        }
        if (subresources.has('scale')) {
          const scale = mutate({apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: {name: baseName, namespace: NS}, spec: {replicas: 1}}, {
            type: 'object',
            name: 'Scale',
            fields: {metadata: {type: 'object', name: 'ObjectMeta', fields: {name: {type: 'string', proto: 1}}, proto: 1}, spec: {type: 'object', name: 'ScaleSpec', fields: {replicas: {type: 'integer', format: 'int32', proto: 1}}, proto: 2}},
          })
          await send('PUT', `${path}/scale`, scale)
          await send('PATCH', `${path}/scale`, {spec: {replicas: chance(0.5) ? pick(ODD_NUMBERS) : wrongValue()}}, {'Content-Type': pick(['application/merge-patch+json', 'application/strategic-merge-patch+json'])})
          await send('PATCH', `${path}/scale`, [{op: 'replace', path: '/spec/replicas', value: chance(0.5) ? pick(ODD_NUMBERS) : wrongValue()}], {'Content-Type': 'application/json-patch+json'})
        }
        if (subresources.has('binding')) {
          const binding = mutate({apiVersion: 'v1', kind: 'Binding', metadata: {name: baseName, namespace: NS}, target: {kind: 'Node', name: 'n1'}}, podBinding.schema)
          await send('POST', `${path}/binding`, binding)
        }
        if (subresources.has('eviction')) {
          const eviction = mutate({apiVersion: 'policy/v1', kind: 'Eviction', metadata: {name: baseName, namespace: NS}, deleteOptions: {gracePeriodSeconds: 0}}, podEviction.schema)
          await send('POST', `${path}/eviction${query()}`, eviction)
        }
        // deletes with odd DeleteOptions, of an object made for it
        const victim = fresh()
        const victimObject = sample(d, victim)
        const made = await send('POST', base, victimObject)
        const victimPath = `${base}/${encodeURIComponent(made?.status === 201 ? JSON.parse(made.text).metadata.name : victim)}`
        const options = mutate({apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, propagationPolicy: 'Background', preconditions: {uid: 'x'}, dryRun: ['All']}, {
          type: 'object',
          name: 'DeleteOptions',
          fields: {
            gracePeriodSeconds: {type: 'integer', format: 'int64', proto: 1},
            propagationPolicy: {type: 'string', proto: 2},
            orphanDependents: {type: 'boolean', proto: 3},
            dryRun: {type: 'array', items: {type: 'string'}, proto: 4},
            preconditions: {type: 'object', name: 'Preconditions', fields: {uid: {type: 'string', proto: 1}, resourceVersion: {type: 'string', proto: 2}}, proto: 5},
          },
        })
        await send('DELETE', `${victimPath}${query()}`, chance(0.1) ? pick(BAD_BODIES) : options)
        if (d.verbs.includes('deletecollection') && chance(0.3)) {
          await send('DELETE', `${base}?labelSelector=fuzz-none%3D1&${pick(BAD_QUERIES)}`, chance(0.5) ? options : undefined)
        }
        // reads with bad queries
        await send('GET', `${base}?${pick(BAD_QUERIES)}&${pick(BAD_QUERIES)}`)
        await send('GET', `${path}?${pick(BAD_QUERIES)}`)
        await send('GET', `${base}?watch=1&timeoutSeconds=1&${pick(BAD_QUERIES)}`, undefined, {}, true)
        // odd bodies and headers
        await send(pick(['POST', 'PUT', 'PATCH']), pick([base, path]), pick(BAD_BODIES), {'Content-Type': pick(BAD_CONTENT_TYPES)})
        await send(pick(['GET', 'POST', 'DELETE']), pick([base, path]), undefined, {Accept: pick(BAD_ACCEPTS)})
        // admission configurations that fuzzing made could refuse (or fail) every later write: removed
        if (d.group.startsWith('admissionregistration')) await send('DELETE', `${base}`)
      }
      // whatever was stored is valid: written back unchanged, it is accepted again (and an apply of it
      // by another manager merges, which fails on list items without their keys)
      const stored = await send('GET', base)
      for (const item of stored?.status === 200 ? (JSON.parse(stored.text).items as AnyObject[]).slice(0, 25) : []) {
        const itemPath = `${base}/${encodeURIComponent(item.metadata!.name)}`
        const again = await send('PUT', itemPath, item)
        if (again && (again.status === 400 || again.status === 422)) failures.push(`stored ${d.kind} ${item.metadata!.name} is refused when written back: ${again.text.slice(0, 400)}`)
        await send('PATCH', `${itemPath}?fieldManager=fz-check&force=true`, {apiVersion: item.apiVersion, kind: item.kind, metadata: {name: item.metadata!.name, labels: {checked: 'yes'}}}, {'Content-Type': 'application/apply-patch+yaml'})
      }
      // whatever was stored reads back, in every view
      for (const accept of ['application/json', 'application/json;as=Table;g=meta.orch.io;v=v1', 'application/vnd.kubernetes.protobuf', 'application/yaml', 'application/cbor']) {
        await send('GET', base, undefined, {Accept: accept})
      }
    })
  }

  it('the server is healthy at the end, and nothing answered 500 or hung', async (t) => {
    const ready = await send('GET', '/readyz')
    t.diagnostic(`${requests} requests; answers by status: ${JSON.stringify(Object.fromEntries(statuses))}`)
    assert.equal(ready?.status, 200, ready?.text)
    assert.equal(server.child.exitCode, null)
    const report = failures.length === 0 ? '' : `${failures.length} of ${requests} requests failed:\n${failures.join('\n')}\n--- server log (errors) ---\n${server.logs().split('\n').filter((l) => /error|Error/.test(l)).slice(0, 60).join('\n').slice(0, 20_000)}`
    assert.equal(failures.length, 0, report)
  })
})
