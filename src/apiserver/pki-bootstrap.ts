// The server's PKI on disk. On the first start in a data dir `ensureServerPKI` creates <dataDir>/pki/:
//   ca.crt, ca.key                the cluster CA: signs the serving certificate and approved CSRs
//   client-ca.crt, client-ca.key  the CA client certificates are verified against. Created as a copy
//                                 of the cluster CA (one CA, as kubeadm does), so certificates the CSR
//                                 signer issues for clients authenticate; replace the two files with
//                                 another CA to split them (admin.crt is then re-issued by it).
//   apiserver.crt, apiserver.key  the serving certificate: the listen addresses, localhost, 127.0.0.1
//                                 and --tls-san names
//   admin.crt, admin.key          CN orch-admin, O system:masters, client auth
// Keys are written 0600 (the directory 0700), certificates 0644, each file atomically. Later starts
// reuse the files. The serving certificate is re-issued when its SANs differ from the wanted ones, when
// it no longer verifies against ca.crt (expired, or a new CA) or expires within 30 days; admin.crt
// likewise against client-ca.crt. --tls-cert-file/--tls-private-key-file and --client-ca-file replace
// the generated serving pair and client CA.
import {randomBytes} from 'node:crypto'
import {chmod, mkdir, readFile, rename, rm, stat, writeFile} from 'node:fs/promises'
import {isIP} from 'node:net'
import {dirname, join} from 'node:path'
import {kubeconfigDocument as clientKubeconfigDocument} from '../client/index.js'
import {MASTERS_GROUP} from './authz/defaults.js'
import {dumpYaml} from '../machinery/go-yaml.js'
import {
  canonicalIP,
  createCA,
  createSignedCert,
  decodePEM,
  keyMatchesCertificate,
  parseCertificate,
  verifyCertificate,
  type CertKeyPair,
} from '../machinery/pki.js'

export const CA_COMMON_NAME = 'orch-ca'
export const SERVING_COMMON_NAME = 'orch-apiserver'
export const ADMIN_USER = 'orch-admin'
/** the admin certificate's group: allowed everything (the privileged-group authorizer) */
export const ADMIN_GROUP = MASTERS_GROUP
const CA_VALIDITY_DAYS = 3650
const LEAF_VALIDITY_SECONDS = 365 * 86400
const RENEW_BEFORE_MS = 30 * 86400_000

export interface ServerPKIOptions {
  dataDir: string
  /** IPs and host names the server listens on / is reached at; wildcard addresses are skipped */
  serverAddresses: readonly string[]
  /** --tls-san: extra IPs and DNS names for the serving certificate */
  tlsSANs?: readonly string[]
  /** --tls-cert-file and --tls-private-key-file: serve with these instead (both or neither) */
  tlsCertFile?: string
  tlsKeyFile?: string
  /** --client-ca-file: verify client certificates against this bundle instead of client-ca.crt */
  clientCAFile?: string
  /** clock, for tests */
  now?: Date
}

export interface ServerPKIPaths {
  dir: string
  caCert: string
  caKey: string
  clientCACert: string
  clientCAKey: string
  servingCert: string
  servingKey: string
  adminCert: string
  adminKey: string
}

export interface ServerPKI {
  /** the cluster CA: the CSR signer's CA */
  ca: CertKeyPair
  /** client certificates are verified against certPem (a bundle); keyPem unless --client-ca-file */
  clientCA: {certPem: string; keyPem?: string}
  /** the serving certificate (PEM, may be a chain) and key */
  serving: {cert: string; key: string}
  /** what clients trust the serving certificate with: ca.certPem, or undefined with --tls-cert-file */
  servingCA?: string
  admin: {cert: string; key: string}
  paths: ServerPKIPaths
  /** files created or replaced by this call, by path */
  generated: string[]
  /** things the operator should know (e.g. admin.crt not accepted under --client-ca-file) */
  warnings: string[]
}

export function pkiPaths(dataDir: string): ServerPKIPaths {
  const dir = join(dataDir, 'pki')
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    clientCACert: join(dir, 'client-ca.crt'),
    clientCAKey: join(dir, 'client-ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
  }
}

