// What each well-known signer permits, as Kubernetes' certificate signer and approver check it
// (pkg/controller/certificates): subjects, subject alternative names and key usages.
import {SIGNER_AGENT_CLIENT, SIGNER_AGENT_SERVING, SIGNER_APISERVER_CLIENT} from '../api/certificates/certificatesigningrequest.js'
import type {AnyObject} from '../api/types.js'
import {parseCSR, type ParsedCSR} from '../machinery/pki.js'

export {SIGNER_AGENT_CLIENT, SIGNER_AGENT_SERVING, SIGNER_APISERVER_CLIENT}
export const WELL_KNOWN_SIGNERS = [SIGNER_APISERVER_CLIENT, SIGNER_AGENT_CLIENT, SIGNER_AGENT_SERVING] as const

export const NODES_GROUP = 'system:nodes'
export const NODE_USER_PREFIX = 'system:node:'

/** The PEM text of spec.request (base64 in JSON). */
export function requestPem(csr: AnyObject): string {
  return Buffer.from(String(csr.spec?.request ?? ''), 'base64').toString('latin1')
}

export function hasCondition(csr: AnyObject, type: string): boolean {
  return (Array.isArray(csr.status?.conditions) ? csr.status.conditions : []).some((c: AnyObject) => c?.type === type)
}

/** Optional usages plus the one required: anything else is refused (Kubernetes'
 *  validAPIServerClientUsages, for the apiserver-client signer). */
function checkUsages(usages: readonly string[], required: string, kind: string): string | undefined {
  for (const usage of usages) {
    if (usage !== 'digital signature' && usage !== 'key encipherment' && usage !== required) return `invalid usage for ${kind} certificate: ${usage}`
  }
  if (!usages.includes(required)) return `missing required usage for ${kind} certificate: ${required}`
  return undefined
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x))
}

/** Kubernetes' kubelet client and serving checks: the usages, as a set, are exactly `{digital signature,
 *  key encipherment, <auth>}` or that set without key encipherment (a key that is not RSA); anything
 *  else is `usages did not match [<the full set, sorted>]`. */
function exactUsages(usages: readonly string[], auth: 'client auth' | 'server auth'): string | undefined {
  const withRSA = ['digital signature', 'key encipherment', auth]
  const unique = [...new Set(usages)]
  if (sameSet(unique, withRSA) || sameSet(unique, ['digital signature', auth])) return undefined
  return `usages did not match [${[...withRSA].sort().join(' ')}]`
}

/** An agent client request (Kubernetes' ValidateKubeletClientCSR): O system:nodes, no SANs,
 *  CN system:node:<name>, the usages exactly those of an agent client certificate. */
export function agentClientProblem(request: ParsedCSR, usages: readonly string[]): string | undefined {
  if (!sameSet(request.organizations, [NODES_GROUP])) return 'subject organization is not system:nodes'
  if (request.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed'
  if (request.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed'
  if (request.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed'
  if (request.uris.length > 0) return 'URI subjectAltNames are not allowed'
  if (!request.commonName.startsWith(NODE_USER_PREFIX)) return 'subject common name does not begin with system:node:'
  return exactUsages(usages, 'client auth')
}

/** An agent serving request (Kubernetes' ValidateKubeletServingCSR): O system:nodes, DNS or IP SANs
 *  and no others, the usages exactly those of an agent serving certificate, CN system:node:<name>. */
export function agentServingProblem(request: ParsedCSR, usages: readonly string[]): string | undefined {
  if (!sameSet(request.organizations, [NODES_GROUP])) return 'subject organization is not system:nodes'
  if (request.dnsNames.length === 0 && request.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required'
  if (request.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed'
  if (request.uris.length > 0) return 'URI subjectAltNames are not allowed'
  const usageProblem = exactUsages(usages, 'server auth')
  if (usageProblem) return usageProblem
  if (!request.commonName.startsWith(NODE_USER_PREFIX)) return 'subject common name does not begin with system:node:'
  return undefined
}

/** Why the signer may not issue this request (undefined: it may). */
export function signerProblem(csr: AnyObject): string | undefined {
  let request: ParsedCSR
  try {
    request = parseCSR(requestPem(csr))
  } catch (error) {
    return (error as Error).message
  }
  const usages: string[] = Array.isArray(csr.spec?.usages) ? csr.spec.usages : []
  switch (csr.spec?.signerName) {
    case SIGNER_APISERVER_CLIENT:
      return checkUsages(usages, 'client auth', 'client')
    case SIGNER_AGENT_CLIENT:
      return agentClientProblem(request, usages)
    case SIGNER_AGENT_SERVING:
      return agentServingProblem(request, usages)
    default:
      return `unknown signer ${csr.spec?.signerName}`
  }
}
