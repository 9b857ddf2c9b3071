// The Node authorizer, as Kubernetes' plugin/pkg/auth/authorizer/node does it, simplified: a node
// agent (user `system:node:<name>` in group `system:nodes`) may read what it needs cluster-wide and
// write only what is its own: its Node and nodes/status, its Lease in orch-node-lease, and the status
// of the pods bound to it (spec.nodeName). Everything it is not given here is no-opinion, so the
// next authorizer (RBAC) still decides; requests from anyone else are no-opinion at once.
import type {AnyObject, UserInfo} from '../../api/types.js'
import {NODE_LEASE_NAMESPACE} from '../../api/coordination/lease.js'
import {goQuote} from '../../machinery/field-errors.js'
import type {ResourceRegistry} from '../registry.js'
import {rulesAllow, type AttributeAuthorizer, type AuthorizationAttributes, type AuthorizationResult, type PolicyRule, type ResolvedRules} from './rbac.js'

export const NODES_GROUP = 'system:nodes'
export const NODE_USER_PREFIX = 'system:node:'
export {NODE_LEASE_NAMESPACE}

const coordinationGroup = 'coordination.orch.io'
const certificatesGroup = 'certificates.orch.io'
const authenticationGroup = 'authentication.orch.io'
const authorizationGroup = 'authorization.orch.io'

/** Kubernetes' NodeIdentifier: a node is `system:node:<name>` in `system:nodes`; name may be ''. */
export function nodeIdentity(user: UserInfo | undefined): {isNode: boolean; nodeName: string} {
  if (!user || !user.username.startsWith(NODE_USER_PREFIX) || !(user.groups ?? []).includes(NODES_GROUP)) {
    return {isNode: false, nodeName: ''}
  }
  return {isNode: true, nodeName: user.username.slice(NODE_USER_PREFIX.length)}
}

/** What every node may do regardless of which objects are its own. */
const staticRules: PolicyRule[] = [
  // reading what a node agent needs (Kubernetes narrows these with its object graph; orch does not)
  {verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['nodes', 'pods', 'services', 'configmaps']},
  // events about its pods (update and patch: the event recorder aggregates repeats)
  {verbs: ['create', 'update', 'patch'], apiGroups: [''], resources: ['events']},
  // its client certificate: bootstrap and rotation
  {verbs: ['create', 'get', 'list', 'watch'], apiGroups: [certificatesGroup], resources: ['certificatesigningrequests']},
  // checking callers of its own API (these creates change nothing)
  {verbs: ['create'], apiGroups: [authenticationGroup], resources: ['tokenreviews']},
  {verbs: ['create'], apiGroups: [authorizationGroup], resources: ['subjectaccessreviews', 'localsubjectaccessreviews']},
]

/** The node authorizer's grants as RBAC rules (the `system:node` ClusterRole): without the
 *  "own objects only" limits, which RBAC cannot express. */
export function nodeRules(): PolicyRule[] {
  return [
    ...structuredClone(staticRules),
    {verbs: ['create', 'update', 'patch'], apiGroups: [''], resources: ['nodes']},
    {verbs: ['update', 'patch'], apiGroups: [''], resources: ['nodes/status']},
    {verbs: ['update', 'patch'], apiGroups: [''], resources: ['pods/status']},
    {verbs: ['create', 'delete'], apiGroups: [''], resources: ['pods']},
    {verbs: ['get', 'create', 'update', 'patch', 'delete'], apiGroups: [coordinationGroup], resources: ['leases']},
  ]
}

/** The node a pod is bound to (spec.nodeName), or undefined when the pod is unknown or unbound. */
export type PodNodeLookup = (namespace: string, name: string) => string | undefined

/** A PodNodeLookup over the pods registry's watch cache (started by the server). */
export function podNodeFromRegistry(pods: Pick<ResourceRegistry, 'cache' | 'key'>): PodNodeLookup {
  return (namespace, name) => {
    const pod: AnyObject | undefined = pods.cache.get(pods.key(namespace, name))?.object
    const node = pod?.spec?.nodeName
    return typeof node === 'string' && node ? node : undefined
  }
}

