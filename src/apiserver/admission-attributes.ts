// What admission plugins, policies and webhooks are told of a write (Kubernetes' admission.Attributes).
import type {AnyObject, KindDeclaration, RequestContext} from '../api/types.js'
import type {AdmissionAttributes, Operation} from '../admission/types.js'

export interface AdmittedWrite {
  operation: Operation
  object: AnyObject | null
  old: AnyObject | null
  name: string
  subresource: string
  context: RequestContext
  dryRun: boolean | undefined
}

/** The CreateOptions / UpdateOptions / DeleteOptions admission webhooks see: the request's, as it gave them. */
function operationOptions(operation: Operation, dryRun: boolean | undefined, context: RequestContext): AnyObject | null {
  const kind = operation === 'CREATE' ? 'CreateOptions' : operation === 'UPDATE' ? 'UpdateOptions' : operation === 'DELETE' ? 'DeleteOptions' : undefined
  if (!kind) return null
  const options: AnyObject = {kind, apiVersion: 'meta.orch.io/v1'}
  // the request's own options where it has them (the context of an in-process write has none)
  if (context.requestOptions) return Object.assign(options, context.requestOptions)
  if (dryRun) options.dryRun = ['All']
  if (context.fieldManager) options.fieldManager = context.fieldManager
  return options
}

/** Kubernetes' admission.Attributes for a write of a kind; the namespace object is read once per
 *  request, however many policies and webhooks ask. */
export function admissionAttributesOf(
  declaration: KindDeclaration,
  namespaceOf: (name: string) => Promise<AnyObject | null>,
  write: AdmittedWrite,
): AdmissionAttributes {
  const {operation, object, old, name, subresource, context, dryRun} = write
  // a Namespace is admitted in its own name as namespace (Kubernetes' handlers take it from the path),
  // though policies see no namespaceObject for it ("the namespace object has the namespace of itself")
  const isNamespace = declaration.group === '' && declaration.resource === 'namespaces'
  const namespace = declaration.namespaced ? (object?.metadata?.namespace ?? old?.metadata?.namespace ?? context.namespace ?? '') : isNamespace ? name : ''
  let namespaceObject: Promise<AnyObject | null> | undefined
  return {
    operation,
    kind: {group: declaration.group, version: declaration.version, kind: declaration.kind},
    resource: {group: declaration.group, version: declaration.version, resource: declaration.resource},
    subresource,
    name,
    namespace,
    object,
    oldObject: old,
    userInfo: context.user ?? {username: '', groups: []},
    dryRun: dryRun === true,
    options: operationOptions(operation, dryRun, context),
    declaration,
    namespaceObject: () => (namespaceObject ??= namespace && !isNamespace ? namespaceOf(namespace) : Promise.resolve(null)),
    warn: (message) => context.warnings?.push(message),
    annotate: (key, value) => {
      if (context.audit) context.audit[key] = value
    },
  }
}
