// SubjectAccessReview, SelfSubjectAccessReview and LocalSubjectAccessReview: "may this user do
// this?", answered by the authorizer chain and returned in status, nothing stored (Kubernetes'
// pkg/registry/authorization).
// Validation is Kubernetes' pkg/apis/authorization/validation: an invalid review is a 422.
import {authorizationGroup} from '../../api/authorization/shared.js'
import type {AnyObject, FieldError, UserInfo} from '../../api/types.js'
import {forbidden, invalid, required} from '../../machinery/field-errors.js'
import {parseFieldSelector, type FieldRequirement} from '../../machinery/fields.js'
import {errors} from '../../machinery/status.js'
import type {AuthorizationAttributes, AuthorizationResult} from './rbac.js'

/** What a review asks: the chain's own answer, where no-opinion is neither allowed nor denied
 *  (an Authorizer's `evaluate`). */
export interface ReviewAuthorizer {
  evaluate(attributes: AuthorizationAttributes): AuthorizationResult
}

const apiVersion = `${authorizationGroup}/v1`

function isObject(value: unknown): value is AnyObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null
}

/** ValidateFieldSelectorRequirement / ValidateLabelSelectorRequirement, unknown operators allowed
 *  (a newer client's operators still get an answer). */
function validateRequirement(requirement: AnyObject, path: string): FieldError[] {
  const errs: FieldError[] = []
  if (!requirement.key) errs.push(required(`${path}.key`, 'must be specified'))
  const values = Array.isArray(requirement.values) ? requirement.values : []
  if ((requirement.operator === 'In' || requirement.operator === 'NotIn') && values.length === 0) {
    errs.push(required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"))
  }
  if ((requirement.operator === 'Exists' || requirement.operator === 'DoesNotExist') && values.length > 0) {
    errs.push(forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
  }
  return errs
}

function validateSelectorAttributes(selector: unknown, path: string): FieldError[] {
  if (!isObject(selector)) return []
  const errs: FieldError[] = []
  const raw = typeof selector.rawSelector === 'string' ? selector.rawSelector : ''
  const requirements: unknown[] = Array.isArray(selector.requirements) ? selector.requirements : []
  if (raw && requirements.length > 0) errs.push(invalid(`${path}.rawSelector`, raw, 'may not specified at the same time as requirements'))
  if (!raw && requirements.length === 0) {
    errs.push(required(`${path}.requirements`, `when ${path} is specified, requirements or rawSelector is required`))
  }
  requirements.forEach((r, i) => errs.push(...validateRequirement(isObject(r) ? r : {}, `${path}.requirements[${i}]`)))
  return errs
}

function validateAttributes(spec: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const resource = present(spec.resourceAttributes)
  const nonResource = present(spec.nonResourceAttributes)
  if (resource && nonResource) {
    errs.push(invalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'cannot be specified in combination with resourceAttributes'))
  }
  if (!resource && !nonResource) {
    // Kubernetes names resourceAttributes and shows the (nil) nonResourceAttributes: "null"
    errs.push(invalid('spec.resourceAttributes', 'null', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'))
  }
  return errs
}

function validateResourceAttributes(spec: AnyObject): FieldError[] {
  if (!isObject(spec.resourceAttributes)) return []
  return [
    ...validateSelectorAttributes(spec.resourceAttributes.fieldSelector, 'spec.resourceAttributes.fieldSelector'),
    ...validateSelectorAttributes(spec.resourceAttributes.labelSelector, 'spec.resourceAttributes.labelSelector'),
  ]
}

/** metadata must be empty: managedFields and a null creationTimestamp (what clients send) aside, and
 *  the namespace for a LocalSubjectAccessReview */
function validateEmptyMetadata(body: AnyObject, exceptNamespace = false): FieldError[] {
  const metadata = isObject(body.metadata) ? body.metadata : {}
  const rest = Object.entries(metadata).filter(([key, value]) => {
    if (key === 'managedFields' || value === null || value === undefined || value === '') return false
    if (exceptNamespace && key === 'namespace') return false
    if (Array.isArray(value) || isObject(value)) return Object.keys(value).length > 0
    return !(typeof value === 'number' && value === 0)
  })
  if (rest.length === 0) return []
  return [invalid('metadata', metadata, exceptNamespace ? 'must be empty except for namespace' : 'must be empty')]
}

/** Kubernetes' ValidateSubjectAccessReviewSpec. */
function validateSubjectAccessReviewSpec(spec: AnyObject): FieldError[] {
  const errs = validateAttributes(spec)
  const groups = Array.isArray(spec.groups) ? spec.groups : []
  if (!spec.user && groups.length === 0) {
    errs.push(invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified'))
  }
  errs.push(...validateResourceAttributes(spec))
  return errs
}

/** Kubernetes' ValidateSubjectAccessReview. */
export function validateSubjectAccessReview(body: AnyObject): FieldError[] {
  const spec = isObject(body.spec) ? body.spec : {}
  return [...validateSubjectAccessReviewSpec(spec), ...validateEmptyMetadata(body)]
}

/** Kubernetes' ValidateLocalSubjectAccessReview: metadata.namespace (the path's) is the only
 *  namespace the review may ask about, and only about resources. */
export function validateLocalSubjectAccessReview(body: AnyObject): FieldError[] {
  const spec = isObject(body.spec) ? body.spec : {}
  const errs = [...validateSubjectAccessReviewSpec(spec), ...validateEmptyMetadata(body, true)]
  const namespace = isObject(body.metadata) ? (body.metadata.namespace ?? '') : ''
  if (isObject(spec.resourceAttributes) && (spec.resourceAttributes.namespace ?? '') !== namespace) {
    errs.push(invalid('spec.resourceAttributes.namespace', spec.resourceAttributes.namespace ?? '', 'must match metadata.namespace'))
  }
  if (present(spec.nonResourceAttributes)) {
    errs.push(invalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'disallowed on this kind of request'))
  }
  return errs
}

/** Kubernetes' ValidateSelfSubjectAccessReview. */
export function validateSelfSubjectAccessReview(body: AnyObject): FieldError[] {
  const spec = isObject(body.spec) ? body.spec : {}
  return [...validateAttributes(spec), ...validateResourceAttributes(spec), ...validateEmptyMetadata(body)]
}

/** A review's fieldSelector as authorizers see it (Kubernetes' fieldSelectorAsSelector): rawSelector
 *  parsed, or requirements `In` / `NotIn` of one value; anything else gives no requirements. */
function fieldSelectorAttributes(selector: unknown): {fieldSelector?: FieldRequirement[]} {
  if (!isObject(selector)) return {}
  try {
    if (typeof selector.rawSelector === 'string' && selector.rawSelector) return {fieldSelector: [...parseFieldSelector(selector.rawSelector).requirements]}
  } catch {
    return {}
  }
  const requirements: FieldRequirement[] = []
  for (const r of Array.isArray(selector.requirements) ? selector.requirements : []) {
    const values = Array.isArray(r?.values) ? r.values : []
    if ((r?.operator !== 'In' && r?.operator !== 'NotIn') || values.length !== 1) return {}
    requirements.push({field: String(r.key ?? ''), operator: r.operator === 'In' ? '=' : '!=', value: String(values[0])})
  }
  return requirements.length > 0 ? {fieldSelector: requirements} : {}
}

/** Kubernetes' ResourceAttributesFrom / NonResourceAttributesFrom: an empty version means all. */
export function reviewAttributes(user: UserInfo, spec: AnyObject): AuthorizationAttributes {
  if (isObject(spec.resourceAttributes)) {
    const ra = spec.resourceAttributes
    return {
      user,
      verb: ra.verb ?? '',
      isResourceRequest: true,
      apiGroup: ra.group ?? '',
      apiVersion: ra.version || '*',
      resource: ra.resource ?? '',
      subresource: ra.subresource ?? '',
      namespace: ra.namespace ?? '',
      name: ra.name ?? '',
      ...fieldSelectorAttributes(ra.fieldSelector),
    }
  }
  const nra = isObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : {}
  return {user, verb: nra.verb ?? '', isResourceRequest: false, path: nra.path ?? ''}
}

/** status as authorization/v1 serialises it: allowed always, the rest only when set. */
function reviewStatus(authorizer: ReviewAuthorizer, attributes: AuthorizationAttributes): AnyObject {
  let result: AuthorizationResult
  try {
    result = authorizer.evaluate(attributes)
  } catch (error) {
    result = {decision: 'no-opinion', reason: '', error: error instanceof Error ? error.message : String(error)}
  }
  const status: AnyObject = {allowed: result.decision === 'allow'}
  if (result.decision === 'deny') status.denied = true
  if (result.reason) status.reason = result.reason
  if (result.error) status.evaluationError = result.error
  return status
}

function userFromSpec(spec: AnyObject): UserInfo {
  const user: UserInfo = {username: typeof spec.user === 'string' ? spec.user : '', groups: Array.isArray(spec.groups) ? [...spec.groups] : []}
  if (spec.uid) user.uid = spec.uid
  if (isObject(spec.extra)) {
    user.extra = Object.fromEntries(Object.entries(spec.extra).map(([key, values]) => [key, Array.isArray(values) ? [...values] : []]))
  }
  return user
}

/** Answers a SubjectAccessReview for spec.user / groups / extra / uid; throws a 422 ApiError when
 *  the review is invalid. Returns the review with status filled in. */
export function subjectAccessReview(authorizer: ReviewAuthorizer, body: AnyObject): AnyObject {
  const errs = validateSubjectAccessReview(body)
  if (errs.length > 0) throw errors.invalid({group: authorizationGroup, kind: 'SubjectAccessReview'}, '', errs)
  const spec = structuredClone(body.spec) as AnyObject
  const status = reviewStatus(authorizer, reviewAttributes(userFromSpec(spec), spec))
  return {apiVersion, kind: 'SubjectAccessReview', metadata: structuredClone(body.metadata ?? {}), spec, status}
}

/** Answers a LocalSubjectAccessReview POSTed to `namespace` (the body's metadata.namespace is the
 *  path's by now, as the create handler makes it): 422 when invalid, 400 without a namespace. */
export function localSubjectAccessReview(authorizer: ReviewAuthorizer, body: AnyObject, namespace: string): AnyObject {
  const errs = validateLocalSubjectAccessReview(body)
  if (errs.length > 0) throw errors.invalid({group: authorizationGroup, kind: 'LocalSubjectAccessReview'}, '', errs)
  if (!namespace) throw errors.badRequest(`namespace is required on this type: ${namespace}`)
  if (namespace !== (body.metadata?.namespace ?? '')) throw errors.badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`)
  const spec = structuredClone(body.spec) as AnyObject
  const status = reviewStatus(authorizer, reviewAttributes(userFromSpec(spec), spec))
  return {apiVersion, kind: 'LocalSubjectAccessReview', metadata: structuredClone(body.metadata), spec, status}
}

/** Answers a SelfSubjectAccessReview for the caller; 400 without a caller, 422 when invalid. */
export function selfSubjectAccessReview(authorizer: ReviewAuthorizer, user: UserInfo | undefined, body: AnyObject): AnyObject {
  if (!user) throw errors.badRequest('no user present on request')
  const errs = validateSelfSubjectAccessReview(body)
  if (errs.length > 0) throw errors.invalid({group: authorizationGroup, kind: 'SelfSubjectAccessReview'}, '', errs)
  const spec = structuredClone(body.spec) as AnyObject
  const status = reviewStatus(authorizer, reviewAttributes(user, spec))
  return {apiVersion, kind: 'SelfSubjectAccessReview', metadata: structuredClone(body.metadata ?? {}), spec, status}
}
