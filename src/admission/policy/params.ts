// A binding's params: the objects of the policy's paramKind its paramRef names (by name, or by a
// label selector), looked up in the request's namespace unless paramRef.namespace says otherwise
// (cluster-scoped kinds: no namespace). No paramKind: one evaluation without `params`; a paramKind
// but no paramRef: one evaluation with `params` null.
import type {AnyObject} from '../../api/types.js'
import {labelSelectorFromObject, type LabelSelectorObject} from '../../machinery/labels.js'

/** The objects of a kind: undefined when the server serves no such kind (a misconfigured policy). */
export type ParamLookup = (apiVersion: string, kind: string) => {namespaced: boolean; objects(namespace: string): AnyObject[]} | undefined

export type ParamsOutcome =
  | {params: (AnyObject | null)[]}
  /** a misconfiguration of the policy (its paramKind) or of the binding (its paramRef): failurePolicy
   *  decides; the plugins prefix it with Kubernetes' `failed to configure policy|binding: ` */
  | {error: string; of: 'policy' | 'binding'}

/** apimachinery's GroupVersionKind.String(): `group/version, Kind=kind` (`/v1, Kind=ConfigMap`). */
function gvkString(apiVersion: string, kind: string): string {
  const slash = apiVersion.indexOf('/')
  const [group, version] = slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)]
  return `${group}/${version}, Kind=${kind}`
}

export function resolveParams(policySpec: AnyObject, binding: AnyObject, requestNamespace: string, lookup: ParamLookup): ParamsOutcome {
  const paramKind = policySpec.paramKind
  if (!paramKind) return {params: [null]}
  const kind = lookup(String(paramKind.apiVersion ?? ''), String(paramKind.kind ?? ''))
  if (!kind) return {error: `failed to find resource referenced by paramKind: '${gvkString(String(paramKind.apiVersion ?? ''), String(paramKind.kind ?? ''))}'`, of: 'policy'}
  const ref = binding.spec?.paramRef
  if (!ref) return {params: [null]}
  const namespace = kind.namespaced ? (ref.namespace || requestNamespace) : ''
  if (!kind.namespaced && ref.namespace) return {error: 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`', of: 'binding'}
  if (kind.namespaced && !namespace) {
    return {error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources', of: 'binding'}
  }
  let found: AnyObject[]
  if (ref.name) {
    found = kind.objects(namespace).filter((o) => o.metadata?.name === ref.name)
  } else {
    const selector = labelSelectorFromObject((ref.selector ?? {}) as LabelSelectorObject)
    found = kind.objects(namespace).filter((o) => selector.matches(o.metadata?.labels ?? {}))
  }
  if (found.length > 0) return {params: found}
  if (ref.parameterNotFoundAction === 'Allow') return {params: []}
  return {error: 'no params found for policy binding with `Deny` parameterNotFoundAction', of: 'binding'}
}
