import {after, before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import * as yaml from 'js-yaml'
import {defaultKubeconfigPath, loadKubeconfig, resolveClientConfig} from '../../src/client/index.js'

let root: string

function kubeconfig(server: string, extra: {cluster?: object; user?: object; context?: object; current?: string | null} = {}): string {
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {name: 'main', cluster: {server, ...extra.cluster}},
      {name: 'other', cluster: {server: 'https://other.example:6443'}},
    ],
    users: [
      {name: 'admin', user: {token: 'main-token', ...extra.user}},
      {name: 'viewer', user: {token: 'viewer-token'}},
    ],
    contexts: [
      {name: 'main', context: {cluster: 'main', user: 'admin', ...extra.context}},
      {name: 'other', context: {cluster: 'other', user: 'viewer', namespace: 'team-b'}},
    ],
    'current-context': extra.current === null ? undefined : (extra.current ?? 'main'),
  }, {skipInvalid: true})
}

function write(path: string, text: string): string {
  mkdirSync(join(path, '..'), {recursive: true})
  writeFileSync(path, text)
  return path
}

function message(fn: () => unknown): string {
  try {
    fn()
  } catch (e) {
    return (e as Error).message
  }
  assert.fail('expected an error')
}

before(() => {
  root = mkdtempSync(join(tmpdir(), 'orch-kubeconfig-'))
})

after(() => {
  rmSync(root, {recursive: true, force: true})
})

