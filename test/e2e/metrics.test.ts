// /metrics of `orch server`: kube-apiserver's request, latency, in-flight, long-running and storage
// metrics in the Prometheus text format, scraped from a real server after real requests.
import assert from 'node:assert/strict'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {call, openWatch} from '../support/http.js'
import {startOrchServer, tempDir, type OrchServer} from '../support/server.js'

const MONITOR_TOKEN = 'metrics-monitor-0123456789'
const PLAIN_TOKEN = 'metrics-plain-0123456789'
const CM = '/api/v1/namespaces/default/configmaps'

/** sample lines by their full series text (name and labels) */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const space = line.lastIndexOf(' ')
    out.set(line.slice(0, space), Number(line.slice(space + 1)))
  }
  return out
}

function requestSeries(labels: {code?: string; dryRun?: string; group?: string; resource: string; scope: string; subresource?: string; verb: string; version?: string}): string {
  const code = labels.code === undefined ? '' : `code="${labels.code}",`
  return `{${code}component="apiserver",dry_run="${labels.dryRun ?? ''}",group="${labels.group ?? ''}",resource="${labels.resource}",scope="${labels.scope}",subresource="${labels.subresource ?? ''}",verb="${labels.verb}",version="${labels.version ?? 'v1'}"}`
}

describe('metrics', () => {
  let server: OrchServer
  const scrape = async () => {
    const response = await call(server.url, 'GET', '/metrics')
    assert.equal(response.status, 200, response.text)
    return response
  }

  before(async () => {
    const tokens = join(tempDir('orch-metrics-tokens-'), 'tokens.csv')
    writeFileSync(tokens, `${MONITOR_TOKEN},prometheus,uid-prom,"system:monitoring"\n${PLAIN_TOKEN},jane,uid-jane,"devs"\n`)
    server = await startOrchServer(['--controllers=', '--token-auth-file', tokens])
  })
  after(() => server.cleanup())

  it('is the Prometheus text format: "# HELP" and "# TYPE" once per family, then name{labels} value lines', async () => {
    const response = await scrape()
    assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
    const types = response.text.split('\n').filter((l) => l.startsWith('# TYPE '))
    assert.equal(new Set(types).size, types.length)
    for (const name of ['apiserver_request_total counter', 'apiserver_request_duration_seconds histogram', 'apiserver_current_inflight_requests gauge', 'apiserver_longrunning_requests gauge', 'apiserver_storage_objects gauge', 'process_cpu_seconds_total counter']) {
      assert.ok(types.includes(`# TYPE ${name}`), name)
    }
    for (const line of response.text.split('\n')) {
      if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue
      assert.match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-z_]+="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|\+Inf|NaN)$/, line)
    }
    const values = samples(response.text)
    assert.ok(values.get('process_cpu_seconds_total')! > 0)
    assert.ok(values.get('process_open_fds')! > 0)
    assert.ok(values.get('process_resident_memory_bytes')! > 0)
  })

  it('apiserver_request_total counts each request by verb, scope, resource, subresource, dry run and code, as kube-apiserver labels them', async () => {
    const configmap = {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'm1'}, data: {a: '1'}}
    assert.equal((await call(server.url, 'POST', CM, configmap)).status, 201)
    assert.equal((await call(server.url, 'POST', `${CM}?dryRun=All`, {...configmap, metadata: {name: 'm2'}})).status, 201)
    assert.equal((await call(server.url, 'GET', `${CM}/m1`)).status, 200)
    assert.equal((await call(server.url, 'GET', `${CM}/absent`)).status, 404)
    assert.equal((await call(server.url, 'GET', CM)).status, 200)
    assert.equal((await call(server.url, 'GET', '/api/v1/configmaps')).status, 200)
    const apply = await call(server.url, 'PATCH', `${CM}/m3?fieldManager=test`, JSON.stringify({...configmap, metadata: {name: 'm3'}}), {'Content-Type': 'application/apply-patch+yaml'})
    assert.equal(apply.status, 201)
    const sts = {apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 's1'}, spec: {selector: {matchLabels: {a: 'b'}}, serviceName: 's', template: {metadata: {labels: {a: 'b'}}, spec: {containers: [{name: 'c', image: 'i'}]}}}}
    const created = await call(server.url, 'POST', '/apis/apps/v1/namespaces/default/statefulsets', sts)
    assert.equal(created.status, 201)
    const status = await call(server.url, 'PUT', '/apis/apps/v1/namespaces/default/statefulsets/s1/status', {...created.json, status: {replicas: 0}})
    assert.equal(status.status, 200, status.text)
    assert.equal((await call(server.url, 'GET', '/api/v1/namespaces/default/bogus')).status, 404)
    const invalidDryRun = await call(server.url, 'POST', `${CM}?dryRun=Sometimes`, {...configmap, metadata: {name: 'm4'}})
    assert.ok(invalidDryRun.status >= 400, invalidDryRun.text)
    assert.equal((await call(server.url, 'HEAD', '/version')).status, 200)
    assert.equal((await call(server.url, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: 'n1'}})).status, 201)
    // a node without an agent address: 503, still a CONNECT to the proxy subresource
    assert.equal((await call(server.url, 'GET', '/api/v1/nodes/n1/proxy/healthz')).status, 503)

    const values = samples((await scrape()).text)
    const total = (labels: Parameters<typeof requestSeries>[0]) => values.get(`apiserver_request_total${requestSeries(labels)}`)
    assert.equal(total({code: '201', resource: 'configmaps', scope: 'resource', verb: 'POST'}), 1)
    assert.equal(total({code: '201', dryRun: 'All', resource: 'configmaps', scope: 'resource', verb: 'POST'}), 1)
    assert.equal(total({code: '200', resource: 'configmaps', scope: 'resource', verb: 'GET'}), 1)
    assert.equal(total({code: '404', resource: 'configmaps', scope: 'resource', verb: 'GET'}), 1)
    assert.equal(total({code: '200', resource: 'configmaps', scope: 'namespace', verb: 'LIST'}), 1)
    assert.equal(total({code: '200', resource: 'configmaps', scope: 'cluster', verb: 'LIST'}), 1)
    assert.equal(total({code: '201', resource: 'configmaps', scope: 'resource', verb: 'APPLY'}), 1)
    assert.equal(total({code: '200', group: 'apps', resource: 'statefulsets', scope: 'resource', subresource: 'status', verb: 'PUT'}), 1)
    assert.equal(total({code: '503', resource: 'nodes', scope: 'resource', subresource: 'proxy', verb: 'CONNECT'}), 1)
    assert.equal(values.get(`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="",verb="GET",version=""}`)! >= 1, true)
    assert.ok(![...values.keys()].some((series) => series.includes('verb="HEAD"')))
    // what a client writes in the query or path makes no series of its own: "invalid" stands for any
    // dryRun value but All, and a resource the server does not serve is left out
    assert.ok([...values.keys()].some((series) => series.includes('dry_run="invalid"') && series.includes('verb="POST"')))
    assert.ok(![...values.keys()].some((series) => series.includes('Sometimes') || series.includes('bogus')))
    assert.ok(total({code: '404', resource: '', scope: 'namespace', verb: 'LIST', version: ''})! >= 1)
  })

  it('apiserver_request_duration_seconds is a histogram with Kubernetes\' buckets (cumulative, "+Inf" equal to _count)', async () => {
    const values = samples((await scrape()).text)
    const labels = requestSeries({resource: 'configmaps', scope: 'resource', verb: 'POST'})
    const count = values.get(`apiserver_request_duration_seconds_count${labels}`)
    assert.equal(count, 1)
    assert.ok(values.get(`apiserver_request_duration_seconds_sum${labels}`)! > 0)
    const inner = labels.slice(1, -1)
    const bounds = ['0.005', '0.025', '0.05', '0.1', '0.2', '0.4', '0.6', '0.8', '1', '1.25', '1.5', '2', '3', '4', '5', '6', '8', '10', '15', '20', '30', '45', '60', '+Inf']
    let previous = 0
    for (const le of bounds) {
      const bucket = values.get(`apiserver_request_duration_seconds_bucket{${inner},le="${le}"}`)
      assert.ok(bucket !== undefined && bucket >= previous, le)
      previous = bucket
    }
    assert.equal(previous, count)
  })

  it('apiserver_longrunning_requests counts open watches; apiserver_current_inflight_requests the others', async () => {
    const watch = await openWatch(server.url, `${CM}?watch=1&timeoutSeconds=600`)
    const gauge = `apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="WATCH",version="v1"}`
    const open = samples((await scrape()).text)
    assert.equal(open.get(gauge), 1)
    assert.equal(open.get('apiserver_current_inflight_requests{request_kind="mutating"}'), 0)
    // the scrape itself is the one read in flight
    assert.equal(open.get('apiserver_current_inflight_requests{request_kind="readOnly"}'), 1)
    watch.close()
    await watch.ended.catch(() => undefined)
    // the server sees the close on its own connection, after some scrape: ask until it has
    let closed = samples((await scrape()).text)
    for (let i = 0; i < 200 && closed.get(gauge) !== 0; i++) closed = samples((await scrape()).text)
    assert.equal(closed.get(gauge), 0)
    assert.equal(closed.get(`apiserver_request_total${requestSeries({code: '200', resource: 'configmaps', scope: 'namespace', verb: 'WATCH'})}`), 1)
  })

  it('apiserver_storage_objects gives the objects stored per resource ("statefulsets.apps" for a group)', async () => {
    const values = samples((await scrape()).text)
    const listed = await call(server.url, 'GET', '/api/v1/configmaps')
    assert.equal(values.get('apiserver_storage_objects{resource="configmaps"}'), listed.json.items.length)
    assert.equal(values.get('apiserver_storage_objects{resource="statefulsets.apps"}'), 1)
  })

  it('/metrics is for system:monitoring (and admins): 403 for other users, 401 without credentials', async () => {
    assert.equal((await call(server.url, 'GET', '/metrics', undefined, {}, {as: {token: MONITOR_TOKEN}})).status, 200)
    assert.equal((await call(server.url, 'GET', '/metrics', undefined, {}, {as: {token: PLAIN_TOKEN}})).status, 403)
    assert.equal((await call(server.url, 'GET', '/metrics', undefined, {}, {as: 'anonymous'})).status, 401)
  })
})
