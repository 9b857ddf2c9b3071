// The Node authorizer, as Kubernetes 1.32's plugin/pkg/auth/authorizer/node does it with
// AuthorizeNodeWithSelectors (beta, on): a node agent (user `system:node:<name>` in group
// `system:nodes`) reads only what is its own or what a pod bound to it uses, and writes only what is
// its own:
//   - nodes: get, list and watch of its own Node by name (a metadata.name field selector names it);
//     create, update and patch of its Node and nodes/status;
//   - pods: get of a pod bound to it, list and watch with the field selector spec.nodeName=<node>;
//     status writes and the final delete of pods bound to it, creates of mirror pods;
//   - configmaps (get, list, watch by name) and persistentvolumeclaims (get, status writes): only
//     those a pod bound to it uses (NodeGraph);
//   - its Lease in orch-node-lease; services, events, its CSRs and reviews as staticRules say.
// Everything it is not given here is no-opinion, so the next authorizer (RBAC) still decides;
// requests from anyone else are no-opinion at once.
import type {UserInfo} from '../../api/types.js'
import {NODE_LEASE_NAMESPACE} from '../../api/coordination/lease.js'
import {goQuote} from '../../machinery/field-errors.js'
import type {NodeGraph, RelatedResource} from './node-graph.js'
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
  // services: for the environment variables of its pods
  {verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['services']},
  // events about its pods (update and patch: the event recorder aggregates repeats)
  {verbs: ['create', 'update', 'patch'], apiGroups: [''], resources: ['events']},
  // its client certificate: bootstrap and rotation
  {verbs: ['create', 'get', 'list', 'watch'], apiGroups: [certificatesGroup], resources: ['certificatesigningrequests']},
  // checking callers of its own API (these creates change nothing)
  {verbs: ['create'], apiGroups: [authenticationGroup], resources: ['tokenreviews']},
  {verbs: ['create'], apiGroups: [authorizationGroup], resources: ['subjectaccessreviews', 'localsubjectaccessreviews']},
]

/** The node authorizer's grants as RBAC rules (the `system:node` ClusterRole, bound to nobody by
 *  default, as Kubernetes' NodeRules): reads of nodes, pods and configmaps everywhere, without the
 *  limits the authorizer puts on them (its own Node, pods bound to it and what they use, by name
 *  or spec.nodeName), which RBAC cannot express. */
export function nodeRules(): PolicyRule[] {
  return [
    ...structuredClone(staticRules),
    {verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['nodes', 'pods', 'configmaps']},
    {verbs: ['get'], apiGroups: [''], resources: ['persistentvolumeclaims']},
    {verbs: ['update', 'patch'], apiGroups: [''], resources: ['persistentvolumeclaims/status']},
    {verbs: ['create', 'update', 'patch'], apiGroups: [''], resources: ['nodes']},
    {verbs: ['update', 'patch'], apiGroups: [''], resources: ['nodes/status']},
    {verbs: ['update', 'patch'], apiGroups: [''], resources: ['pods/status']},
    {verbs: ['create', 'delete'], apiGroups: [''], resources: ['pods']},
    {verbs: ['create'], apiGroups: [''], resources: ['pods/eviction']},
    {verbs: ['get', 'create', 'update', 'patch', 'delete'], apiGroups: [coordinationGroup], resources: ['leases']},
  ]
}

const noOpinion = (reason = ''): AuthorizationResult => ({decision: 'no-opinion', reason})
const allow: AuthorizationResult = {decision: 'allow', reason: ''}

const noRelationship = (nodeName: string) => noOpinion(`no relationship found between node '${nodeName}' and this object`)

export class NodeAuthorizer implements AttributeAuthorizer {
  constructor(private readonly graph: NodeGraph) {}

  authorize(attributes: AuthorizationAttributes): AuthorizationResult {
    const {isNode, nodeName} = nodeIdentity(attributes.user)
    if (!isNode) return noOpinion()
    if (!nodeName) return noOpinion(`unknown node for user ${goQuote(attributes.user.username)}`)
    if (!attributes.isResourceRequest) return noOpinion()
    const group = attributes.apiGroup ?? ''
    const resource = attributes.resource ?? ''
    if (group === '') {
      switch (resource) {
        case 'configmaps':
          return this.authorizeReadNamespacedObject(nodeName, 'configmaps', attributes)
        case 'persistentvolumeclaims':
          if (attributes.subresource === 'status') return this.authorizeStatusUpdate(nodeName, 'persistentvolumeclaims', attributes)
          return this.authorizeGet(nodeName, 'persistentvolumeclaims', attributes)
        case 'nodes':
          return this.authorizeNode(nodeName, attributes)
        case 'pods':
          return this.authorizePod(nodeName, attributes)
      }
    }
    if (group === coordinationGroup && resource === 'leases' && !attributes.subresource) {
      return this.authorizeLease(nodeName, attributes)
    }
    return rulesAllow(attributes, staticRules) ? allow : noOpinion()
  }

