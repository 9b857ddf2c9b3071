// CertificateSigningRequest (certificates.orch.io/v1): Kubernetes' pkg/apis/certificates/validation.
//   - spec.request: a PEM CERTIFICATE REQUEST whose signature verifies; spec.usages required, known,
//     not repeated; spec.signerName `domain.tld/path`; spec.expirationSeconds >= 600;
//   - status.conditions: type required, Approved/Denied/Failed only True, one per type, Approved and
//     Denied mutually exclusive (the later one's type is the invalid value); Approved/Denied/Failed never
//     removed; Approved/Denied added or changed only through /approval (/status adding or removing one
//     is 422 Forbidden);
//   - status.certificate: PEM CERTIFICATE blocks only (validateCertificatePEM), set only through
//     /status, only once Approved, never changed once set.
import {keyUsages} from '../../api/certificates/certificatesigningrequest.js'
import type {AnyObject, FieldError, RequestContext} from '../../api/types.js'
import {duplicate, forbidden, invalid, notSupported, required, tooLong} from '../../machinery/field-errors.js'
import {parseCSR, validateCertificatePEM} from '../../machinery/pki.js'
import {isDNS1123Label, isDNS1123Subdomain} from '../../machinery/validation.js'
import {list, obj, str, type KindValidator} from './common.js'

const SUBDOMAIN_MAX = 253
const LABEL_MAX = 63
const CONDITION_TYPES_NEVER_REMOVED = ['Approved', 'Denied', 'Failed']
const APPROVAL_TYPES = ['Approved', 'Denied']

/** base64 (as JSON carries bytes) to text; undefined when it is not base64. */
function decodeBytes(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value.replace(/\s+/g, ''))) return undefined
  return Buffer.from(value, 'base64').toString('latin1')
}

