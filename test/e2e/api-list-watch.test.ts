// Lists, paging, selectors, views, compression and watches over HTTP.
import assert from 'node:assert/strict'
import {after, before, describe, it} from 'node:test'
import {call, openWatch, rawGet, type HttpResult} from '../support/http.js'
import {startOrchServer, type RunningOrch} from '../support/server.js'

describe('API core: lists, views and watches', () => {
  let server: RunningOrch
  let api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResult>
  const base = '/api/v1/namespaces/lw/configmaps'
  before(async () => {
    server = await startOrchServer()
    api = (method, path, body, headers) => call(server.url, method, path, body, headers)
    await api('POST', '/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'lw'}})
    for (let i = 0; i < 10; i++) {
      const labels = {index: String(i), parity: i % 2 === 0 ? 'even' : 'odd'}
      const r = await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `item-${i}`, labels}, data: {i: String(i)}})
      assert.equal(r.status, 201, r.text)
    }
  })
  after(async () => server.cleanup())

  it('list answers the List kind with a collection resourceVersion', async () => {
    const result = await api('GET', base)
    assert.equal(result.json.kind, 'ConfigMapList')
    assert.equal(result.json.apiVersion, 'v1')
    assert.match(result.json.metadata.resourceVersion, /^\d+$/)
    assert.equal(result.json.items.length, 10)
  })

  it('the all-namespaces list path lists every namespace', async () => {
    const result = await api('GET', '/api/v1/configmaps')
    assert.ok(result.json.items.length >= 10)
    assert.ok(result.json.items.every((i: any) => i.metadata.namespace))
  })

  it('labelSelector supports =, ==, !=, in, notin, key and !key', async () => {
    const names = async (selector: string) =>
      (await api('GET', `${base}?labelSelector=${encodeURIComponent(selector)}`)).json.items.map((i: any) => i.metadata.name)
    assert.equal((await names('parity=even')).length, 5)
    assert.equal((await names('parity==odd')).length, 5)
    assert.equal((await names('parity!=odd')).length, 5)
    assert.deepEqual(await names('index in (1,2)'), ['item-1', 'item-2'])
    assert.equal((await names('index notin (1,2)')).length, 8)
    assert.equal((await names('index')).length, 10)
    assert.equal((await names('!index')).length, 0)
  })

  it('a bad label selector is 400', async () => {
    const result = await api('GET', `${base}?labelSelector=${encodeURIComponent('a in (')}`)
    assert.equal(result.status, 400, result.text)
    assert.equal(result.json.reason, 'BadRequest')
  })

  it('fieldSelector metadata.name works; an unsupported field is 400', async () => {
    const result = await api('GET', `${base}?fieldSelector=metadata.name%3Ditem-3`)
    assert.deepEqual(result.json.items.map((i: any) => i.metadata.name), ['item-3'])
    const bad = await api('GET', `${base}?fieldSelector=spec.nothing%3Dx`)
    assert.equal(bad.status, 400)
  })

  it('paging: limit/continue over one snapshot; remainingItemCount counts down and is absent on the last chunk', async () => {
    const first = (await api('GET', `${base}?limit=4`)).json
    assert.equal(first.items.length, 4)
    assert.equal(first.metadata.remainingItemCount, 6)
    assert.ok(first.metadata.continue)
    // a write between pages does not show up in the snapshot
    await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'item-99'}})
    const second = (await api('GET', `${base}?limit=4&continue=${first.metadata.continue}`)).json
    assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion)
    assert.equal(second.metadata.remainingItemCount, 2)
    const third = (await api('GET', `${base}?limit=4&continue=${second.metadata.continue}`)).json
    assert.equal(third.items.length, 2)
    assert.equal(third.metadata.continue ?? '', '')
    assert.equal(third.metadata.remainingItemCount, undefined)
    const all = [...first.items, ...second.items, ...third.items].map((i: any) => i.metadata.name)
    assert.equal(new Set(all).size, 10)
    assert.ok(!all.includes('item-99'))
    await api('DELETE', `${base}/item-99`)
  })

  it('remainingItemCount is absent when a selector is used', async () => {
    const page = (await api('GET', `${base}?limit=2&labelSelector=parity%3Deven`)).json
    assert.equal(page.items.length, 2)
    assert.ok(page.metadata.continue)
    assert.equal(page.metadata.remainingItemCount, undefined)
  })

  it('a forged continue token is 400, never 500: malformed, outside the list, from a future revision, issued in the future', async () => {
    const forge = (token: object) => Buffer.from(JSON.stringify({v: 'meta.orch.io/v1', rv: 1, start: 'a', t: Date.now(), ...token})).toString('base64url')
    for (const token of ['garbage', Buffer.from('{"v":"x"}').toString('base64url'), forge({start: '../../x'}), forge({rv: 99_999_999}), forge({t: Date.now() + 3_600_000})]) {
      const result = await api('GET', `${base}?limit=2&continue=${token}`)
      assert.equal(result.status, 400, result.text)
    }
  })

  it('"a GET at a resourceVersion is not older than it": one storage has not reached waits for it (answered once a write gets there) or, after 3 s, is 504 Too large resource version; one that is no number is 400', async () => {
    const created = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'fresh-get'}})).json
    const current = Number(created.metadata.resourceVersion)
    assert.equal((await api('GET', `${base}/fresh-get?resourceVersion=${current}`)).status, 200)
    const waiting = api('GET', `${base}/fresh-get?resourceVersion=${current + 1}`)
    await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'fresh-get-next'}})
    assert.equal((await waiting).status, 200)
    const ahead = await api('GET', `${base}/fresh-get?resourceVersion=${current + 1000}`)
    assert.equal(ahead.status, 504, ahead.text)
    assert.equal(ahead.json.details.causes[0].reason, 'ResourceVersionTooLarge')
    assert.equal((await api('GET', `${base}/fresh-get?resourceVersion=abc`)).status, 400)
    // the other tests count this list's items
    for (const name of ['fresh-get', 'fresh-get-next']) assert.equal((await api('DELETE', `${base}/${name}`)).status, 200)
  })

  it('a continue token older than 5 minutes is 410 Gone with reason Expired', async () => {
    const old = Buffer.from(JSON.stringify({v: 'meta.orch.io/v1', rv: 1, start: 'item-1', t: Date.now() - 6 * 60_000})).toString('base64url')
    const result = await api('GET', `${base}?limit=2&continue=${old}`)
    assert.equal(result.status, 410, result.text)
    assert.equal(result.json.reason, 'Expired')
  })

  it('resourceVersion=0 lists from the cache; resourceVersionMatch=Exact lists at that revision', async () => {
    const now = (await api('GET', base)).json
    const cached = (await api('GET', `${base}?resourceVersion=0`)).json
    assert.equal(cached.items.length, now.items.length)
    await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'later'}})
    const exact = (await api('GET', `${base}?resourceVersion=${now.metadata.resourceVersion}&resourceVersionMatch=Exact`)).json
    assert.equal(exact.items.length, now.items.length)
    assert.equal(exact.metadata.resourceVersion, now.metadata.resourceVersion)
    const newer = (await api('GET', `${base}?resourceVersion=${now.metadata.resourceVersion}&resourceVersionMatch=NotOlderThan`)).json
    assert.equal(newer.items.length, now.items.length + 1)
    await api('DELETE', `${base}/later`)
  })

  it('a watch with initial events from a resourceVersion storage has not reached waits up to 3 s for it, then is one ERROR event (504, ResourceVersionTooLarge) on a 200 stream (waitUntilWatchCacheFreshAndForceAllEvents)', async () => {
    const current = Number((await api('GET', base)).json.metadata.resourceVersion)
    const watchList = (rv: number) => `${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=1`
    // one write away: the watch waits for it and starts
    const waiting = api('GET', watchList(current + 1))
    await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'watch-list-fresh'}})
    const served = await waiting
    assert.equal(served.status, 200, served.text)
    assert.match(served.text, /"orch.io\/initial-events-end":"true"/)
    assert.doesNotMatch(served.text, /"type":"ERROR"/)
    await api('DELETE', `${base}/watch-list-fresh`)
    // never reached
    const started = Date.now()
    const ahead = await api('GET', watchList(current + 100_000))
    assert.ok(Date.now() - started >= 2_900, 'it waited for the cache first')
    assert.equal(ahead.status, 200, ahead.text)
    const events = ahead.text.trim().split('\n').map((line) => JSON.parse(line))
    assert.equal(events.length, 1)
    assert.equal(events[0].type, 'ERROR')
    assert.equal(events[0].object.code, 504)
    assert.match(events[0].object.message, /^Timeout: Too large resource version: \d+, current: \d+$/)
    assert.deepEqual(events[0].object.details.causes, [{reason: 'ResourceVersionTooLarge', message: 'Too large resource version'}])
  })

  it('"NegotiateOutputMediaTypeStream": a watch asking only for YAML, which has no stream serializer, is 406 naming the stream media types', async () => {
    const result = await api('GET', `${base}?watch=1&timeoutSeconds=1`, undefined, {Accept: 'application/yaml'})
    assert.equal(result.status, 406, result.text)
    // (the Status itself in YAML, as the error is negotiated like any answer)
    assert.match(result.text, /^reason: NotAcceptable$/m)
    assert.match(result.text, /^message: "only the following media types are accepted: application\/json;stream=watch, application\/vnd\.orch\.protobuf;stream=watch/m)
    assert.doesNotMatch(result.text, /application\/yaml;stream=watch/)
  })

  it('a resourceVersion storage has not reached is 504 Timeout with cause ResourceVersionTooLarge (list Exact, list NotOlderThan), never a 500', async () => {
    const current = Number((await api('GET', base)).json.metadata.resourceVersion)
    const future = current + 100_000
    for (const path of [
      `${base}?resourceVersion=${future}&resourceVersionMatch=Exact`,
      `${base}?resourceVersion=${future}&resourceVersionMatch=NotOlderThan`,
    ]) {
      const result = await api('GET', path)
      assert.equal(result.status, 504, `${path}: ${result.text}`)
      assert.equal(result.json.reason, 'Timeout')
      assert.match(result.json.message, /^Timeout: Too large resource version: \d+, current: \d+$/)
      assert.deepEqual(result.json.details.causes, [{reason: 'ResourceVersionTooLarge', message: 'Too large resource version'}])
      assert.equal(result.json.details.retryAfterSeconds, 1)
      assert.equal(result.headers['retry-after'], '1', 'Retry-After as well, which client-go retries on')
    }
  })

  it('a resourceVersion is decimal digits: 0x10, 1e1 or -1 is 400, never a read at another version', async () => {
    for (const rv of ['0x10', '1e1', '-1', '1.5']) {
      const result = await api('GET', `${base}?resourceVersion=${rv}&limit=1`)
      assert.equal(result.status, 400, result.text)
      assert.equal(result.json.reason, 'BadRequest')
      assert.equal(result.json.message, `invalid resource version: ${rv}`)
    }
  })

  it('limit, timeoutSeconds and gracePeriodSeconds are int64: past its range 400 (was a 500 from storage); past 2^53 a whole list', async () => {
    for (const query of ['limit=99999999999999999999', 'limit=-9223372036854775809']) {
      const result = await api('GET', `${base}?${query}`)
      assert.equal(result.status, 400, result.text)
      assert.equal(result.json.reason, 'BadRequest')
      assert.match(result.json.message, /is out of range$/)
    }
    const huge = await api('GET', `${base}?limit=9223372036854775807`)
    assert.equal(huge.status, 200, huge.text)
    assert.equal(huge.json.items.length, 10)
    assert.equal((await api('DELETE', `${base}/item-0?gracePeriodSeconds=99999999999999999999`)).status, 400)
  })

  it('limit with a non-zero resourceVersion pages: Exact at that version without resourceVersionMatch, the latest state with NotOlderThan', async () => {
    const before = (await api('GET', base)).json
    const rv = before.metadata.resourceVersion
    await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'paged-later'}})
    try {
      // legacy semantics: resourceVersion=N&limit=n is an exact read of that snapshot, page by page
      const first = (await api('GET', `${base}?resourceVersion=${rv}&limit=4`)).json
      assert.equal(first.items.length, 4)
      assert.equal(first.metadata.resourceVersion, rv)
      assert.equal(first.metadata.remainingItemCount, before.items.length - 4)
      const names = first.items.map((i: any) => i.metadata.name)
      let token = first.metadata.continue
      while (token) {
        const page = (await api('GET', `${base}?limit=4&continue=${encodeURIComponent(token)}`)).json
        assert.equal(page.metadata.resourceVersion, rv)
        names.push(...page.items.map((i: any) => i.metadata.name))
        token = page.metadata.continue
      }
      assert.deepEqual(names, before.items.map((i: any) => i.metadata.name))
      // NotOlderThan: at least that version (so the later object shows), still limited
      const notOlder = (await api('GET', `${base}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan&limit=4`)).json
      assert.equal(notOlder.items.length, 4)
      assert.ok(notOlder.metadata.continue)
      assert.equal(notOlder.metadata.remainingItemCount, before.items.length + 1 - 4)
      assert.ok(Number(notOlder.metadata.resourceVersion) > Number(rv))
    } finally {
      await api('DELETE', `${base}/paged-later`)
    }
  })

  it('ListOptions are validated as Kubernetes does: Exact with resourceVersion "0", resourceVersionMatch with continue and sendInitialEvents on a list are 422; continue with resourceVersion "0" is tolerated', async () => {
    const invalid = async (path: string, message: RegExp) => {
      const result = await api('GET', path)
      assert.equal(result.status, 422, `${path}: ${result.text}`)
      assert.equal(result.json.reason, 'Invalid')
      assert.equal(result.json.details.kind, 'ListOptions')
      assert.match(result.json.message, message)
    }
    await invalid(`${base}?resourceVersion=0&resourceVersionMatch=Exact`, /resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"/)
    await invalid(`${base}?sendInitialEvents=true`, /sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list/)
    const token = (await api('GET', `${base}?limit=2`)).json.metadata.continue
    await invalid(`${base}?limit=2&continue=${encodeURIComponent(token)}&resourceVersionMatch=NotOlderThan`, /resourceVersionMatch is forbidden when continue is provided/)
    const tolerated = await api('GET', `${base}?limit=2&continue=${encodeURIComponent(token)}&resourceVersion=0`)
    assert.equal(tolerated.status, 200, tolerated.text)
    assert.equal(tolerated.json.items.length, 2)
  })

  it('Table view: default columns for ConfigMap (Name, Data, Age) with rows', async () => {
    const result = await api('GET', base, undefined, {Accept: 'application/json;as=Table;g=meta.orch.io;v=v1'})
    assert.equal(result.json.kind, 'Table')
    assert.equal(result.json.apiVersion, 'meta.orch.io/v1')
    assert.deepEqual(result.json.columnDefinitions.map((c: any) => c.name), ['Name', 'Data', 'Age'])
    assert.equal(result.json.rows.length, 10)
    assert.equal(result.json.rows[0].object.kind, 'PartialObjectMetadata')
  })

  it('includeObject other than None, Metadata or Object is 400 when a Table is served (Kubernetes\' ValidateTableOptions); None leaves the row objects out', async () => {
    const table = {Accept: 'application/json;as=Table;g=meta.orch.io;v=v1'}
    const bad = await api('GET', `${base}?includeObject=Everything`, undefined, table)
    assert.equal(bad.status, 400, bad.text)
    assert.equal(bad.json.reason, 'BadRequest')
    assert.equal(bad.json.message, `Unable to convert to Table as requested: includeObject: Invalid value: "Everything": must be 'Metadata', 'Object', 'None', or empty`)
    assert.equal((await api('GET', `${base}/item-1?includeObject=Everything`, undefined, table)).status, 400)
    const none = await api('GET', `${base}?includeObject=None`, undefined, table)
    assert.equal(none.status, 200, none.text)
    assert.equal(none.json.rows[0].object, undefined)
    // without a Table the parameter means nothing, as in Kubernetes
    assert.equal((await api('GET', `${base}?includeObject=Everything`)).status, 200)
  })

  it('Table view in YAML', async () => {
    const result = await api('GET', base, undefined, {Accept: 'application/yaml;as=Table;g=meta.orch.io;v=v1'})
    assert.match(result.text, /^kind: Table$/m)
  })

  it('PartialObjectMetadata and PartialObjectMetadataList carry metadata only', async () => {
    const one = (await api('GET', `${base}/item-1`, undefined, {Accept: 'application/json;as=PartialObjectMetadata;g=meta.orch.io;v=v1'})).json
    assert.equal(one.kind, 'PartialObjectMetadata')
    assert.equal(one.metadata.name, 'item-1')
    assert.equal(one.data, undefined)
    const list = (await api('GET', base, undefined, {Accept: 'application/json;as=PartialObjectMetadataList;g=meta.orch.io;v=v1'})).json
    assert.equal(list.kind, 'PartialObjectMetadataList')
    assert.equal(list.items.length, 10)
    assert.equal(list.items[0].data, undefined)
  })

  it('a Table-only Accept on a kind without tables is 406; ",application/json" falls back to the object', async () => {
    // Status has no table: a delete response asked only as Table falls back only with application/json
    const tableOnly = await api('GET', '/api/v1/namespaces/lw/configmaps/item-1', undefined, {Accept: 'application/json;as=Table;g=other.example;v=v1'})
    assert.equal(tableOnly.status, 406)
    const fallback = await api('GET', '/api/v1/namespaces/lw/configmaps/item-1', undefined, {Accept: 'application/json;as=Table;g=other.example;v=v1, application/json'})
    assert.equal(fallback.status, 200)
    assert.equal(fallback.json.kind, 'ConfigMap')
  })

  it('gzip: a list with Accept-Encoding: gzip is answered with Content-Encoding: gzip', async () => {
    const result = await rawGet(server.url, base, {'Accept-Encoding': 'gzip'})
    assert.equal(result.headers['content-encoding'], 'gzip')
    assert.equal(result.json.kind, 'ConfigMapList')
  })

  it('watch streams one JSON event per line: ADDED, MODIFIED, DELETED after the given resourceVersion', async () => {
    const rv = (await api('GET', base)).json.metadata.resourceVersion
    const stream = await openWatch(server.url, `${base}?watch=1&resourceVersion=${rv}`)
    assert.equal(stream.status, 200)
    assert.equal(stream.headers['transfer-encoding'], 'chunked')
    const created = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'watched'}})).json
    await api('PUT', `${base}/watched`, {...created, data: {x: 'y'}})
    await api('DELETE', `${base}/watched`)
    const events = await stream.waitFor(3)
    stream.close()
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED', 'DELETED'])
    assert.equal(events[1].object.data.x, 'y')
  })

  it('a watch of Tables: the first event carries the column definitions, later ones columnDefinitions null (NoHeaders after the first, as the watch encoder)', async () => {
    const rv = (await api('GET', base)).json.metadata.resourceVersion
    const stream = await openWatch(server.url, `${base}?watch=1&resourceVersion=${rv}`, {Accept: 'application/json;as=Table;g=meta.orch.io;v=v1'})
    const created = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'tabled'}})).json
    await api('PUT', `${base}/tabled`, {...created, data: {x: 'y'}})
    await api('DELETE', `${base}/tabled`)
    const events = await stream.waitFor(3)
    stream.close()
    assert.deepEqual(events.map((e) => [e.type, e.object.kind]), [['ADDED', 'Table'], ['MODIFIED', 'Table'], ['DELETED', 'Table']])
    assert.ok(Array.isArray(events[0].object.columnDefinitions) && events[0].object.columnDefinitions.length > 0)
    assert.equal(events[1].object.columnDefinitions, null)
    assert.equal(events[2].object.columnDefinitions, null)
    assert.equal(events[2].object.rows[0].cells[0], 'tabled')
  })

  it('a DELETED event carries the last state at the deletion\'s resourceVersion, so a watch resumed from it does not see the deletion again', async () => {
    const rv = (await api('GET', base)).json.metadata.resourceVersion
    const created = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'deleted-rv'}, data: {last: 'state'}})).json
    const stream = await openWatch(server.url, `${base}?watch=1&resourceVersion=${rv}`)
    await api('DELETE', `${base}/deleted-rv`)
    const [, deleted] = await stream.waitFor(2)
    stream.close()
    assert.equal(deleted.type, 'DELETED')
    assert.equal(deleted.object.data.last, 'state')
    assert.ok(Number(deleted.object.metadata.resourceVersion) > Number(created.metadata.resourceVersion), 'the deletion\'s revision, not the object\'s last one')
    const marker = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'after-deleted-rv'}})).json
    const resumed = await openWatch(server.url, `${base}?watch=1&resourceVersion=${deleted.object.metadata.resourceVersion}`)
    const [first] = await resumed.waitFor(1)
    resumed.close()
    assert.equal(first.object.metadata.name, marker.metadata.name, 'the first event after the deletion, not the deletion again')
  })

  it('watch resumes from a resourceVersion: events after it are replayed', async () => {
    const rv = (await api('GET', base)).json.metadata.resourceVersion
    await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'resume-a'}})
    await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'resume-b'}})
    const stream = await openWatch(server.url, `${base}?watch=1&resourceVersion=${rv}`)
    const events = await stream.waitFor(2)
    stream.close()
    assert.deepEqual(events.map((e) => e.object.metadata.name), ['resume-a', 'resume-b'])
  })

  it('selectors apply to watches: an object leaving the selection is DELETED for that watcher', async () => {
    const rv = (await api('GET', base)).json.metadata.resourceVersion
    const stream = await openWatch(server.url, `${base}?watch=1&resourceVersion=${rv}&labelSelector=team%3Dblue`)
    const created = (await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'sel', labels: {team: 'blue'}}})).json
    await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'sel-red', labels: {team: 'red'}}})
    const moved = (await api('PUT', `${base}/sel`, {...created, metadata: {...created.metadata, labels: {team: 'red'}}})).json
    const events = await stream.waitFor(2)
    stream.close()
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'sel'], ['DELETED', 'sel']])
    // "the DELETED event carries the object as the watcher selected it, at the change's
    // resourceVersion" (cacheWatcher.convertToWatchEvent)
    assert.deepEqual(events[1].object.metadata.labels, {team: 'blue'})
    assert.equal(events[1].object.metadata.resourceVersion, moved.metadata.resourceVersion)
  })

  it('sendInitialEvents=true with NotOlderThan: initial ADDED events, then a BOOKMARK annotated orch.io/initial-events-end', async () => {
    const stream = await openWatch(server.url, `${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=parity`)
    const events = await stream.waitFor(11)
    stream.close()
    assert.equal(events.slice(0, 10).every((e) => e.type === 'ADDED'), true)
    assert.equal(events[10].type, 'BOOKMARK')
    assert.equal(events[10].object.metadata.annotations['orch.io/initial-events-end'], 'true')
    assert.match(events[10].object.metadata.resourceVersion, /^\d+$/)
  })

  it('sendInitialEvents without resourceVersionMatch=NotOlderThan is 422', async () => {
    const result = await api('GET', `${base}?watch=1&sendInitialEvents=true`)
    assert.equal(result.status, 422, result.text)
  })

  it('allowWatchBookmarks: a BOOKMARK 2 s before timeoutSeconds ends the watch, at the latest resourceVersion, even when nothing it selects changed (the cacher\'s nextBookmarkTime)', async () => {
    const listed = (await api('GET', base)).json.metadata.resourceVersion
    // a change the watch does not select moves the store past the listed version
    const other = await api('POST', base, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'bookmark-mover', labels: {unselected: 'yes'}}})
    assert.equal(other.status, 201, other.text)
    const stream = await openWatch(server.url, `${base}?watch=1&allowWatchBookmarks=true&timeoutSeconds=3&labelSelector=nothing-has-this&resourceVersion=${listed}`)
    await stream.ended
    assert.deepEqual(stream.events.map((e: any) => e.type), ['BOOKMARK'])
    assert.equal(stream.events[0].object.metadata.resourceVersion, other.json.metadata.resourceVersion)
  })

  it('timeoutSeconds ends the stream', async () => {
    const stream = await openWatch(server.url, `${base}?watch=1&timeoutSeconds=1&resourceVersion=${(await api('GET', base)).json.metadata.resourceVersion}`)
    await stream.ended
  })
})