describe('kubeconfig resolution order', () => {
  it('--kubeconfig wins over $KUBECONFIG and ~/.orch/config', () => {
    const home = join(root, 'order1')
    write(defaultKubeconfigPath(home), kubeconfig('https://home:1'))
    const env = write(join(root, 'order1-env'), kubeconfig('https://env:1'))
    const flag = write(join(root, 'order1-flag'), kubeconfig('https://flag:1'))
    const config = resolveClientConfig({kubeconfig: flag, env: {KUBECONFIG: env}, home})
    assert.equal(config.server, 'https://flag:1')
  })

  it('$KUBECONFIG wins over ~/.orch/config; of two files naming the same cluster the first wins', () => {
    const home = join(root, 'order2')
    write(defaultKubeconfigPath(home), kubeconfig('https://home:1'))
    const first = write(join(root, 'order2-a'), kubeconfig('https://env-first:1'))
    const second = write(join(root, 'order2-b'), kubeconfig('https://env-second:1'))
    const config = resolveClientConfig({env: {KUBECONFIG: `${first}:${second}`}, home})
    assert.equal(config.server, 'https://env-first:1')
  })

  it('"$KUBECONFIG with several files separated by \':\' as kubectl merges them": entries of every file, current-context from the first that sets it', () => {
    const home = join(root, 'merge1')
    write(defaultKubeconfigPath(home), kubeconfig('https://home:1'))
    const clusters = write(
      join(root, 'merge1', 'clusters'),
      yaml.dump({apiVersion: 'v1', kind: 'Config', clusters: [{name: 'prod', cluster: {server: 'https://prod:1', 'certificate-authority': 'ca.crt'}}]}),
    )
    write(join(root, 'merge1', 'ca.crt'), 'CA-PEM')
    const contexts = write(
      join(root, 'merge1', 'sub', 'contexts'),
      yaml.dump({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{name: 'prod', cluster: {server: 'https://shadowed:1'}}],
        users: [{name: 'ops', user: {tokenFile: 'token'}}],
        contexts: [{name: 'prod', context: {cluster: 'prod', user: 'ops', namespace: 'shop'}}],
        'current-context': 'prod',
      }),
    )
    write(join(root, 'merge1', 'sub', 'token'), 'ops-token\n')
    const config = resolveClientConfig({env: {KUBECONFIG: `${join(root, 'merge1', 'missing')}:${clusters}:${contexts}`}, home})
    assert.equal(config.server, 'https://prod:1')
    assert.equal(config.namespace, 'shop')
    assert.equal(config.token, 'ops-token')
    assert.equal(config.ca?.toString(), 'CA-PEM')
  })

  it('$KUBECONFIG: a context of the second file can be chosen with --context; files that do not exist are skipped', () => {
    const home = join(root, 'merge2')
    const first = write(join(root, 'merge2', 'a'), kubeconfig('https://a:1'))
    const second = write(
      join(root, 'merge2', 'b'),
      yaml.dump({
        clusters: [{name: 'b', cluster: {server: 'https://b:1'}}],
        contexts: [{name: 'b', context: {cluster: 'b'}}],
        'current-context': 'b',
      }),
    )
    const env = {KUBECONFIG: `/nonexistent/one:${first}::${second}:${first}`}
    assert.equal(resolveClientConfig({env, home}).server, 'https://a:1')
    assert.equal(resolveClientConfig({env, home, context: 'b'}).server, 'https://b:1')
    assert.equal(message(() => resolveClientConfig({env, home, context: 'c'})), `context "c" not found in kubeconfig ${first}:${second}`)
  })

  it('$KUBECONFIG: none of its files existing says so in one line; a malformed one names its file', () => {
    const home = join(root, 'merge3')
    const gone = `${join(root, 'merge3', 'x')}:${join(root, 'merge3', 'y')}`
    assert.equal(message(() => resolveClientConfig({env: {KUBECONFIG: gone}, home})), `no server to talk to: kubeconfig ${gone} not found (pass --server or --kubeconfig)`)
    const good = write(join(root, 'merge3', 'good'), kubeconfig('https://a:1'))
    const bad = write(join(root, 'merge3', 'bad'), 'clusters: [\n')
    assert.match(message(() => resolveClientConfig({env: {KUBECONFIG: `${good}:${bad}`}, home})), new RegExp(`^kubeconfig ${bad} is not valid YAML: `))
  })

  it('without flag or $KUBECONFIG, ~/.orch/config is read', () => {
    const home = join(root, 'order3')
    write(defaultKubeconfigPath(home), kubeconfig('https://home:1'))
    assert.equal(defaultKubeconfigPath(home), join(home, '.orch', 'config'))
    const config = resolveClientConfig({env: {}, home})
    assert.equal(config.server, 'https://home:1')
    assert.equal(config.token, 'main-token')
  })

  it('--server overrides the kubeconfig server but keeps its credentials', () => {
    const path = write(join(root, 'server-flag'), kubeconfig('https://file:1'))
    const config = resolveClientConfig({server: 'https://flag:2', kubeconfig: path, env: {}})
    assert.equal(config.server, 'https://flag:2')
    assert.equal(config.token, 'main-token')
  })

  it('--server alone is enough when no kubeconfig exists', () => {
    const config = resolveClientConfig({server: 'http://127.0.0.1:8080', env: {}, home: join(root, 'nohome')})
    assert.deepEqual(config, {server: 'http://127.0.0.1:8080', namespace: 'default'})
  })

  it('--context chooses another context than current-context', () => {
    const path = write(join(root, 'ctx'), kubeconfig('https://main:1'))
    const config = resolveClientConfig({kubeconfig: path, context: 'other', env: {}})
    assert.equal(config.server, 'https://other.example:6443')
    assert.equal(config.token, 'viewer-token')
  })

  it('namespace: --namespace, else the context namespace, else default', () => {
    const path = write(join(root, 'ns'), kubeconfig('https://main:1', {context: {namespace: 'team-a'}}))
    assert.equal(resolveClientConfig({kubeconfig: path, env: {}}).namespace, 'team-a')
    assert.equal(resolveClientConfig({kubeconfig: path, namespace: 'flag-ns', env: {}}).namespace, 'flag-ns')
    const plain = write(join(root, 'ns-plain'), kubeconfig('https://main:1'))
    assert.equal(resolveClientConfig({kubeconfig: plain, env: {}}).namespace, 'default')
  })
})