  /** Kubernetes' NodeAuthorizer.RulesFor: a node's rules depend on its objects, so none are listed
   *  and the list is marked incomplete; anyone else gets nothing from this authorizer. */
  resolveRules(user: UserInfo): ResolvedRules {
    if (!nodeIdentity(user).isNode) return {resourceRules: [], nonResourceRules: [], incomplete: false, errors: []}
    return {resourceRules: [], nonResourceRules: [], incomplete: true, errors: ['node authorizer does not support user rule resolution']}
  }

  /** its own Node: read by name (before it exists, too); create (the name is not known on create:
   *  the body's is for admission to check), update and patch of it and of nodes/status */
  private authorizeNode(nodeName: string, attributes: AuthorizationAttributes): AuthorizationResult {
    const subresource = attributes.subresource ?? ''
    const name = attributes.name ?? ''
    const verb = attributes.verb
    if (subresource === '' && ['get', 'list', 'watch'].includes(verb)) {
      if (name === nodeName) return allow
      if (!name) return noOpinion(`node '${nodeName}' cannot read all nodes, only its own Node object`)
      return noOpinion(`node '${nodeName}' cannot read '${name}', only its own Node object`)
    }
    // writes of any Node: the NodeRestriction admission plugin limits a node to its own, in its words
    // (`nodes "b" is forbidden: node "a" is not allowed to modify node "b"`), as Kubernetes splits it
    if (subresource === '' && verb === 'create') return allow
    if ((subresource === '' || subresource === 'status') && (verb === 'update' || verb === 'patch')) return allow
    return noOpinion()
  }

  /** pods bound to it: get by name, list and watch with spec.nodeName=<node> (or by name); status
   *  writes and the final delete of those it has stopped; mirror pods of its static pods (the body's
   *  spec.nodeName is admission's to check, as Kubernetes' NodeRestriction does) */
  private authorizePod(nodeName: string, attributes: AuthorizationAttributes): AuthorizationResult {
    const subresource = attributes.subresource ?? ''
    const verb = attributes.verb
    if (subresource === '') {
      switch (verb) {
        case 'get':
          return this.authorizeGet(nodeName, 'pods', attributes)
        case 'list':
        case 'watch':
          if ((attributes.fieldSelector ?? []).some((r) => r.field === 'spec.nodeName' && r.operator === '=' && r.value === nodeName)) return allow
          if (attributes.name) return this.authorizeRelated(nodeName, 'pods', attributes)
          return noOpinion('can only list/watch pods with spec.nodeName field selector')
        // mirror pods, and deleting pods: NodeRestriction keeps both to pods bound to this node
        case 'create':
        case 'delete':
          return allow
      }
    }
    // its pods' status and evictions: NodeRestriction checks the pod is bound to this node, as
    // Kubernetes splits it
    if (subresource === 'status' && (verb === 'update' || verb === 'patch')) return allow
    if (subresource === 'eviction' && verb === 'create') return allow
    return noOpinion()
  }

  /** Kubernetes' authorizeReadNamespacedObject: get, list and watch of one object its pods use */
  private authorizeReadNamespacedObject(nodeName: string, resource: RelatedResource, attributes: AuthorizationAttributes): AuthorizationResult {
    if (!['get', 'list', 'watch'].includes(attributes.verb)) return noOpinion('can only read resources of this type')
    if (attributes.subresource) return noOpinion('cannot read subresource')
    if (!attributes.namespace) return noOpinion('can only read namespaced object of this type')
    return this.authorizeRelated(nodeName, resource, attributes)
  }

  /** Kubernetes' authorizeGet: get of one related object */
  private authorizeGet(nodeName: string, resource: RelatedResource | 'pods', attributes: AuthorizationAttributes): AuthorizationResult {
    if (attributes.verb !== 'get') return noOpinion('can only get individual resources of this type')
    if (attributes.subresource) return noOpinion('cannot get subresource')
    return this.authorizeRelated(nodeName, resource, attributes)
  }

  /** Kubernetes' authorizeStatusUpdate: update and patch of the status of a related object */
  private authorizeStatusUpdate(nodeName: string, resource: RelatedResource, attributes: AuthorizationAttributes): AuthorizationResult {
    if (attributes.verb !== 'update' && attributes.verb !== 'patch') return noOpinion('can only get/update/patch this type')
    return this.authorizeRelated(nodeName, resource, attributes)
  }

  /** Kubernetes' authorize: the named object has a path to the node in the graph */
  private authorizeRelated(nodeName: string, resource: RelatedResource | 'pods', attributes: AuthorizationAttributes): AuthorizationResult {
    const name = attributes.name ?? ''
    if (!name) return noOpinion('No Object name found')
    const namespace = attributes.namespace ?? ''
    const related = resource === 'pods' ? this.graph.podNode(namespace, name) === nodeName : this.graph.hasPathFrom(nodeName, resource, namespace, name)
    return related ? allow : noRelationship(nodeName)
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
}