/** Kubernetes' ValidateSignerName. */
export function validateSignerName(path: string, signerName: string): FieldError[] {
  if (signerName === '') return [required(path)]
  const segments = signerName.split('/')
  if (segments.length !== 2) {
    return [invalid(path, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
  }
  const errs: FieldError[] = []
  const [domain, rest] = segments
  if (domain.length > SUBDOMAIN_MAX) errs.push(tooLong(path, domain, SUBDOMAIN_MAX))
  const domainLabels = domain.split('.')
  for (const label of domainLabels) {
    const problems = isDNS1123Label(label)
    if (problems.length > 0) {
      for (const problem of problems) errs.push(invalid(path, domain, `validating label "${label}": ${problem}`))
      break
    }
  }
  if (domainLabels.length < 2) errs.push(invalid(path, domain, 'should be a domain with at least two segments separated by dots'))
  const maxLength = SUBDOMAIN_MAX + (SUBDOMAIN_MAX + LABEL_MAX + 1) + 1
  if (signerName.length > maxLength) errs.push(tooLong(path, signerName, maxLength))
  const pathLabels = rest.split('.')
  for (const label of pathLabels) {
    const problems = isDNS1123Subdomain(label)
    if (problems.length > 0) {
      for (const problem of problems) errs.push(invalid(path, rest, `validating label "${label}": ${problem}`))
      break
    }
  }
  if (pathLabels.length > 2) {
    errs.push(invalid(path, rest, "must only contain one '.' (e.g. 'example.com/resource.name' or 'example.com/name')"))
  }
  return errs
}

/** Kubernetes' validateCSR: a PEM CERTIFICATE REQUEST whose signature checks out. */
function requestProblem(request: unknown): string | undefined {
  const pem = decodeBytes(request)
  if (pem === undefined || pem === '') return 'PEM block type must be CERTIFICATE REQUEST'
  try {
    const parsed = parseCSR(pem)
    if (!parsed.signatureValid) return 'x509: signature of the certificate request does not verify (its public key does not match its signature)'
    return undefined
  } catch (error) {
    const message = (error as Error).message
    return /CERTIFICATE REQUEST|PEM/.test(message) ? 'PEM block type must be CERTIFICATE REQUEST' : message
  }
}

function validateConditions(csr: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  let approved = false
  let denied = false
  const conditions = list(obj(csr.status).conditions)
  conditions.forEach((raw, i) => {
    const condition = obj(raw)
    const path = `status.conditions[${i}]`
    const type = str(condition.type)
    if (type === '') errs.push(required(`${path}.type`))
    const status = str(condition.status)
    if (status === '') errs.push(required(`${path}.status`))
    else if (CONDITION_TYPES_NEVER_REMOVED.includes(type) && status !== 'True') errs.push(notSupported(`${path}.status`, status, ['True']))
    else if (!['True', 'False', 'Unknown'].includes(status)) errs.push(notSupported(`${path}.status`, status, ['False', 'True', 'Unknown']))
    // Kubernetes names the condition that meets the other one: its type is the value
    if (type === 'Approved') {
      approved = true
      if (denied) errs.push(invalid(`${path}.type`, type, 'Approved and Denied conditions are mutually exclusive'))
    }
    if (type === 'Denied') {
      denied = true
      if (approved) errs.push(invalid(`${path}.type`, type, 'Approved and Denied conditions are mutually exclusive'))
    }
    if (type !== '' && seen.has(type)) errs.push(duplicate(`${path}.type`, type))
    seen.add(type)
  })
  return errs
}

function validateCSR(csr: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const spec = obj(csr.spec)
  const problem = requestProblem(spec.request)
  if (problem) errs.push(invalid('spec.request', spec.request ?? '', problem))
  const usages = list(spec.usages)
  if (usages.length === 0) errs.push(required('spec.usages', 'usages must be provided'))
  const seen = new Set<string>()
  usages.forEach((usage, i) => {
    if (!(keyUsages as readonly string[]).includes(usage)) errs.push(notSupported(`spec.usages[${i}]`, usage, [...keyUsages].sort()))
    if (seen.has(usage)) errs.push(duplicate(`spec.usages[${i}]`, usage))
    seen.add(usage)
  })
  errs.push(...validateSignerName('spec.signerName', str(spec.signerName)))
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < 600) {
    errs.push(invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'))
  }
  errs.push(...validateConditions(csr))
  const certificate = decodeBytes(obj(csr.status).certificate)
  if (certificate === undefined && obj(csr.status).certificate !== undefined) {
    errs.push(invalid('status.certificate', '<certificate data>', 'must be base64-encoded PEM data'))
  } else if (certificate) {
    const problems = validateCertificatePEM(certificate)
    if (problems.length > 0) errs.push(invalid('status.certificate', '<certificate data>', problems[0]))
  }
  return errs
}

function conditionsOfType(csr: AnyObject, type: string): AnyObject[] {
  return list(obj(csr.status).conditions).filter((c) => obj(c).type === type)
}

function validateUpdate(csr: AnyObject, old: AnyObject, context: RequestContext): FieldError[] {
  const errs = validateCSR(csr)
  for (const type of CONDITION_TYPES_NEVER_REMOVED) {
    if (conditionsOfType(csr, type).length < conditionsOfType(old, type).length) {
      errs.push(forbidden('status.conditions', `updates may not remove a condition of type "${type}"`))
    }
  }
  if (context.subresource !== 'approval') {
    for (const type of APPROVAL_TYPES) {
      const before = conditionsOfType(old, type)
      const after = conditionsOfType(csr, type)
      if (after.length > before.length) errs.push(forbidden('status.conditions', `updates may not add a condition of type "${type}"`))
      else if (after.length === before.length && JSON.stringify(after) !== JSON.stringify(before)) {
        errs.push(forbidden('status.conditions', `updates may not modify a condition of type "${type}"`))
      }
    }
  }
  const certificate = str(obj(csr.status).certificate)
  const oldCertificate = str(obj(old.status).certificate)
  if (certificate !== oldCertificate) {
    if (context.subresource !== 'status') errs.push(forbidden('status.certificate', 'updates may not set certificate content'))
    else if (oldCertificate !== '') errs.push(forbidden('status.certificate', 'updates may not modify existing certificate content'))
    else if (conditionsOfType(csr, 'Approved').length === 0) errs.push(forbidden('status.certificate', 'may only be set once the request is Approved'))
  }
  return errs
}

export const certificateSigningRequestValidator: KindValidator = {
  create: (csr) => validateCSR(csr),
  update: validateUpdate,
}