describe('kubeconfig files and credentials', () => {
  it('relative certificate, key and token file paths resolve against the kubeconfig directory', () => {
    const dir = join(root, 'relative', 'conf')
    write(join(dir, 'pki', 'ca.crt'), 'CA PEM')
    write(join(dir, 'pki', 'admin.crt'), 'CERT PEM')
    write(join(dir, 'pki', 'admin.key'), 'KEY PEM')
    write(join(dir, 'token'), 'file-token\n')
    const path = write(
      join(dir, 'admin.kubeconfig'),
      kubeconfig('https://main:1', {
        cluster: {'certificate-authority': 'pki/ca.crt'},
        user: {'client-certificate': 'pki/admin.crt', 'client-key': './pki/admin.key', token: undefined, tokenFile: 'token'},
      }),
    )
    // read from another working directory: the paths must not depend on it
    const config = resolveClientConfig({kubeconfig: path, env: {}})
    assert.equal(config.ca?.toString(), 'CA PEM')
    assert.equal(config.cert?.toString(), 'CERT PEM')
    assert.equal(config.key?.toString(), 'KEY PEM')
    assert.equal(config.token, 'file-token')
  })

  it('a user\'s as, as-uid, as-groups and as-user-extra impersonate, as kubectl reads them; groups without as is an error naming the user', () => {
    const path = write(
      join(root, 'impersonating.kubeconfig'),
      kubeconfig('https://main:1', {user: {as: 'jane', 'as-uid': 'u-1', 'as-groups': ['devs', 'ops'], 'as-user-extra': {scopes: ['view']}}}),
    )
    assert.deepEqual(resolveClientConfig({kubeconfig: path, env: {}}).impersonate, {user: 'jane', uid: 'u-1', groups: ['devs', 'ops'], extra: {scopes: ['view']}})
    const groupsOnly = write(join(root, 'groups-only.kubeconfig'), kubeconfig('https://main:1', {user: {'as-groups': ['devs']}}))
    assert.match(message(() => resolveClientConfig({kubeconfig: groupsOnly, env: {}})), /requesting uid, groups or user-extra for admin without impersonating a user/)
  })

  it('*-data fields are base64 and win over file paths; insecure-skip-tls-verify is carried', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64')
    const path = write(
      join(root, 'data.kubeconfig'),
      kubeconfig('https://main:1', {
        cluster: {'certificate-authority-data': b64('CA DATA'), 'certificate-authority': 'missing.crt', 'insecure-skip-tls-verify': true},
        user: {'client-certificate-data': b64('CERT DATA'), 'client-key-data': b64('KEY DATA')},
      }),
    )
    const config = resolveClientConfig({kubeconfig: path, env: {}})
    assert.equal(config.ca?.toString(), 'CA DATA')
    assert.equal(config.cert?.toString(), 'CERT DATA')
    assert.equal(config.key?.toString(), 'KEY DATA')
    assert.equal(config.insecureSkipTLSVerify, true)
  })

  it('loadKubeconfig keeps the absolute path and current-context', () => {
    const path = write(join(root, 'load.kubeconfig'), kubeconfig('https://main:1'))
    const parsed = loadKubeconfig(path)
    assert.equal(parsed.path, path)
    assert.equal(parsed.currentContext, 'main')
    assert.deepEqual([...parsed.contexts.keys()], ['main', 'other'])
  })
})

describe('kubeconfig errors are one clear line', () => {
  it('a missing --kubeconfig file names the file', () => {
    const path = join(root, 'does-not-exist')
    const text = message(() => resolveClientConfig({kubeconfig: path, env: {}}))
    assert.equal(text, `kubeconfig ${path} not found`)
  })

  it('a missing --kubeconfig file is an error even with --server', () => {
    const path = join(root, 'does-not-exist-either')
    assert.equal(message(() => resolveClientConfig({server: 'https://x:1', kubeconfig: path, env: {}})), `kubeconfig ${path} not found`)
  })

  it('no --server and no kubeconfig anywhere says what to pass', () => {
    const home = join(root, 'empty-home')
    const text = message(() => resolveClientConfig({env: {}, home}))
    assert.equal(text, `no server to talk to: kubeconfig ${defaultKubeconfigPath(home)} not found (pass --server or --kubeconfig)`)
  })

  it('an unknown context names the context and the file', () => {
    const path = write(join(root, 'unknown-ctx'), kubeconfig('https://main:1'))
    assert.equal(message(() => resolveClientConfig({kubeconfig: path, context: 'nope', env: {}})), `context "nope" not found in kubeconfig ${path}`)
  })

  it('an unknown current-context is reported the same way', () => {
    const path = write(join(root, 'unknown-current'), kubeconfig('https://main:1', {current: 'gone'}))
    assert.equal(message(() => resolveClientConfig({kubeconfig: path, env: {}})), `context "gone" not found in kubeconfig ${path}`)
  })

  it('a missing referenced certificate names the field and the resolved path', () => {
    const path = write(join(root, 'missing-ca', 'config'), kubeconfig('https://main:1', {cluster: {'certificate-authority': 'ca.crt'}}))
    const text = message(() => resolveClientConfig({kubeconfig: path, env: {}}))
    assert.equal(text, `kubeconfig ${path}: certificate-authority ${join(root, 'missing-ca', 'ca.crt')} not found`)
  })

  it('invalid YAML is one line', () => {
    const path = write(join(root, 'bad.yaml'), 'clusters: [\n  - {name: a\n')
    const text = message(() => resolveClientConfig({kubeconfig: path, env: {}}))
    assert.match(text, new RegExp(`^kubeconfig ${path} is not valid YAML: `))
    assert.ok(!text.includes('\n'), text)
  })
})
