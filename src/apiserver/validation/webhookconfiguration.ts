// ValidatingWebhookConfiguration (admissionregistration.orch.io/v1): Kubernetes'
// ValidateValidatingWebhookConfiguration — webhook names qualified and unique, exactly one of url or
// service (url https only, no user info, fragment or query), service port 1..65535,
// admissionReviewVersions with one orch understands, sideEffects None or NoneOnDryRun (Some and
// Unknown are the v1beta1 form), timeoutSeconds 1..30, rules, selectors, at most 64 match conditions.
import type {AnyObject, FieldError} from '../../api/types.js'
import {duplicate, invalid, notSupported, required} from '../../machinery/field-errors.js'
import {isDNS1035Label, isDNS1123Subdomain} from '../../machinery/validation.js'
import {validateFailurePolicy, validateLabelSelectorField, validateMatchConditions, validateRule, type ExpressionCompiler} from './admission-common.js'
import {list, obj, str, type KindValidator} from './common.js'

/** The AdmissionReview versions orch sends (admission.orch.io/v1, and v1beta1 with the same shape). */
export const ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1']

function validateURL(raw: string, path: string): FieldError[] {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return [invalid(path, raw, 'host must be specified')]
  }
  const errs: FieldError[] = []
  if (url.protocol !== 'https:') errs.push(invalid(path, raw, "'https' is the only allowed URL scheme"))
  if (url.hostname === '') errs.push(invalid(path, raw, 'host must be specified'))
  if (url.username || url.password) errs.push(invalid(path, raw, 'user information is not permitted in the URL'))
  if (url.hash || raw.includes('#')) errs.push(invalid(path, raw, 'fragments are not permitted in the URL'))
  if (url.search || raw.includes('?')) errs.push(invalid(path, raw, 'query parameters are not permitted in the URL'))
  return errs
}

function validateClientConfig(raw: unknown, path: string): FieldError[] {
  const config = obj(raw)
  const hasURL = config.url !== undefined && config.url !== null
  const hasService = config.service !== undefined && config.service !== null
  if (hasURL === hasService) return [required(path, 'exactly one of url or service is required')]
  if (hasURL) return validateURL(str(config.url), `${path}.url`)
  const service = obj(config.service)
  const errs: FieldError[] = []
  if (str(service.name) === '') errs.push(required(`${path}.service.name`, 'service name is required'))
  if (str(service.namespace) === '') errs.push(required(`${path}.service.namespace`, 'service namespace is required'))
  const servicePath = service.path
  if (servicePath !== undefined && servicePath !== null && servicePath !== '') {
    if (!String(servicePath).startsWith('/')) errs.push(invalid(`${path}.service.path`, servicePath, "must start with a '/'"))
    if (String(servicePath).includes('?') || String(servicePath).includes('#')) errs.push(invalid(`${path}.service.path`, servicePath, 'must not contain a query or fragment'))
  }
  if (service.port !== undefined && (typeof service.port !== 'number' || service.port < 1 || service.port > 65535)) {
    errs.push(invalid(`${path}.service.port`, service.port, 'port is not valid: must be between 1 and 65535, inclusive'))
  }
  return errs
}

function validateReviewVersions(raw: unknown, path: string): FieldError[] {
  const versions = list(raw).map(String)
  if (versions.length === 0) return [required(path, `must specify one of ${ADMISSION_REVIEW_VERSIONS.join(', ')}`)]
  const errs: FieldError[] = []
  const seen = new Set<string>()
  versions.forEach((v, i) => {
    for (const message of isDNS1035Label(v)) errs.push(invalid(`${path}[${i}]`, v, message))
    if (seen.has(v)) errs.push(invalid(`${path}[${i}]`, v, 'duplicate version'))
    seen.add(v)
  })
  if (!versions.some((v) => ADMISSION_REVIEW_VERSIONS.includes(v))) {
    errs.push(invalid(path, versions, `must include at least one of ${ADMISSION_REVIEW_VERSIONS.join(', ')}`))
  }
  return errs
}

function validateWebhook(raw: unknown, path: string, compile: ExpressionCompiler | undefined): FieldError[] {
  const webhook = obj(raw)
  const errs: FieldError[] = []
  const name = str(webhook.name)
  if (name === '') errs.push(required(`${path}.name`))
  else {
    for (const message of isDNS1123Subdomain(name)) errs.push(invalid(`${path}.name`, name, message))
    if (name.split('.').length < 3) errs.push(invalid(`${path}.name`, name, 'should be a domain with at least three segments separated by dots'))
  }
  list(webhook.rules).forEach((r, i) => errs.push(...validateRule(r, `${path}.rules[${i}]`)))
  errs.push(...validateFailurePolicy(webhook.failurePolicy, `${path}.failurePolicy`))
  if (webhook.matchPolicy !== undefined && !['Exact', 'Equivalent'].includes(webhook.matchPolicy)) {
    errs.push(notSupported(`${path}.matchPolicy`, webhook.matchPolicy, ['Equivalent', 'Exact']))
  }
  const sideEffects = webhook.sideEffects
  if (sideEffects === undefined || sideEffects === null || sideEffects === '') errs.push(required(`${path}.sideEffects`))
  else if (sideEffects !== 'None' && sideEffects !== 'NoneOnDryRun') errs.push(notSupported(`${path}.sideEffects`, sideEffects, ['None', 'NoneOnDryRun']))
  const timeout = webhook.timeoutSeconds
  if (timeout !== undefined && timeout !== null && (typeof timeout !== 'number' || timeout < 1 || timeout > 30)) {
    errs.push(invalid(`${path}.timeoutSeconds`, timeout, 'the timeout value must be between 1 and 30 seconds'))
  }
  errs.push(...validateReviewVersions(webhook.admissionReviewVersions, `${path}.admissionReviewVersions`))
  errs.push(...validateClientConfig(webhook.clientConfig, `${path}.clientConfig`))
  errs.push(...validateLabelSelectorField(webhook.namespaceSelector, `${path}.namespaceSelector`))
  errs.push(...validateLabelSelectorField(webhook.objectSelector, `${path}.objectSelector`))
  errs.push(...validateMatchConditions(webhook.matchConditions, `${path}.matchConditions`, compile, false))
  return errs
}

export function validateWebhookConfiguration(configuration: AnyObject, compile: ExpressionCompiler | undefined): FieldError[] {
  const errs: FieldError[] = []
  const seen = new Set<string>()
  list(configuration.webhooks).forEach((w, i) => {
    errs.push(...validateWebhook(w, `webhooks[${i}]`, compile))
    const name = str(obj(w).name)
    if (name && seen.has(name)) errs.push(duplicate(`webhooks[${i}].name`, name))
    seen.add(name)
  })
  return errs
}

export function webhookConfigurationValidator(compile: () => ExpressionCompiler | undefined): KindValidator {
  return {
    create: (object) => validateWebhookConfiguration(object, compile()),
    update: (object) => validateWebhookConfiguration(object, compile()),
  }
}
