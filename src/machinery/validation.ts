// Name and value validators with Kubernetes' rules and messages (k8s.io/apimachinery
// pkg/util/validation, pkg/api/validate/content, pkg/api/validation). The is* functions return a
// list of detail messages, empty when the value is valid; callers wrap each message in a FieldError
// with invalid(field, value, message). Lengths are measured in UTF-8 bytes, as Go's len() does.
//
// Kubernetes words its length limits two ways and so do we: the DNS and config-key checks say
// "must be no more than N characters", the label key and value checks say "... N bytes".

import {byteLength, forbidden, goQuote, invalid, required, tooLong, type FieldError} from './field-errors.js'

// ---- message helpers (validation.MaxLenError, RegexError, ...) ----

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`
}

function maxLenBytesError(length: number): string {
  return `must be no more than ${length} bytes`
}

function emptyError(): string {
  return 'must be non-empty'
}

function regexError(msg: string, format: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${format}')`
  // Kubernetes' own rendering: each example is followed by "', " and joined with " or ".
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${format}')`
}

function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`
}

function anchored(format: string): RegExp {
  return new RegExp('^(?:' + format + ')$')
}

// ---- DNS names ----

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?'
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
const dns1123LabelRegexp = anchored(dns1123LabelFmt)

const dns1123SubdomainFmt = dns1123LabelFmt + '(\\.' + dns1123LabelFmt + ')*'
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
const dns1123SubdomainRegexp = anchored(dns1123SubdomainFmt)

const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?'
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"
const dns1035LabelRegexp = anchored(dns1035LabelFmt)

export const DNS1123LabelMaxLength = 63
export const DNS1123SubdomainMaxLength = 253
export const DNS1035LabelMaxLength = 63

/** A lower-case RFC 1123 label (at most 63 characters): `my-name`, `123-abc`. */
export function isDNS1123Label(value: string | null | undefined): string[] {
  // a string field left out is Go's ""
  value ??= ''
  const errs: string[] = []
  if (byteLength(value) > DNS1123LabelMaxLength) errs.push(maxLenError(DNS1123LabelMaxLength))
  if (!dns1123LabelRegexp.test(value)) {
    // a valid subdomain that is not a valid label can only be failing on its dots
    if (dns1123SubdomainRegexp.test(value)) errs.push('must not contain dots')
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'))
  }
  return errs
}

/** A lower-case RFC 1123 subdomain (at most 253 characters): `example.com`. */
export function isDNS1123Subdomain(value: string | null | undefined): string[] {
  // a string field left out is Go's ""
  value ??= ''
  const errs: string[] = []
  if (byteLength(value) > DNS1123SubdomainMaxLength) errs.push(maxLenError(DNS1123SubdomainMaxLength))
  if (!dns1123SubdomainRegexp.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'))
  return errs
}

/** An RFC 1035 label (at most 63 characters, starting with a letter): `my-name`, `abc-123`. */
export function isDNS1035Label(value: string | null | undefined): string[] {
  // a string field left out is Go's ""
  value ??= ''
  const errs: string[] = []
  if (byteLength(value) > DNS1035LabelMaxLength) errs.push(maxLenError(DNS1035LabelMaxLength))
  if (!dns1035LabelRegexp.test(value)) errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'))
  return errs
}

// ---- qualified names (label keys) and label values ----

const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
const qualifiedNameRegexp = anchored(qualifiedNameFmt)
const qualifiedNameMaxLength = 63

const labelValueFmt = '(' + qualifiedNameFmt + ')?'
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
const labelValueRegexp = anchored(labelValueFmt)
export const LabelValueMaxLength = 63

/** The DNS-subdomain check of the content package, whose length message counts bytes. */
function isDNS1123SubdomainBytes(value: string): string[] {
  const errs: string[] = []
  if (byteLength(value) > DNS1123SubdomainMaxLength) errs.push(maxLenBytesError(DNS1123SubdomainMaxLength))
  if (!dns1123SubdomainRegexp.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'))
  return errs
}

/**
 * A "qualified name" (the form of label and annotation keys): an optional DNS-subdomain prefix and
 * `/`, then a name of at most 63 characters of `[-A-Za-z0-9_.]` starting and ending alphanumeric.
 */
export function isQualifiedName(value: string | null | undefined): string[] {
  // a string field left out is Go's ""
  value ??= ''
  const errs: string[] = []
  const parts = value.split('/')
  let name: string
  if (parts.length === 1) {
    name = parts[0]!
  } else if (parts.length === 2) {
    const prefix = parts[0]!
    name = parts[1]!
    if (prefix.length === 0) errs.push('prefix part ' + emptyError())
    else for (const msg of isDNS1123SubdomainBytes(prefix)) errs.push('prefix part ' + msg)
  } else {
    return [
      'a valid label key ' +
        regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ]
  }
  if (name.length === 0) errs.push('name part ' + emptyError())
  else if (byteLength(name) > qualifiedNameMaxLength) errs.push('name part ' + maxLenBytesError(qualifiedNameMaxLength))
  if (!qualifiedNameRegexp.test(name)) {
    errs.push('name part ' + regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc'))
  }
  return errs
}

/** A label value: empty, or at most 63 characters of `[-A-Za-z0-9_.]` starting and ending alphanumeric. */
export function isValidLabelValue(value: string | null | undefined): string[] {
  // a string field left out is Go's ""
  value ??= ''
  const errs: string[] = []
  if (byteLength(value) > LabelValueMaxLength) errs.push(maxLenBytesError(LabelValueMaxLength))
  if (!labelValueRegexp.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'))
  return errs
}

// ---- other identifiers ----

const configMapKeyFmt = '[-._a-zA-Z0-9]+'
const configMapKeyErrMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
const configMapKeyRegexp = anchored(configMapKeyFmt)

function hasChDirPrefix(value: string): string[] {
  if (value === '.') return ["must not be '.'"]
  if (value === '..') return ["must not be '..'"]
  if (value.startsWith('..')) return ["must not start with '..'"]
  return []
}

/** A key of a ConfigMap or Secret: `[-._a-zA-Z0-9]+`, at most 253 characters, not `.`, `..` or `..*`. */
export function isConfigMapKey(value: string | null | undefined): string[] {
  // a string field left out is Go's ""
  value ??= ''
  const errs: string[] = []
  if (byteLength(value) > DNS1123SubdomainMaxLength) errs.push(maxLenError(DNS1123SubdomainMaxLength))
  if (!configMapKeyRegexp.test(value)) {
    errs.push(regexError(configMapKeyErrMsg, configMapKeyFmt, 'key.name', 'KEY_NAME', 'key-name'))
  }
  errs.push(...hasChDirPrefix(value))
  return errs
}

const cIdentifierFmt = '[A-Za-z_][A-Za-z0-9_]*'
const cIdentifierErrMsg =
  "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'"
const cIdentifierRegexp = anchored(cIdentifierFmt)

/** An identifier in C (format only, any length): `my_name`, `MY_NAME`, `MyName`. */
export function isCIdentifier(value: string | null | undefined): string[] {
  // a string field left out is Go's ""
  value ??= ''
  if (cIdentifierRegexp.test(value)) return []
  return [regexError(cIdentifierErrMsg, cIdentifierFmt, 'my_name', 'MY_NAME', 'MyName')]
}

/** A non-zero TCP/UDP port number, 1 to 65535. */
export function isValidPortNum(port: number): string[] {
  if (Number.isInteger(port) && port >= 1 && port <= 65535) return []
  return [inclusiveRangeError(1, 65535)]
}

/** An integer within [min, max] inclusive. */
export function isInRange(value: number, min: number, max: number): string[] {
  if (value >= min && value <= max) return []
  return [inclusiveRangeError(min, max)]
}

// ---- object names (apimachinery's ValidateNameFunc) ----

/**
 * Validates a resource name. `prefix` is true when the value is a generateName prefix that will get
 * random characters appended, in which case a trailing dash is tolerated. Returns detail messages.
 */
export type ValidateNameFunc = (name: string, prefix?: boolean) => string[]

/**
 * Kubernetes' maskTrailingDash: a trailing '-' of a prefix longer than one character is masked so
 * that it validates. Kubernetes replaces the last *two* characters by "a" (so "ab-" checks as "aa");
 * we keep that so both accept and reject exactly the same prefixes.
 */
function maskTrailingDash(name: string): string {
  if (name.length > 1 && name.endsWith('-')) return name.slice(0, name.length - 2) + 'a'
  return name
}

/** Names that must be DNS subdomains (most kinds: ConfigMap, Deployment, Pod, ...). */
export function nameIsDNSSubdomain(name: string, prefix = false): string[] {
  return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name)
}

/** Names that must be RFC 1123 labels (Namespace). */
export function nameIsDNSLabel(name: string, prefix = false): string[] {
  return isDNS1123Label(prefix ? maskTrailingDash(name) : name)
}

/** Names that must be RFC 1035 labels (Service). */
export function nameIsDNS1035Label(name: string, prefix = false): string[] {
  return isDNS1035Label(prefix ? maskTrailingDash(name) : name)
}

/** The default object name check: a DNS subdomain, with generateName prefix mode when `prefix`. */
export function validateObjectName(name: string, prefix = false): string[] {
  return nameIsDNSSubdomain(name, prefix)
}

// ---- labels and annotations of an object ----

/**
 * Validates a label map (metav1 validation.ValidateLabels): every key a qualified name, every value
 * a valid label value. Errors name `fieldPath` itself, with the key or value as the bad value.
 */
export function validateLabels(labels: Record<string, string> | null | undefined, fieldPath: string): FieldError[] {
  const errs: FieldError[] = []
  for (const [key, value] of Object.entries(labels ?? {})) {
    for (const msg of isQualifiedName(key)) errs.push(invalid(fieldPath, key, msg))
    for (const msg of isValidLabelValue(value)) errs.push(invalid(fieldPath, value, msg))
  }
  return errs
}

/** The total size (keys plus values, in bytes) all annotations of an object may take: 256 KiB. */
export const TotalAnnotationSizeLimitB = 256 * 1024

/**
 * Validates an annotation map (ValidateAnnotations): every key a qualified name ignoring case, and
 * the total size of keys and values at most 256 KiB.
 */
export function validateAnnotations(annotations: Record<string, string> | null | undefined, fieldPath: string): FieldError[] {
  const errs: FieldError[] = []
  let total = 0
  for (const [key, value] of Object.entries(annotations ?? {})) {
    for (const msg of isQualifiedName(key.toLowerCase())) errs.push(invalid(fieldPath, key, msg))
    total += byteLength(key) + byteLength(value)
  }
  if (total > TotalAnnotationSizeLimitB) errs.push(tooLong(fieldPath, '', TotalAnnotationSizeLimitB))
  return errs
}

/**
 * Validates `name` and `generateName` of an object's metadata as ValidateObjectMetaAccessor does:
 * generateName is checked in prefix mode, and a name is required.
 */
export function validateNameFields(
  meta: {name?: string; generateName?: string},
  nameFn: ValidateNameFunc = nameIsDNSSubdomain,
  fieldPath = 'metadata',
): FieldError[] {
  const errs: FieldError[] = []
  const generateName = meta.generateName ?? ''
  if (generateName.length > 0) {
    for (const msg of nameFn(generateName, true)) errs.push(invalid(`${fieldPath}.generateName`, generateName, msg))
  }
  const name = meta.name ?? ''
  if (name.length === 0) {
    errs.push(required(`${fieldPath}.name`, 'name or generateName is required'))
  } else {
    for (const msg of nameFn(name, false)) errs.push(invalid(`${fieldPath}.name`, name, msg))
  }
  return errs
}

/**
 * Validates a metav1.LabelSelector (ValidateLabelSelector): In/NotIn need values, Exists/DoesNotExist
 * forbid them, operators must be known, keys qualified names and values label values.
 */
export function validateLabelSelector(
  selector: {matchLabels?: Record<string, string>; matchExpressions?: {key: string; operator: string; values?: string[]}[]} | null | undefined,
  fieldPath: string,
): FieldError[] {
  if (selector == null) return []
  const errs = validateLabels(selector.matchLabels, `${fieldPath}.matchLabels`)
  for (const [i, expr] of (selector.matchExpressions ?? []).entries()) {
    const path = `${fieldPath}.matchExpressions[${i}]`
    const values = expr.values ?? []
    switch (expr.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) {
          errs.push(required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"))
        }
        break
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) {
          errs.push(forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        }
        break
      default:
        errs.push(invalid(`${path}.operator`, expr.operator, 'not a valid selector operator'))
    }
    for (const msg of isQualifiedName(expr.key)) errs.push(invalid(`${path}.key`, expr.key ?? '', msg))
    values.forEach((value, j) => {
      for (const msg of isValidLabelValue(value)) errs.push(invalid(`${path}.values[${j}]`, value, msg))
    })
  }
  return errs
}

// ---- IP addresses and CIDRs ----

export type IPFamily = 'IPv4' | 'IPv6'

/** An address as Go's net.ParseIP sees it: always 16 bytes, IPv4 stored IPv4-mapped. */
interface ParsedIP {
  bytes: number[]
  /** the text was in IPv6 form (so "::ffff:1.2.3.4" is IPv4-mapped IPv6, "1.2.3.4" is not) */
  v6Text: boolean
  /** a field had leading zeros, which the strict parser (netip) rejects */
  leadingZeros: boolean
}

const v4MappedPrefix = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]

/** Leading decimal digits of s as Go's dtoi reads them: [value, count] or null. */
function decimalPrefix(s: string): [number, number] | null {
  let n = 0
  let i = 0
  for (; i < s.length && s[i]! >= '0' && s[i]! <= '9'; i++) {
    n = n * 10 + (s.charCodeAt(i) - 48)
    if (n >= 0xffffff) return null
  }
  return i === 0 ? null : [n, i]
}

/** Leading hex digits of s as Go's xtoi reads them: [value, count] or null. */
function hexPrefix(s: string): [number, number] | null {
  let n = 0
  let i = 0
  for (; i < s.length && /[0-9a-fA-F]/.test(s[i]!); i++) {
    n = n * 16 + parseInt(s[i]!, 16)
    if (n >= 0xffffff) return null
  }
  return i === 0 ? null : [n, i]
}

/** Go's (pre-1.17, "sloppy") IPv4 parser: four decimal fields, leading zeros tolerated. */
function parseIPv4(s: string): {bytes: number[]; leadingZeros: boolean} | null {
  const bytes: number[] = []
  let leadingZeros = false
  for (let i = 0; i < 4; i++) {
    if (s.length === 0) return null
    if (i > 0) {
      if (s[0] !== '.') return null
      s = s.slice(1)
    }
    const d = decimalPrefix(s)
    if (d === null || d[0] > 0xff) return null
    if (d[1] > 1 && s[0] === '0') leadingZeros = true
    bytes.push(d[0])
    s = s.slice(d[1])
  }
  if (s.length !== 0) return null
  return {bytes: [...v4MappedPrefix, ...bytes], leadingZeros}
}

/** Go's IPv6 parser: hex groups, one optional "::", an optional trailing dotted IPv4. */
function parseIPv6(s: string): {bytes: number[]; leadingZeros: boolean} | null {
  const ip: number[] = new Array<number>(16).fill(0)
  let leadingZeros = false
  let ellipsis = -1
  if (s.startsWith('::')) {
    ellipsis = 0
    s = s.slice(2)
    if (s.length === 0) return {bytes: ip, leadingZeros}
  }
  let i = 0
  while (i < 16) {
    const h = hexPrefix(s)
    if (h === null || h[0] > 0xffff) return null
    if (h[1] < s.length && s[h[1]] === '.') {
      if (ellipsis < 0 && i !== 12) return null
      if (i + 4 > 16) return null
      const v4 = parseIPv4(s)
      if (v4 === null) return null
      if (v4.leadingZeros) leadingZeros = true
      for (let k = 0; k < 4; k++) ip[i + k] = v4.bytes[12 + k]!
      s = ''
      i += 4
      break
    }
    if (h[1] > 4) leadingZeros = true
    ip[i] = h[0] >> 8
    ip[i + 1] = h[0] & 0xff
    i += 2
    s = s.slice(h[1])
    if (s.length === 0) break
    if (s[0] !== ':' || s.length === 1) return null
    s = s.slice(1)
    if (s[0] === ':') {
      if (ellipsis >= 0) return null
      ellipsis = i
      s = s.slice(1)
      if (s.length === 0) break
    }
  }
  if (s.length !== 0) return null
  if (i < 16) {
    if (ellipsis < 0) return null
    const n = 16 - i
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]!
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0
  } else if (ellipsis >= 0) {
    return null // "::" must stand for at least one zero group
  }
  return {bytes: ip, leadingZeros}
}

/** netutils.ParseIPSloppy: the form is chosen by whichever of '.' or ':' comes first. */
function parseIPSloppy(s: string): ParsedIP | null {
  for (const ch of s) {
    if (ch === '.') {
      const p = parseIPv4(s)
      return p && {...p, v6Text: false}
    }
    if (ch === ':') {
      const p = parseIPv6(s)
      return p && {...p, v6Text: true}
    }
  }
  return null
}

function isV4Mapped(bytes: number[]): boolean {
  return v4MappedPrefix.every((b, i) => bytes[i] === b)
}

/** Go's net.IP.String(): dotted quad for IPv4 (and IPv4-mapped), RFC 5952 text for IPv6. */
function formatIP(bytes: number[]): string {
  if (isV4Mapped(bytes)) return bytes.slice(12).join('.')
  const groups: number[] = []
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!)
  let bestStart = -1
  let bestLen = 0
  for (let i = 0; i < 8; i++) {
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i >= 2 && j - i > bestLen) {
      bestStart = i
      bestLen = j - i
    }
  }
  const hex = (g: number[]) => g.map((x) => x.toString(16)).join(':')
  if (bestStart < 0) return hex(groups)
  return hex(groups.slice(0, bestStart)) + '::' + hex(groups.slice(bestStart + bestLen))
}

/**
 * The family of an address: 'IPv4' or 'IPv6', or null when it does not parse. As in Kubernetes,
 * an IPv4-mapped IPv6 address ("::ffff:1.2.3.4") counts as IPv4.
 */
export function ipFamilyOf(ip: string): IPFamily | null {
  const parsed = parseIPSloppy(ip)
  if (parsed === null) return null
  return isV4Mapped(parsed.bytes) ? 'IPv4' : 'IPv6'
}

/**
 * An IP address valid by Kubernetes' current (strict) rules (IsValidIP): IPv4 or IPv6, no leading
 * zeros, not IPv4-mapped IPv6, and in canonical form (e.g. `2001:db8::1`, not `2001:DB8:0::1`).
 */
export function isValidIP(value: string): string[] {
  const parsed = parseIPSloppy(value)
  if (parsed === null) return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']
  if (parsed.leadingZeros) return ['must not have leading 0s']
  if (parsed.v6Text && isV4Mapped(parsed.bytes)) return ['must not be an IPv4-mapped IPv6 address']
  const canonical = formatIP(parsed.bytes)
  if (value !== canonical) return [`must be in canonical form (${goQuote(canonical)})`]
  return []
}

export interface ParsedCIDR {
  /** the address as written, in canonical text (`10.1.2.3` for `10.1.2.3/8`) */
  ip: string
  /** the prefix length, counted within the family (so 24 for `::ffff:10.0.0.0/120`) */
  prefix: number
  family: IPFamily
  /** the network in canonical CIDR text, host bits cleared (`10.0.0.0/8`) */
  network: string
}

interface SloppyCIDR {
  ip: ParsedIP
  /** prefix length as written, counted over 32 bits for IPv4 text, 128 for IPv6 text */
  bits: number
  /** the address with host bits cleared (16 bytes) */
  masked: number[]
  prefixLeadingZeros: boolean
}

/** netutils.ParseCIDRSloppy. */
function parseCIDRSloppy(s: string): SloppyCIDR | null {
  const slash = s.indexOf('/')
  if (slash < 0) return null
  const addr = s.slice(0, slash)
  const mask = s.slice(slash + 1)
  let ip: ParsedIP | null = null
  const v4 = parseIPv4(addr)
  if (v4 !== null) ip = {...v4, v6Text: false}
  else {
    const v6 = parseIPv6(addr)
    if (v6 !== null) ip = {...v6, v6Text: true}
  }
  const d = decimalPrefix(mask)
  if (ip === null || d === null || d[1] !== mask.length) return null
  const width = ip.v6Text ? 128 : 32
  const bits = d[0]
  if (bits > width) return null
  const offset = 128 - width // IPv4 masks apply to the last 4 bytes
  const masked = ip.bytes.map((b, i) => {
    if (i * 8 < offset) return b
    const keep = Math.max(0, Math.min(8, bits - (i * 8 - offset)))
    return b & ((0xff << (8 - keep)) & 0xff)
  })
  return {ip, bits, masked, prefixLeadingZeros: mask.length > 1 && mask[0] === '0'}
}

/** Go's net.IPNet.String() for the parsed value: network text and prefix within the family. */
function networkOf(c: SloppyCIDR): {text: string; prefix: number; family: IPFamily} {
  if (isV4Mapped(c.masked)) {
    const prefix = c.ip.v6Text ? c.bits - 96 : c.bits
    return {text: `${formatIP(c.masked)}/${prefix}`, prefix, family: 'IPv4'}
  }
  return {text: `${formatIP(c.masked)}/${c.bits}`, prefix: c.bits, family: 'IPv6'}
}

/**
 * Parses CIDR text as Kubernetes' lenient parser does (ParseCIDRSloppy); null when it is not a CIDR.
 * The address may have host bits set (`ip` keeps them, `network` clears them).
 */
export function parseCIDR(text: string): ParsedCIDR | null {
  const c = parseCIDRSloppy(text)
  if (c === null) return null
  const net = networkOf(c)
  return {ip: formatIP(c.ip.bytes), prefix: net.prefix, family: net.family, network: net.text}
}

/**
 * A subnet in CIDR form valid by Kubernetes' strict rules (IsValidCIDR): no leading zeros, not
 * IPv4-mapped, no bits set beyond the prefix length, canonical (`10.0.0.0/8`, `2001:db8::/32`).
 */
export function isValidCIDR(value: string): string[] {
  const c = parseCIDRSloppy(value)
  if (c === null) return ['must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)']
  if (c.ip.leadingZeros || c.prefixLeadingZeros) return ['must not have leading 0s in IP or prefix length']
  if (c.ip.v6Text && isV4Mapped(c.ip.bytes)) return ['must not have an IPv4-mapped IPv6 address']
  if (c.masked.some((b, i) => b !== c.ip.bytes[i])) return ['must not have bits set beyond the prefix length']
  const canonical = networkOf(c).text
  if (value !== canonical) return [`must be in canonical form (${goQuote(canonical)})`]
  return []
}
