// ValidatingWebhookConfiguration (admissionregistration.orch.io/v1): Kubernetes'
// ValidateValidatingWebhookConfiguration — webhook names qualified and unique, exactly one of url or
// service (url parsed as Go's url.Parse does: https only, a host, no user info, fragment or query;
// service port 1..65535, service path segments DNS-1123 subdomains),
// admissionReviewVersions with one orch understands, sideEffects None or NoneOnDryRun (Some and
// Unknown are the v1beta1 form), timeoutSeconds 1..30, rules, selectors, at most 64 match conditions.
import type {AnyObject, FieldError} from '../../api/types.js'
import {duplicate, goQuote, invalid, notSupported, required} from '../../machinery/field-errors.js'
import {isDNS1035Label, isDNS1123Subdomain} from '../../machinery/validation.js'
import {validateFailurePolicy, validateLabelSelectorField, validateMatchConditions, validateRule, type ExpressionCompiler} from './admission-common.js'
import {list, obj, str, type KindValidator} from './common.js'

/** The AdmissionReview versions orch sends (admission.orch.io/v1, and v1beta1 with the same shape). */
export const ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1']

/** What Go's url.Parse makes of a URL, as far as ValidateWebhookURL looks at it. */
interface GoURL {
  scheme: string
  host: string
  /** Userinfo.String(): undefined when the URL has no `@` */
  user?: string
  fragment: string
  rawQuery: string
}

const HOST_CHARS = /^[A-Za-z0-9!$&'()*+,;=:[\]<>"\-_.~]$/
const USERINFO_CHARS = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/

/** Go's url.unescape: the unescaped text, or the error (`invalid URL escape "%zz"`). */
function goUnescape(text: string, host: boolean): string {
  const bytes: number[] = []
  const raw = Buffer.from(text, 'utf8')
  for (let i = 0; i < raw.length; ) {
    const c = raw[i]
    if (c === 0x25) {
      const hex = raw.subarray(i + 1, i + 3).toString('latin1')
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new Error(`invalid URL escape ${goQuote(raw.subarray(i, i + 3).toString('utf8'))}`)
      if (host && parseInt(hex[0], 16) < 8 && hex !== '25') throw new Error(`invalid URL escape ${goQuote(`%${hex}`)}`)
      bytes.push(parseInt(hex, 16))
      i += 3
      continue
    }
    if (host && c < 0x80 && !HOST_CHARS.test(String.fromCharCode(c))) throw new Error(`invalid character ${goQuote(String.fromCharCode(c))} in host name`)
    bytes.push(c)
    i++
  }
  return Buffer.from(bytes).toString('utf8')
}

/** Go's url.escape in encodeUserPassword mode. */
function escapeUserinfo(text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += /^[A-Za-z0-9\-_.~$&+,;=]$/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Go's parseHost: a port after the host must be digits; then the host is unescaped. */
function goParseHost(host: string): string {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']')
    if (close < 0) throw new Error("missing ']' in host")
    const colonPort = host.slice(close + 1)
    if (!/^(:[0-9]*)?$/.test(colonPort)) throw new Error(`invalid port ${goQuote(colonPort)} after host`)
  } else {
    const colon = host.lastIndexOf(':')
    if (colon >= 0 && !/^:[0-9]*$/.test(host.slice(colon))) throw new Error(`invalid port ${goQuote(host.slice(colon))} after host`)
  }
  return goUnescape(host, true)
}

