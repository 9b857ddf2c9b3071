// `orch config bootstrap-kubeconfig --token ID.SECRET`: a kubeconfig for joining an agent — the server
// and CA of the current kubeconfig (or --server), and the bootstrap token as the user's credential.
import {kubeconfigDocument, resolveClientConfig} from '../client/index.js'
import type {ConnectOptions} from './connect.js'
import {fail} from './fail.js'
import {dumpYaml} from '../machinery/go-yaml.js'

const BOOTSTRAP_TOKEN = /^[a-z0-9]{6}\.[a-z0-9]{16}$/

export function bootstrapKubeconfig(server: string, ca: Buffer | undefined, token: string): string {
  return dumpYaml(
    kubeconfigDocument({server, caPem: ca?.toString('utf8'), credentials: {token}, cluster: 'orch', user: 'agent-bootstrap', context: 'agent-bootstrap'}),
  )
}

export function runBootstrapKubeconfig(options: ConnectOptions & {token: string}): void {
  if (!BOOTSTRAP_TOKEN.test(options.token)) fail(`--token must be a bootstrap token of the form [a-z0-9]{6}.[a-z0-9]{16}`)
  let config
  try {
    config = resolveClientConfig({server: options.server, kubeconfig: options.kubeconfig, context: options.context})
  } catch (error) {
    fail((error as Error).message)
  }
  process.stdout.write(bootstrapKubeconfig(config.server, config.ca, options.token))
}
