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

/** Optional usages plus the one required: anything else is refused. */
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

/** An agent client request: O system:nodes, CN system:node:<name>, no SANs. */
export function agentClientProblem(request: ParsedCSR, usages: readonly string[]): string | undefined {
  if (!sameSet(request.organizations, [NODES_GROUP])) return 'subject organization is not system:nodes'
  if (request.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed'
  if (request.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed'
  if (request.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed'
  if (request.uris.length > 0) return 'URI subjectAltNames are not allowed'
  if (!request.commonName.startsWith(NODE_USER_PREFIX)) return 'subject common name does not begin with system:node:'
  return checkUsages(usages, 'client auth', 'client')
}

/** An agent serving request: O system:nodes, CN system:node:<name>, DNS or IP SANs, no others. */
export function agentServingProblem(request: ParsedCSR, usages: readonly string[]): string | undefined {
  if (!sameSet(request.organizations, [NODES_GROUP])) return 'subject organization is not system:nodes'
  if (request.dnsNames.length === 0 && request.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required'
  if (request.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed'
  if (request.uris.length > 0) return 'URI subjectAltNames are not allowed'
  if (!request.commonName.startsWith(NODE_USER_PREFIX)) return 'subject common name does not begin with system:node:'
  return checkUsages(usages, 'server auth', 'serving')
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