describe('API core: watch history', () => {
  it('a watch from a version older than the history window is 410 Gone (reason Expired): one ERROR event on a 200 stream, as Kubernetes\' cacher answers it', async () => {
    const server = await startOrchServer(['--watch-history', '300ms'])
    try {
      const rv = (await call(server.url, 'GET', '/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion
      await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'old-news'}})
      // the rule is about elapsed time: let the window pass
      await new Promise((resolve) => setTimeout(resolve, 400))
      await call(server.url, 'POST', '/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'new-news'}})
      const result = await call(server.url, 'GET', `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}`)
      assert.equal(result.status, 200, result.text)
      assert.equal(result.json.type, 'ERROR')
      assert.equal(result.json.object.code, 410)
      assert.equal(result.json.object.reason, 'Expired')
      assert.match(result.json.object.message, /^too old resource version: \d+ \(\d+\)$/)
    } finally {
      await server.cleanup()
    }
  })
})

describe('API core: feature gate WatchList', () => {
  it('with --feature-gates WatchList=false, a watch with sendInitialEvents is 422 (sendInitialEvents is forbidden unless the WatchList gate is enabled); plain watches still work', async () => {
    const server = await startOrchServer(['--feature-gates', 'WatchList=false'])
    try {
      const path = '/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true'
      const result = await call(server.url, 'GET', path)
      assert.equal(result.status, 422, result.text)
      assert.match(result.json.message, /sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled/)
      const rv = (await call(server.url, 'GET', '/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion
      const stream = await openWatch(server.url, `/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&resourceVersion=${rv}`)
      await stream.ended
    } finally {
      await server.cleanup()
    }
  })
})