/** Writes `data` to `path` through a temporary file and a rename, with `mode` whatever the umask. */
export async function writeFileAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`
  try {
    await writeFile(tmp, data, {mode})
    await chmod(tmp, mode)
    await rename(tmp, path)
  } catch (e) {
    await rm(tmp, {force: true})
    throw e
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new Error(`cannot read ${path}: ${(e as Error).message}`)
  }
}

async function readRequired(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (e) {
    throw new Error(`${flag} ${path}: ${(e as Error).message}`)
  }
}

/** Reads a certificate/key pair; undefined when neither file exists, an Error when one is missing. */
async function loadPair(certPath: string, keyPath: string): Promise<CertKeyPair | undefined> {
  const [certPem, keyPem] = await Promise.all([readIfExists(certPath), readIfExists(keyPath)])
  if (certPem === undefined && keyPem === undefined) return undefined
  if (certPem === undefined || keyPem === undefined) {
    throw new Error(`${certPem === undefined ? certPath : keyPath} is missing while ${certPem === undefined ? keyPath : certPath} exists; restore it or remove both`)
  }
  if (!keyMatchesCertificate(certPem, keyPem)) throw new Error(`${keyPath} is not the key of ${certPath}`)
  return {certPem, keyPem}
}

async function writePair(pair: CertKeyPair, certPath: string, keyPath: string, generated: string[]): Promise<void> {
  await writeFileAtomic(keyPath, pair.keyPem, 0o600)
  await writeFileAtomic(certPath, pair.certPem, 0o644)
  generated.push(certPath, keyPath)
}

/** The serving certificate's names: addresses and SANs split into IPs and DNS names, deduplicated. */
export function servingNames(serverAddresses: readonly string[], tlsSANs: readonly string[] = []): {dnsNames: string[]; ipAddresses: string[]} {
  const dnsNames: string[] = []
  const ipAddresses: string[] = []
  for (const raw of ['localhost', '127.0.0.1', ...serverAddresses, ...tlsSANs]) {
    const name = raw.trim().replace(/^\[(.*)\]$/, '$1')
    if (name === '') continue
    if (isIP(name) !== 0) {
      const ip = canonicalIP(name)
      if (ip === '0.0.0.0' || ip === '::') continue
      if (!ipAddresses.includes(ip)) ipAddresses.push(ip)
    } else if (!dnsNames.includes(name.toLowerCase())) {
      dnsNames.push(name.toLowerCase())
    }
  }
  return {dnsNames, ipAddresses}
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a.map((s) => s.toLowerCase()))
  const right = new Set(b.map((s) => s.toLowerCase()))
  return left.size === right.size && [...left].every((s) => right.has(s))
}

function stillGood(pair: CertKeyPair | undefined, caPem: string, now: Date): pair is CertKeyPair {
  if (!pair) return false
  if (!verifyCertificate(pair.certPem, caPem, now)) return false
  return parseCertificate(pair.certPem).notAfter.getTime() - now.getTime() > RENEW_BEFORE_MS
}

/** Creates the PKI of <dataDir>/pki on the first start and loads (and renews) it on later ones. */
export async function ensureServerPKI(options: ServerPKIOptions): Promise<ServerPKI> {
  const paths = pkiPaths(options.dataDir)
  const now = options.now ?? new Date()
  const generated: string[] = []
  const warnings: string[] = []
  await mkdir(paths.dir, {recursive: true, mode: 0o700})
  await chmod(paths.dir, 0o700)

  // The cluster CA.
  let ca = await loadPair(paths.caCert, paths.caKey)
  if (!ca) {
    ca = await createCA(CA_COMMON_NAME, CA_VALIDITY_DAYS)
    await writePair(ca, paths.caCert, paths.caKey, generated)
  } else if (!parseCertificate(ca.certPem).isCA) {
    throw new Error(`${paths.caCert} is not a CA certificate`)
  }

  // The client CA: --client-ca-file, else client-ca.* (a copy of the cluster CA when first created).
  let clientCA: ServerPKI['clientCA']
  if (options.clientCAFile !== undefined) {
    const certPem = await readRequired(options.clientCAFile, '--client-ca-file')
    if (!decodePEM(certPem).some((b) => b.type === 'CERTIFICATE')) {
      throw new Error(`--client-ca-file ${options.clientCAFile}: no CERTIFICATE PEM block`)
    }
    clientCA = {certPem}
  } else {
    let pair = await loadPair(paths.clientCACert, paths.clientCAKey)
    if (!pair) {
      pair = ca
      await writePair(pair, paths.clientCACert, paths.clientCAKey, generated)
    }
    clientCA = pair
  }

  // The serving certificate.
  let serving: ServerPKI['serving']
  let servingCA: string | undefined
  if (options.tlsCertFile !== undefined || options.tlsKeyFile !== undefined) {
    if (options.tlsCertFile === undefined || options.tlsKeyFile === undefined) {
      throw new Error('--tls-cert-file and --tls-private-key-file must be given together')
    }
    const cert = await readRequired(options.tlsCertFile, '--tls-cert-file')
    const key = await readRequired(options.tlsKeyFile, '--tls-private-key-file')
    if (!keyMatchesCertificate(cert, key)) {
      throw new Error(`--tls-private-key-file ${options.tlsKeyFile} is not the key of --tls-cert-file ${options.tlsCertFile}`)
    }
    serving = {cert, key}
  } else {
    const wanted = servingNames(options.serverAddresses, options.tlsSANs)
    let pair = await loadPair(paths.servingCert, paths.servingKey).catch(() => undefined)
    if (pair) {
      const have = parseCertificate(pair.certPem)
      if (!sameSet(have.dnsNames, wanted.dnsNames) || !sameSet(have.ipAddresses, wanted.ipAddresses)) pair = undefined
    }
    if (!stillGood(pair, ca.certPem, now)) {
      pair = await createSignedCert({
        ca,
        commonName: SERVING_COMMON_NAME,
        ...wanted,
        usages: ['digital signature', 'key encipherment', 'server auth'],
        validitySeconds: LEAF_VALIDITY_SECONDS,
      })
      await writePair(pair, paths.servingCert, paths.servingKey, generated)
    }
    serving = {cert: pair.certPem, key: pair.keyPem}
    servingCA = ca.certPem
  }

  // The admin client certificate, from the client CA when its key is at hand.
  const adminIssuer: CertKeyPair = clientCA.keyPem !== undefined ? {certPem: clientCA.certPem, keyPem: clientCA.keyPem} : ca
  let admin = await loadPair(paths.adminCert, paths.adminKey).catch(() => undefined)
  if (admin) {
    const parsed = parseCertificate(admin.certPem)
    if (parsed.commonName !== ADMIN_USER || !parsed.organizations.includes(ADMIN_GROUP)) admin = undefined
  }
  if (!stillGood(admin, adminIssuer.certPem, now)) {
    admin = await createSignedCert({
      ca: adminIssuer,
      commonName: ADMIN_USER,
      organizations: [ADMIN_GROUP],
      usages: ['digital signature', 'key encipherment', 'client auth'],
      validitySeconds: LEAF_VALIDITY_SECONDS,
    })
    await writePair(admin, paths.adminCert, paths.adminKey, generated)
  }
  if (!verifyCertificate(admin.certPem, clientCA.certPem, now)) {
    warnings.push(`${paths.adminCert} is not signed by a CA of --client-ca-file ${options.clientCAFile}: the admin kubeconfig will not authenticate`)
  }

  return {ca, clientCA, serving, servingCA, admin: {cert: admin.certPem, key: admin.keyPem}, paths, generated, warnings}
}

// ---------------------------------------------------------------------------------------------- kubeconfig

export interface KubeconfigParams {
  /** e.g. https://127.0.0.1:6443 */
  server: string
  /** the CA that signed the serving certificate; omitted: the client uses its system roots */
  caPem?: string
  certPem: string
  keyPem: string
  user: string
  cluster: string
  context: string
}

/** The kubeconfig document (kubectl's format, credentials inline as *-data). */
export function kubeconfigDocument(params: KubeconfigParams): Record<string, unknown> {
  const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64')
  return clientKubeconfigDocument({
    server: params.server,
    caPem: params.caPem,
    credentials: {'client-certificate-data': b64(params.certPem), 'client-key-data': b64(params.keyPem)},
    cluster: params.cluster,
    user: params.user,
    context: params.context,
  })
}

/** Writes a kubeconfig file, mode 0600, creating its directory (0700) if needed. */
export async function writeKubeconfig(path: string, params: KubeconfigParams): Promise<void> {
  await mkdir(dirname(path), {recursive: true, mode: 0o700})
  await writeFileAtomic(path, dumpYaml(kubeconfigDocument(params)), 0o600)
}

export interface AdminKubeconfigOptions {
  dataDir: string
  /** the URL clients reach the server at, e.g. https://127.0.0.1:6443 */
  serverUrl: string
  /** ServerPKI.servingCA */
  caPem?: string
  /** ServerPKI.admin */
  certPem: string
  keyPem: string
  /** the user's kubeconfig, ~/.orch/config: written only when it does not exist */
  homeConfigPath?: string
  /** names in the kubeconfig; defaults cluster "orch", user "orch-admin", context "orch-admin@orch" */
  cluster?: string
  user?: string
  context?: string
}

/** Writes <dataDir>/admin.kubeconfig (always) and homeConfigPath (only when absent). Returns the paths written. */
export async function writeAdminKubeconfigs(options: AdminKubeconfigOptions): Promise<string[]> {
  const cluster = options.cluster ?? 'orch'
  const user = options.user ?? ADMIN_USER
  const params: KubeconfigParams = {
    server: options.serverUrl,
    caPem: options.caPem,
    certPem: options.certPem,
    keyPem: options.keyPem,
    cluster,
    user,
    context: options.context ?? `${user}@${cluster}`,
  }
  const written: string[] = []
  const adminPath = join(options.dataDir, 'admin.kubeconfig')
  await writeKubeconfig(adminPath, params)
  written.push(adminPath)
  if (options.homeConfigPath !== undefined) {
    const exists = await stat(options.homeConfigPath).then(() => true, (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return false
      throw e
    })
    if (!exists) {
      await writeKubeconfig(options.homeConfigPath, params)
      written.push(options.homeConfigPath)
    }
  }
  return written
}