/** Go's url.Parse (not via a request): the parts, or its error (`parse "URL": ...`). */
function goParseURL(raw: string): GoURL | {error: string} {
  const hash = raw.indexOf('#')
  const beforeFragment = hash < 0 ? raw : raw.slice(0, hash)
  const parsed: GoURL = {scheme: '', host: '', fragment: '', rawQuery: ''}
  try {
    if ([...beforeFragment].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)) throw new Error('net/url: invalid control character in URL')
    let rest = beforeFragment
    const scheme = /^[A-Za-z][A-Za-z0-9+\-.]*:/.exec(beforeFragment)
    if (beforeFragment.startsWith(':')) throw new Error('missing protocol scheme')
    if (scheme) {
      parsed.scheme = scheme[0].slice(0, -1).toLowerCase()
      rest = beforeFragment.slice(scheme[0].length)
    }
    if (rest.endsWith('?') && rest.split('?').length === 2) rest = rest.slice(0, -1)
    else if (rest.includes('?')) {
      parsed.rawQuery = rest.slice(rest.indexOf('?') + 1)
      rest = rest.slice(0, rest.indexOf('?'))
    }
    // a rootless path after a scheme is opaque (no host; not unescaped)
    const opaque = !rest.startsWith('/') && parsed.scheme !== ''
    if (!rest.startsWith('/')) {
      if (!opaque && rest.split('/')[0].includes(':')) throw new Error('first path segment in URL cannot contain colon')
    } else if (rest.startsWith('//') && (parsed.scheme !== '' || !rest.startsWith('///'))) {
      let authority = rest.slice(2)
      const slash = authority.indexOf('/')
      rest = slash < 0 ? '' : authority.slice(slash)
      if (slash >= 0) authority = authority.slice(0, slash)
      const at = authority.lastIndexOf('@')
      parsed.host = goParseHost(at < 0 ? authority : authority.slice(at + 1))
      if (at >= 0) {
        const userinfo = authority.slice(0, at)
        if (!USERINFO_CHARS.test(userinfo)) throw new Error('net/url: invalid userinfo')
        const colon = userinfo.indexOf(':')
        parsed.user = colon < 0
          ? escapeUserinfo(goUnescape(userinfo, false))
          : `${escapeUserinfo(goUnescape(userinfo.slice(0, colon), false))}:${escapeUserinfo(goUnescape(userinfo.slice(colon + 1), false))}`
      }
    }
    if (!opaque) goUnescape(rest, false)
  } catch (error) {
    return {error: `parse ${goQuote(beforeFragment)}: ${(error as Error).message}`}
  }
  if (hash >= 0) {
    try {
      parsed.fragment = goUnescape(raw.slice(hash + 1), false)
    } catch (error) {
      return {error: `parse ${goQuote(raw)}: ${(error as Error).message}`}
    }
  }
  return parsed
}

/** Kubernetes' ValidateWebhookURL (https forced). */
function validateURL(raw: string, path: string): FieldError[] {
  const form = '; desired format: https://host[/path]'
  const url = goParseURL(raw)
  if ('error' in url) return [required(path, `url must be a valid URL: ${url.error}${form}`)]
  const errs: FieldError[] = []
  if (url.scheme !== 'https') errs.push(invalid(path, url.scheme, `'https' is the only allowed URL scheme${form}`))
  if (url.host === '') errs.push(invalid(path, url.host, `host must be provided${form}`))
  if (url.user !== undefined) errs.push(invalid(path, url.user, 'user information is not permitted in the URL'))
  if (url.fragment !== '') errs.push(invalid(path, url.fragment, 'fragments are not permitted in the URL'))
  if (url.rawQuery !== '') errs.push(invalid(path, url.rawQuery, 'query parameters are not permitted in the URL'))
  return errs
}

/** Kubernetes' ValidateWebhookService: name, namespace, port, and a path of DNS-1123 subdomain segments. */
function validateService(raw: unknown, path: string): FieldError[] {
  const service = obj(raw)
  const errs: FieldError[] = []
  if (str(service.name) === '') errs.push(required(`${path}.name`, 'service name is required'))
  if (str(service.namespace) === '') errs.push(required(`${path}.namespace`, 'service namespace is required'))
  if (service.port !== undefined && (typeof service.port !== 'number' || service.port < 1 || service.port > 65535)) {
    errs.push(invalid(`${path}.port`, service.port, 'port is not valid: must be between 1 and 65535, inclusive'))
  }
  if (typeof service.path !== 'string') return errs
  const urlPath = service.path
  if (urlPath === '/' || urlPath === '') return errs
  if (urlPath === '//') return [...errs, invalid(`${path}.path`, urlPath, 'segment[0] may not be empty')]
  if (!urlPath.startsWith('/')) errs.push(invalid(`${path}.path`, urlPath, "must start with a '/'"))
  let toCheck = urlPath.slice(1)
  if (toCheck.endsWith('/')) toCheck = toCheck.slice(0, -1)
  toCheck.split('/').forEach((segment, i) => {
    if (segment === '') errs.push(invalid(`${path}.path`, urlPath, `segment[${i}] may not be empty`))
    else for (const problem of isDNS1123Subdomain(segment)) errs.push(invalid(`${path}.path`, urlPath, `segment[${i}]: ${problem}`))
  })
  return errs
}

function validateClientConfig(raw: unknown, path: string): FieldError[] {
  const config = obj(raw)
  const hasURL = config.url !== undefined && config.url !== null
  const hasService = config.service !== undefined && config.service !== null
  if (hasURL === hasService) return [required(path, 'exactly one of url or service is required')]
  if (hasURL) return validateURL(str(config.url), `${path}.url`)
  return validateService(config.service, `${path}.service`)
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
  if (sideEffects === undefined || sideEffects === null || sideEffects === '') errs.push(required(`${path}.sideEffects`, 'must specify one of None, NoneOnDryRun'))
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
