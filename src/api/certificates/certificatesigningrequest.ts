// CertificateSigningRequest (certificates.orch.io/v1, cluster-scoped): document 3.
import {ageColumn, humanDuration} from '../columns.js'
import {objectMeta} from '../meta.js'
import type {AnyObject, KindDeclaration, ObjectSchema} from '../types.js'

/** The well-known signers (Kubernetes' kubernetes.io/kube-apiserver-client, -kubelet, kubelet-serving). */
export const SIGNER_APISERVER_CLIENT = 'orch.io/apiserver-client'
export const SIGNER_AGENT_CLIENT = 'orch.io/apiserver-client-agent'
export const SIGNER_AGENT_SERVING = 'orch.io/agent-serving'

export const keyUsages = [
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
] as const

const csrCondition: ObjectSchema = {
  type: 'object',
  name: 'CertificateSigningRequestCondition',
  fields: {
    type: {type: 'string', proto: 1, required: true},
    status: {type: 'string', proto: 6, required: true, enum: ['True', 'False', 'Unknown']},
    reason: {type: 'string', proto: 2},
    message: {type: 'string', proto: 3},
    lastUpdateTime: {type: 'time', proto: 4},
    lastTransitionTime: {type: 'time', proto: 5},
  },
}

/** kubectl's CONDITION cell: Denied, Approved or Pending, then `,Failed` and `,Issued` as they apply. */
export function csrConditionCell(csr: any): string {
  let approved = false
  let denied = false
  let failed = false
  for (const c of Array.isArray(csr?.status?.conditions) ? csr.status.conditions : []) {
    if (c?.type === 'Approved') approved = true
    else if (c?.type === 'Denied') denied = true
    else if (c?.type === 'Failed') failed = true
  }
  let status = denied ? 'Denied' : approved ? 'Approved' : 'Pending'
  if (failed) status += ',Failed'
  if (csr?.status?.certificate) status += ',Issued'
  return status
}

/** kubectl's REQUESTEDDURATION cell: `<none>`, or spec.expirationSeconds humanised (600 -> 10m, 86400 -> 24h). */
export function csrRequestedDurationCell(csr: any): string {
  const seconds = csr?.spec?.expirationSeconds
  return typeof seconds === 'number' ? humanDuration(seconds * 1000) : '<none>'
}

const APPROVAL_TYPES = new Set(['Approved', 'Denied'])

function conditionsOf(object: AnyObject): AnyObject[] {
  return Array.isArray(object.status?.conditions) ? object.status.conditions : []
}

/** Kubernetes' populateConditionTimestamps: lastUpdateTime defaults to now; lastTransitionTime keeps
 *  the old one of the same type and status, else now. */
function populateConditionTimestamps(object: AnyObject, old: AnyObject | undefined, now: Date): void {
  const stamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z')
  for (const condition of conditionsOf(object)) {
    if (!condition || typeof condition !== 'object') continue
    if (!condition.lastUpdateTime) condition.lastUpdateTime = stamp
    if (!condition.lastTransitionTime) {
      const same = old ? conditionsOf(old).find((c) => c?.type === condition.type && c?.status === condition.status && c?.lastTransitionTime) : undefined
      condition.lastTransitionTime = same?.lastTransitionTime ?? stamp
    }
  }
}

/** v1 defaulting: a condition without a status is True. */
function defaultConditionStatus(object: AnyObject): void {
  for (const condition of conditionsOf(object)) {
    if (condition && typeof condition === 'object' && !condition.status) condition.status = 'True'
  }
}

/** Kubernetes' preserveConditionInstances: when `object` has as many conditions of `type` as `old`,
 *  they are put back as stored (so /status cannot change them); when it added or removed one, they are
 *  left for validation to refuse. */
function preserveConditionInstances(object: AnyObject, old: AnyObject, type: string): void {
  const oldConditions = conditionsOf(old).filter((c) => c?.type === type)
  const conditions = conditionsOf(object)
  const indices = conditions.flatMap((c, i) => (c?.type === type ? [i] : []))
  if (indices.length !== oldConditions.length) return
  indices.forEach((index, i) => {
    conditions[index] = structuredClone(oldConditions[i])
  })
}

function setConditions(object: AnyObject, conditions: AnyObject[]): void {
  object.status ??= {}
  if (conditions.length > 0) object.status.conditions = conditions
  else delete object.status.conditions
}

