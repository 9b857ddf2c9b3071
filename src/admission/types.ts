// Admission: what a write looks like to the plugins that may change it (mutating) or refuse it
// (validating), as Kubernetes' admission.Attributes. The registry builds the attributes and runs
// the chain: mutating plugins before the object is validated, validating plugins after, then the
// write. A plugin refuses by throwing an ApiError (its code is the answer's).
import type {AnyObject, KindDeclaration, UserInfo} from '../api/types.js'

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'

export interface GroupVersionKind {
  group: string
  version: string
  kind: string
}

export interface GroupVersionResource {
  group: string
  version: string
  resource: string
}

export interface AdmissionAttributes {
  operation: Operation
  kind: GroupVersionKind
  resource: GroupVersionResource
  /** '' for the main resource */
  subresource: string
  name: string
  /** '' for cluster-scoped objects */
  namespace: string
  /** the object being written (null on DELETE); mutating plugins may replace it */
  object: AnyObject | null
  /** the stored object (null on CREATE) */
  oldObject: AnyObject | null
  userInfo: UserInfo
  dryRun: boolean
  /** CreateOptions / UpdateOptions / DeleteOptions as Kubernetes sends them to webhooks */
  options: AnyObject | null
  declaration: KindDeclaration
  /** the Namespace object of a namespaced request (null when there is none) */
  namespaceObject(): Promise<AnyObject | null>
  /** add a `Warning` header to the answer */
  warn(message: string): void
  /** add an audit annotation (key already prefixed, e.g. `policy.example.com/reason`) */
  annotate(key: string, value: string): void
}

export interface MutatingPlugin {
  readonly name: string
  /** may change attributes.object in place or return a replacement */
  admit(attributes: AdmissionAttributes): Promise<AnyObject | void>
}

export interface ValidatingPlugin {
  readonly name: string
  /** false when the plugin has nothing to say about the request: the chain skips it without a
   *  promise (most requests concern none of the built-in plugins: this is on every write's path) */
  handles?(attributes: AdmissionAttributes): boolean
  validate(attributes: AdmissionAttributes): Promise<void>
}