const noOpinion = (reason = ''): AuthorizationResult => ({decision: 'no-opinion', reason})
const allow: AuthorizationResult = {decision: 'allow', reason: ''}

export class NodeAuthorizer implements AttributeAuthorizer {
  constructor(private readonly podNode: PodNodeLookup) {}

  authorize(attributes: AuthorizationAttributes): AuthorizationResult {
    const {isNode, nodeName} = nodeIdentity(attributes.user)
    if (!isNode) return noOpinion()
    if (!nodeName) return noOpinion(`unknown node for user ${goQuote(attributes.user.username)}`)
    if (!attributes.isResourceRequest) return noOpinion()
    const group = attributes.apiGroup ?? ''
    const resource = attributes.resource ?? ''
    const subresource = attributes.subresource ?? ''
    if (group === '' && resource === 'nodes' && ['create', 'update', 'patch'].includes(attributes.verb)) {
      return this.authorizeNode(nodeName, attributes)
    }
    if (group === coordinationGroup && resource === 'leases' && !subresource) {
      return this.authorizeLease(nodeName, attributes)
    }
    if (group === '' && resource === 'pods' && subresource === 'status' && (attributes.verb === 'update' || attributes.verb === 'patch')) {
      return this.authorizePodStatus(nodeName, attributes)
    }
    // mirror pods of its static pods (the body's spec.nodeName is admission's to check, as
    // Kubernetes' NodeRestriction does) and the final delete of pods it has stopped
    if (group === '' && resource === 'pods' && !subresource && attributes.verb === 'create') return allow
    if (group === '' && resource === 'pods' && !subresource && attributes.verb === 'delete') return this.authorizePodStatus(nodeName, attributes)
    return rulesAllow(attributes, staticRules) ? allow : noOpinion()
  }

  /** Kubernetes' NodeAuthorizer.RulesFor: a node's rules depend on its objects, so none are listed
   *  and the list is marked incomplete; anyone else gets nothing from this authorizer. */
  resolveRules(user: UserInfo): ResolvedRules {
    if (!nodeIdentity(user).isNode) return {resourceRules: [], nonResourceRules: [], incomplete: false, errors: []}
    return {resourceRules: [], nonResourceRules: [], incomplete: true, errors: ['node authorizer does not support user rule resolution']}
  }

  /** create its Node (the name is not known on create: the body's is for admission to check),
   *  update and patch its Node and nodes/status */
  private authorizeNode(nodeName: string, attributes: AuthorizationAttributes): AuthorizationResult {
    const subresource = attributes.subresource ?? ''
    const name = attributes.name ?? ''
    if (attributes.verb === 'create') {
      if (subresource) return noOpinion()
      return !name || name === nodeName ? allow : noOpinion(`node ${goQuote(nodeName)} is not allowed to modify node ${goQuote(name)}`)
    }
    if (subresource !== '' && subresource !== 'status') return noOpinion()
    return name === nodeName ? allow : noOpinion(`node ${goQuote(nodeName)} is not allowed to modify node ${goQuote(name)}`)
  }

  /** Kubernetes' authorizeLease: get, create, update, patch, delete of its own Lease in orch-node-lease */
  private authorizeLease(nodeName: string, attributes: AuthorizationAttributes): AuthorizationResult {
    const verb = attributes.verb
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(verb)) {
      return noOpinion('can only get, create, update, patch, or delete a node lease')
    }
    if ((attributes.namespace ?? '') !== NODE_LEASE_NAMESPACE) {
      return noOpinion(`can only access leases in the ${goQuote(NODE_LEASE_NAMESPACE)} system namespace`)
    }
    // a create carries no name in its path (Kubernetes skips the check; a name given must match)
    const name = attributes.name ?? ''
    if ((verb !== 'create' || name) && name !== nodeName) {
      return noOpinion('can only access node lease with the same name as the requesting node')
    }
    return allow
  }

  /** update and patch of pods/status, for pods bound to the node */
  private authorizePodStatus(nodeName: string, attributes: AuthorizationAttributes): AuthorizationResult {
    const name = attributes.name ?? ''
    if (name && this.podNode(attributes.namespace ?? '', name) === nodeName) return allow
    return noOpinion(`no relationship found between node '${nodeName}' and this object`)
  }
}