export const certificateSigningRequest: KindDeclaration = {
  group: 'certificates.orch.io',
  version: 'v1',
  kind: 'CertificateSigningRequest',
  resource: 'certificatesigningrequests',
  singular: 'certificatesigningrequest',
  shortNames: ['csr'],
  namespaced: false,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    {name: 'status', verbs: ['get', 'patch', 'update'], writes: 'status'},
    {name: 'approval', verbs: ['get', 'patch', 'update'], writes: 'custom'},
  ],
  hasStatus: true,
  generationFields: ['spec'],
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  schema: {
    type: 'object',
    name: 'CertificateSigningRequest',
    fields: {
      metadata: {...objectMeta, proto: 1},
      spec: {
        type: 'object',
        name: 'CertificateSigningRequestSpec',
        proto: 2,
        required: true,
        fields: {
          request: {type: 'string', format: 'byte', proto: 1, required: true},
          signerName: {type: 'string', proto: 7, required: true},
          expirationSeconds: {type: 'integer', format: 'int32', proto: 8},
          usages: {type: 'array', items: {type: 'string', enum: keyUsages}, proto: 5, listType: 'atomic'},
          username: {type: 'string', proto: 2},
          uid: {type: 'string', proto: 3},
          groups: {type: 'array', items: {type: 'string'}, proto: 4, listType: 'atomic'},
          // map[string]ExtraValue: in protobuf each value is an ExtraValue message (repeated string items = 1)
          extra: {type: 'map', values: {type: 'array', items: {type: 'string'}}, proto: 6},
        },
      },
      status: {
        type: 'object',
        name: 'CertificateSigningRequestStatus',
        proto: 3,
        fields: {
          // Kubernetes declares listType=map/listMapKey=type and no patchStrategy: strategic merge replaces the list
          conditions: {type: 'array', items: csrCondition, proto: 1, listType: 'map', listMapKeys: ['type']},
          certificate: {type: 'string', format: 'byte', proto: 2},
        },
      },
    },
  },
  columns: [
    ageColumn,
    {
      name: 'SignerName',
      type: 'string',
      description: 'the signer the certificate is requested from',
      priority: 0,
      cell: (o) => o.spec?.signerName || '<none>',
    },
    {
      name: 'Requestor',
      type: 'string',
      description: 'the user who created the request',
      priority: 0,
      cell: (o) => o.spec?.username ?? '',
    },
    {
      name: 'RequestedDuration',
      type: 'string',
      description: 'the requested validity of the issued certificate',
      priority: 0,
      cell: (o) => csrRequestedDurationCell(o),
    },
    {
      name: 'Condition',
      type: 'string',
      description: 'the approval and issuance state of the request',
      priority: 0,
      cell: (o) => csrConditionCell(o),
    },
  ],
  fieldSelectors: {'spec.signerName': (o) => o.spec?.signerName ?? ''},
  defaults: defaultConditionStatus,
  /** Only request, signerName, expirationSeconds and usages come from the caller: the requestor's
   *  identity is the server's to set, and a new request has an empty status (`"status":{}`, as Go
   *  encodes Kubernetes' zero CertificateSigningRequestStatus). */
  prepareForCreate(object, context) {
    object.status = {}
    const spec = (object.spec ??= {})
    const user = context.user
    spec.username = user?.username ?? ''
    if (user?.uid) spec.uid = user.uid
    else delete spec.uid
    if (user?.groups && user.groups.length > 0) spec.groups = [...user.groups]
    else delete spec.groups
    if (user?.extra && Object.keys(user.extra).length > 0) spec.extra = structuredClone(user.extra)
    else delete spec.extra
  },
  /** The spec never changes after creation (as Kubernetes, a changed spec is put back, not refused).
   *  A plain update keeps the status; /status puts back Approved and Denied conditions it changed, and
   *  leaves one it added or removed for validation to refuse (422). */
  prepareForUpdate(object, old, context) {
    object.spec = structuredClone(old.spec)
    if (context.subresource === 'status') {
      for (const type of APPROVAL_TYPES) preserveConditionInstances(object, old, type)
      populateConditionTimestamps(object, old, context.now)
    }
  },
  /** /approval writes the conditions, the whole list as sent (Kubernetes' approval strategy); the rest
   *  of the status stays as stored. */
  prepareSubresourceUpdate(subresource, object, old, context) {
    if (subresource !== 'approval') return old
    const next: AnyObject = {...old, metadata: object.metadata ?? old.metadata, status: {...(old.status ?? {})}}
    defaultConditionStatus(object)
    setConditions(next, conditionsOf(object).map((c) => structuredClone(c)))
    populateConditionTimestamps(next, old, context.now)
    return next
  },
}
