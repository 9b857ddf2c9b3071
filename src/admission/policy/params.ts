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
  /** a misconfiguration: failurePolicy decides */
  | {error: string}

export function resolveParams(policySpec: AnyObject, binding: AnyObject, requestNamespace: string, lookup: ParamLookup): ParamsOutcome {
  const paramKind = policySpec.paramKind
  if (!paramKind) return {params: [null]}
  const kind = lookup(String(paramKind.apiVersion ?? ''), String(paramKind.kind ?? ''))
  if (!kind) return {error: `failed to configure policy: failed to find resource referenced by paramKind: '${paramKind.apiVersion}, Kind=${paramKind.kind}'`}
  const ref = binding.spec?.paramRef
  if (!ref) return {params: [null]}
  const namespace = kind.namespaced ? (ref.namespace || requestNamespace) : ''
  if (kind.namespaced && !namespace) {
    return {error: 'cannot use a namespaced paramRef without a namespace: the request is cluster-scoped and paramRef.namespace is empty'}
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
  return {error: `no params found for policy binding with \`Deny\` parameterNotFoundAction`}
}
