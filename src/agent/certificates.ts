// The agent's certificates, as the kubelet's TLS bootstrap and certificate manager:
//  - client: with a bootstrap kubeconfig (a bootstrap token) and no usable --kubeconfig, the agent
//    creates a CSR for signer orch.io/apiserver-client-agent (CN system:node:<name>, O system:nodes),
//    waits until it is issued, writes `{certDir}/agent-client-current.pem` (certificate + key, 0600)
//    and a kubeconfig at --kubeconfig naming that file; it asks again (with its own identity) when
//    70–90% of the certificate's life has passed, and swaps its client to the new one;
//  - serving: a CSR for orch.io/agent-serving (CN system:node:<name>, O system:nodes, SANs = the
//    node's hostname and addresses). Those are not approved automatically (as in Kubernetes): until
//    one is issued the agent serves with a self-signed certificate, which is also what it uses
//    standalone. Issued serving certificates land in `{certDir}/agent-server-current.pem`.
import {randomBytes} from 'node:crypto'
import {chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {SIGNER_AGENT_CLIENT} from '../api/certificates/certificatesigningrequest.js'
import type {AnyObject} from '../api/types.js'
import {RestClient, configFromKubeconfig, kubeconfigDocument, loadKubeconfig, watchEvents, type ClientConfig} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {createCA, createCSR, createSignedCert, decodePEM, encodePEM, parseCertificate} from '../machinery/pki.js'
import {dumpYaml} from '../machinery/go-yaml.js'

export const CSRS = {group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests'}

/** Writes a file 0600 atomically (temp file + rename). */
export function writePrivate(path: string, content: string): void {
  mkdirSync(dirname(path), {recursive: true, mode: 0o700})
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(temporary, content, {mode: 0o600})
  chmodSync(temporary, 0o600)
  renameSync(temporary, path)
}

/** The certificate and key of a combined PEM file, if it holds both and the certificate is still valid. */
export function readPair(path: string, now = new Date()): {certPem: string; keyPem: string; notBefore: Date; notAfter: Date} | undefined {
  if (!existsSync(path)) return undefined
  try {
    const blocks = decodePEM(readFileSync(path, 'utf8'))
    const cert = blocks.find((b) => b.type === 'CERTIFICATE')
    const key = blocks.find((b) => b.type.endsWith('PRIVATE KEY'))
    if (!cert || !key) return undefined
    const certPem = encodePEM(cert.bytes, 'CERTIFICATE')
    const parsed = parseCertificate(certPem)
    if (parsed.notAfter <= now) return undefined
    return {certPem, keyPem: encodePEM(key.bytes, key.type), notBefore: parsed.notBefore, notAfter: parsed.notAfter}
  } catch {
    return undefined
  }
}

/** When to renew: a random point between 70% and 90% of the certificate's life (the kubelet's jitter). */
export function renewalTime(notBefore: Date, notAfter: Date, random = Math.random()): Date {
  const life = notAfter.getTime() - notBefore.getTime()
  return new Date(notBefore.getTime() + life * (0.7 + 0.2 * random))
}

export interface RequestCertificateOptions {
  client: RestClient
  signerName: string
  commonName: string
  organizations: string[]
  usages: string[]
  dnsNames?: string[]
  ipAddresses?: string[]
  /** stop waiting after this long (default: forever) */
  timeoutMs?: number
  signal?: AbortSignal
}

/** Creates a CSR and waits (watching it) until the signer issues it; rejects when it is denied or failed. */
export async function requestCertificate(options: RequestCertificateOptions): Promise<{certPem: string; keyPem: string}> {
  const {csrPem, keyPem} = await createCSR({
    commonName: options.commonName,
    organizations: options.organizations,
    dnsNames: options.dnsNames,
    ipAddresses: options.ipAddresses,
  })
  const created = await options.client.create<AnyObject>(CSRS, {
    apiVersion: 'certificates.orch.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: {generateName: 'csr-'},
    spec: {request: Buffer.from(csrPem).toString('base64'), signerName: options.signerName, usages: options.usages},
  })
  const name = created.metadata!.name as string
  const issued = (csr: AnyObject): string | undefined => {
    const conditions: AnyObject[] = csr.status?.conditions ?? []
    const refusal = conditions.find((c) => (c.type === 'Denied' || c.type === 'Failed') && c.status !== 'False')
    if (refusal) throw new Error(`certificate request ${name} was ${refusal.type.toLowerCase()}: ${refusal.message ?? refusal.reason ?? ''}`)
    return csr.status?.certificate ? Buffer.from(csr.status.certificate, 'base64').toString('utf8') : undefined
  }
  const controller = new AbortController()
  options.signal?.addEventListener('abort', () => controller.abort(), {once: true})
  const timer = options.timeoutMs ? setTimeout(() => controller.abort(), options.timeoutMs) : undefined
  try {
    let resourceVersion = created.metadata!.resourceVersion as string
    let certPem = issued(created)
    while (!certPem) {
      if (controller.signal.aborted) throw new Error(`certificate request ${name} was not issued in time`)
      for await (const event of watchEvents<AnyObject>(
        options.client,
        CSRS,
        {fieldSelector: `metadata.name=${name}`, resourceVersion, timeoutSeconds: 60},
        controller.signal,
      )) {
        resourceVersion = event.object?.metadata?.resourceVersion ?? resourceVersion
        if (event.type === 'DELETED') throw new Error(`certificate request ${name} was deleted`)
        if (event.type === 'ADDED' || event.type === 'MODIFIED') certPem = issued(event.object)
        if (certPem) break
      }
    }
    return {certPem, keyPem}
  } finally {
    if (timer) clearTimeout(timer)
  }
}

/** A kubeconfig (YAML) for the agent: server + CA of the cluster, client certificate and key from one file. */
export function agentKubeconfig(server: string, caPem: string | undefined, pairPath: string): string {
  return dumpYaml(
    kubeconfigDocument({
      server,
      caPem,
      credentials: {'client-certificate': pairPath, 'client-key': pairPath},
      cluster: 'default-cluster',
      user: 'default-auth',
      context: 'default-context',
    }),
  )
}

export function clientConfigFrom(path: string): ClientConfig {
  return configFromKubeconfig(loadKubeconfig(resolve(path)))
}

/** A self-signed serving certificate (its own throw-away CA) for the node's names. */
export async function selfSignedServing(nodeName: string, dnsNames: string[], ipAddresses: string[]): Promise<{certPem: string; keyPem: string}> {
  const ca = await createCA(`${nodeName}-ca@${Math.floor(Date.now() / 1000)}`, 365)
  return createSignedCert({
    ca,
    commonName: `${nodeName}@${Math.floor(Date.now() / 1000)}`,
    usages: ['digital signature', 'key encipherment', 'server auth'],
    dnsNames,
    ipAddresses,
    validitySeconds: 365 * 86400,
  })
}

export interface ClientCertificateOptions {
  nodeName: string
  certDir: string
  kubeconfigPath?: string
  bootstrapKubeconfigPath?: string
  rotate: boolean
  logger: Logger
  /** called with a new client after a rotation */
  onRotated?: (config: ClientConfig) => void
}

export const CLIENT_PAIR_FILE = 'agent-client-current.pem'
export const SERVER_PAIR_FILE = 'agent-server-current.pem'

/**
 * The client configuration the agent talks to the server with: the --kubeconfig when it works (its
 * certificate still valid), else a certificate obtained with the bootstrap kubeconfig. Undefined when
 * neither is given: standalone mode. A --kubeconfig that does not exist, without a bootstrap
 * kubeconfig to write it from, is an error.
 */
export class ClientCertificateManager {
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  config: ClientConfig | undefined

  constructor(private readonly options: ClientCertificateOptions) {}

  private get pairPath(): string {
    return join(this.options.certDir, CLIENT_PAIR_FILE)
  }

  async load(signal?: AbortSignal): Promise<ClientConfig | undefined> {
    const {kubeconfigPath, bootstrapKubeconfigPath, logger} = this.options
    if (kubeconfigPath && existsSync(kubeconfigPath)) {
      const config = clientConfigFrom(kubeconfigPath)
      const certValid = !config.cert || parseCertificate(config.cert.toString('utf8')).notAfter > new Date()
      if (certValid || !bootstrapKubeconfigPath) {
        this.config = config
        this.scheduleRotation()
        return config
      }
      logger.info('the kubeconfig certificate has expired: bootstrapping again', {kubeconfig: kubeconfigPath})
    }
    if (!bootstrapKubeconfigPath) {
      // the kubelet is standalone only without --kubeconfig: a kubeconfig named but missing (a typo)
      // fails its client loading (bootstrap.LoadClientConfig) instead of quietly running standalone
      if (kubeconfigPath) throw new Error(`unable to load kubeconfig: stat ${kubeconfigPath}: no such file or directory`)
      return undefined
    }
    if (!kubeconfigPath) throw new Error('--bootstrap-kubeconfig needs --kubeconfig: where to write the kubeconfig it obtains')
    const bootstrap = clientConfigFrom(bootstrapKubeconfigPath)
    const existing = readPair(this.pairPath)
    let pair: {certPem: string; keyPem: string}
    if (existing) {
      pair = existing
    } else {
      logger.info('requesting a client certificate with the bootstrap credentials', {signer: SIGNER_AGENT_CLIENT})
      const client = new RestClient(bootstrap)
      try {
        pair = await this.request(client, signal)
      } finally {
        await client.close()
      }
    }
    writePrivate(this.pairPath, pair.certPem + pair.keyPem)
    const ca = bootstrap.ca?.toString('utf8')
    writePrivate(kubeconfigPath, agentKubeconfig(bootstrap.server, ca, this.pairPath))
    logger.info('wrote the agent kubeconfig', {kubeconfig: kubeconfigPath, certificate: this.pairPath})
    this.config = clientConfigFrom(kubeconfigPath)
    this.scheduleRotation()
    return this.config
  }

  private request(client: RestClient, signal?: AbortSignal): Promise<{certPem: string; keyPem: string}> {
    return requestCertificate({
      client,
      signerName: SIGNER_AGENT_CLIENT,
      commonName: `system:node:${this.options.nodeName}`,
      organizations: ['system:nodes'],
      usages: ['digital signature', 'client auth'],
      signal,
    })
  }

  /** Renews when 70–90% of the certificate's life has passed (only for certificates in the cert dir). */
  private scheduleRotation(): void {
    if (!this.options.rotate || this.stopped || !this.config?.cert) return
    const {notBefore, notAfter} = parseCertificate(this.config.cert.toString('utf8'))
    const delay = Math.max(0, renewalTime(notBefore, notAfter).getTime() - Date.now())
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.rotate(), Math.min(delay, 2 ** 31 - 1))
    this.timer.unref()
  }

  async rotate(): Promise<void> {
    if (this.stopped || !this.config) return
    let client: RestClient | undefined
    try {
      // (inside the try: a client refuses unusable TLS material in its constructor)
      client = new RestClient(this.config)
      const pair = await this.request(client)
      writePrivate(this.pairPath, pair.certPem + pair.keyPem)
      if (this.options.kubeconfigPath) {
        const kubeconfig = clientConfigFrom(this.options.kubeconfigPath)
        const usesPairFile = readFileSync(this.options.kubeconfigPath, 'utf8').includes(this.pairPath)
        if (!usesPairFile) writePrivate(this.options.kubeconfigPath, agentKubeconfig(kubeconfig.server, kubeconfig.ca?.toString('utf8'), this.pairPath))
      }
      this.config = {...this.config, cert: Buffer.from(pair.certPem), key: Buffer.from(pair.keyPem)}
      this.options.logger.info('rotated the client certificate', {notAfter: parseCertificate(pair.certPem).notAfter.toISOString()})
      this.options.onRotated?.(this.config)
      this.scheduleRotation()
    } catch (error) {
      this.options.logger.warn('client certificate rotation failed; retrying in 30 s', {error: (error as Error).message})
      this.timer = setTimeout(() => void this.rotate(), 30_000)
      this.timer.unref()
    } finally {
      await client?.close()
    }
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
  }
}
