// Kubernetes' certificate admission plugins (plugin/pkg/admission/certificates), for
// certificates.orch.io CertificateSigningRequests:
//   - CertificateApproval: an update of /approval needs `approve` on the signer;
//   - CertificateSigning: a /status update that changes status.certificate needs `sign` on the signer;
//   - CertificateSubjectRestriction: no one, admin included, creates an orch.io/apiserver-client
//     request whose subject is in system:masters (such a certificate would be a superuser's).
// "On the signer" is verb VERB on the synthetic resource `signers` of certificates.orch.io named
// after spec.signerName or, failing that, `<domain>/*` (Kubernetes' IsAuthorizedForSignerName).
import {SIGNER_APISERVER_CLIENT} from '../api/certificates/certificatesigningrequest.js'
import type {AnyObject, UserInfo} from '../api/types.js'
import {parseCSR} from '../machinery/pki.js'
import {admissionForbidden} from './forbidden.js'
import type {PolicyAuthorizer} from './policy/engine.js'
import type {AdmissionAttributes, ValidatingPlugin} from './types.js'

export const CERTIFICATES_GROUP = 'certificates.orch.io'
const MASTERS_GROUP = 'system:masters'

function isCSR(attributes: AdmissionAttributes): boolean {
  return attributes.resource.group === CERTIFICATES_GROUP && attributes.resource.resource === 'certificatesigningrequests'
}

function allowed(authorizer: PolicyAuthorizer, user: UserInfo, verb: string, name: string): boolean {
  const result = authorizer({user, verb, group: CERTIFICATES_GROUP, resource: 'signers', name})
  // as Kubernetes, an evaluation error is not an allow, whatever the decision
  return result.decision === 'allow' && !result.error
}

/** May `user` do `verb` on the signer: by its name, or by the wildcard of its domain. */
export function isAuthorizedForSignerName(authorizer: PolicyAuthorizer, user: UserInfo, verb: string, signerName: string): boolean {
  if (allowed(authorizer, user, verb, signerName)) return true
  return allowed(authorizer, user, verb, `${signerName.split('/')[0]}/*`)
}

function signerOf(csr: AnyObject | null): string {
  return String(csr?.spec?.signerName ?? '')
}

/** `verb` on the stored request's signer (the one checked, whatever the body says), else Kubernetes'
 *  403 `user not permitted to <verb> requests with signerName "<signer>"`. */
function requireOnSigner(authorizer: PolicyAuthorizer, attributes: AdmissionAttributes, verb: 'approve' | 'sign'): void {
  const signerName = signerOf(attributes.oldObject)
  if (!isAuthorizedForSignerName(authorizer, attributes.userInfo, verb, signerName)) {
    throw admissionForbidden(attributes, `user not permitted to ${verb} requests with signerName "${signerName}"`)
  }
}

export class CertificateApproval implements ValidatingPlugin {
  readonly name = 'CertificateApproval'

  constructor(private readonly authorizer: PolicyAuthorizer) {}

  handles(attributes: AdmissionAttributes): boolean {
    return isCSR(attributes)
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    if (attributes.operation !== 'UPDATE' || attributes.subresource !== 'approval' || !isCSR(attributes)) return
    requireOnSigner(this.authorizer, attributes, 'approve')
  }
}

/** status.certificate as Kubernetes compares it (bytes: absent and null are the same, empty is not). */
function certificateOf(csr: AnyObject | null): string | undefined {
  return csr?.status?.certificate ?? undefined
}

export class CertificateSigning implements ValidatingPlugin {
  readonly name = 'CertificateSigning'

  constructor(private readonly authorizer: PolicyAuthorizer) {}

  handles(attributes: AdmissionAttributes): boolean {
    return isCSR(attributes)
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    if (attributes.operation !== 'UPDATE' || attributes.subresource !== 'status' || !isCSR(attributes)) return
    if (certificateOf(attributes.oldObject) === certificateOf(attributes.object)) return
    requireOnSigner(this.authorizer, attributes, 'sign')
  }
}

export class CertificateSubjectRestriction implements ValidatingPlugin {
  readonly name = 'CertificateSubjectRestriction'

  handles(attributes: AdmissionAttributes): boolean {
    return isCSR(attributes)
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    if (attributes.operation !== 'CREATE' || attributes.subresource !== '' || !isCSR(attributes)) return
    const csr = attributes.object
    if (signerOf(csr) !== SIGNER_APISERVER_CLIENT) return
    let organizations: string[]
    try {
      organizations = parseCSR(Buffer.from(String(csr?.spec?.request ?? ''), 'base64').toString('latin1')).organizations
    } catch (error) {
      throw admissionForbidden(attributes, `failed to parse CSR: ${(error as Error).message}`)
    }
    if (organizations.includes(MASTERS_GROUP)) {
      throw admissionForbidden(attributes, `use of ${SIGNER_APISERVER_CLIENT} signer with ${MASTERS_GROUP} group is not allowed`)
    }
  }
}
