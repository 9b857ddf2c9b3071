// resource.Quantity as Kubernetes parses and prints it (k8s.io/apimachinery/pkg/api/resource).
//
// A quantity is a signed decimal number with an optional suffix: a binary SI suffix (Ki Mi Gi Ti Pi
// Ei, powers of 1024), a decimal SI suffix (n u m "" k M G T P E) or a decimal exponent (e3, E-2).
// Kubernetes keeps every quantity at nano precision at most, rounding a finer value *up* (away from
// zero), so the exact value of any quantity is a whole number of nano-units: that is what we keep,
// as a bigint, together with the format the text was written in (which the canonical text keeps).
//
// The canonical text (Quantity.String()) is what Kubernetes shows in objects and error messages:
// `1536Mi` for `1.5Gi`, `1500m` for `1.5`, `1k` for `1000`, `0` for any zero.

export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI'

export interface Quantity {
  /** the exact value in units of 10^-9 (every quantity is rounded up to nano precision) */
  nanos: bigint
  /** how the value was written; decides the canonical text's suffix family */
  format: QuantityFormat
  /** the value as a float (not rounded to an integer) */
  value: number
  /** Kubernetes' MilliValue(): thousandths, rounded away from zero */
  milli: bigint
}

/** The regular expression Kubernetes quotes when a quantity's text is malformed. */
export const quantityPattern = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'

/** Kubernetes' three parse errors (resource.ErrFormatWrong, ErrNumeric, ErrSuffix), verbatim. */
export const quantityErrors = {
  format: `quantities must match the regular expression '${quantityPattern}'`,
  numeric: 'unable to parse numeric part of quantity',
  suffix: "unable to parse quantity's suffix",
} as const

export class QuantityParseError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'QuantityParseError'
  }
}

const NANO = 1_000_000_000n
/** BinarySI quantities are capped at the largest int64, as Kubernetes caps them. */
const MAX_BINARY_NANOS = (2n ** 63n - 1n) * NANO
/** Exponents beyond this would make numbers of absurd size; Kubernetes has no such limit. */
const MAX_EXPONENT = 10_000

const decimalSuffixes: Record<string, number> = {n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18}
const binarySuffixes: Record<string, number> = {Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60}
const decimalSuffixOf = new Map(Object.entries(decimalSuffixes).map(([s, e]) => [e, s]))
const binarySuffixOf = new Map(Object.entries(binarySuffixes).map(([s, e]) => [e, s]))

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'

/** parseQuantityString: sign, integer digits, fraction digits and the suffix text, as Kubernetes splits them. */
function split(text: string): {positive: boolean; num: string; denom: string; suffix: string} {
  let positive = true
  let pos = 0
  if (text[0] === '-') {
    positive = false
    pos++
  } else if (text[0] === '+') {
    pos++
  }
  while (text[pos] === '0') pos++
  if (pos >= text.length) return {positive, num: '0', denom: '', suffix: ''}
  const numStart = pos
  while (isDigit(text[pos])) pos++
  const num = text.slice(numStart, pos) || '0'
  let denom = ''
  if (text[pos] === '.') {
    const denomStart = ++pos
    while (isDigit(text[pos])) pos++
    denom = text.slice(denomStart, pos)
  }
  const suffixStart = pos
  while (pos < text.length && 'eEinumkKMGTP'.includes(text[pos]!)) pos++
  if (text[pos] === '-' || text[pos] === '+') pos++
  while (isDigit(text[pos])) pos++
  if (pos < text.length) throw new QuantityParseError(quantityErrors.format)
  return {positive, num, denom, suffix: text.slice(suffixStart)}
}

/** The suffixer's interpret(): base, exponent and format, or null for an unknown suffix. */
function interpret(suffix: string): {base: 2 | 10; exponent: number; format: QuantityFormat} | null {
  if (suffix in decimalSuffixes) return {base: 10, exponent: decimalSuffixes[suffix]!, format: 'DecimalSI'}
  if (suffix in binarySuffixes) return {base: 2, exponent: binarySuffixes[suffix]!, format: 'BinarySI'}
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?[0-9]+$/.test(suffix.slice(1))) {
    // strconv.ParseInt(…, 10, 64), then Go's int32 conversion, which wraps
    const parsed = BigInt(suffix.slice(1))
    if (parsed < -(2n ** 63n) || parsed >= 2n ** 63n) return null
    return {base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent'}
  }
  return null
}

/** Divides rounding away from zero (magnitudes are positive here, so: ceiling). */
function divCeil(n: bigint, d: bigint): bigint {
  return (n + d - 1n) / d
}

function make(nanos: bigint, format: QuantityFormat): Quantity {
  const milliAbs = divCeil(nanos < 0n ? -nanos : nanos, 1_000_000n)
  return {nanos, format, value: Number(nanos) / 1e9, milli: nanos < 0n ? -milliAbs : milliAbs}
}

/**
 * Whether ParseQuantity keeps the text as the quantity's String(): its fast path (at most 18 digits, no
 * finer than a nano; a binary suffix without a fraction, Ki to Ti) keeps it when it looks canonical,
 * by its own test, which looks at the digits only: so `+1`, `01`, `1.` and `1.500` are kept as written.
 */
function keepsWrittenText(num: string, denom: string, meaning: {exponent: number; format: QuantityFormat}): boolean {
  const digits = num + denom
  if (meaning.format === 'BinarySI') {
    if (denom.length > 0) return false
    // 2^exponent has about exponent*3/10 decimal digits
    if (14 - num.length - Math.trunc((meaning.exponent * 3) / 10) < 0) return false
    return (BigInt(num) & 7n) !== 0n
  }
  if (digits.length > 18) return false
  const scale = meaning.exponent - denom.length
  if (scale < -9) return false
  return scale % 3 === 0 && !digits.endsWith('000') && digits[0] !== '0'
}

/**
 * Parses a quantity as Kubernetes' ParseQuantity does. Throws QuantityParseError with Kubernetes'
 * message for malformed text (`quantities must match the regular expression ...`) or an unknown
 * suffix (`unable to parse quantity's suffix`).
 */
export function parseQuantity(text: string): Quantity {
  return parse(text).quantity
}

function parse(text: string): {quantity: Quantity; keepsText: boolean} {
  if (text.length === 0) throw new QuantityParseError(quantityErrors.format)
  const {positive, num, denom, suffix} = split(text)
  const meaning = interpret(suffix)
  if (meaning === null) throw new QuantityParseError(quantityErrors.suffix)
  const keepsText = text === '0' || keepsWrittenText(num, denom, meaning)
  const digits = BigInt(num + denom)
  let magnitude: bigint
  if (meaning.base === 2) {
    // (num.denom) * 2^exponent, rounded up to nano precision
    magnitude = divCeil(digits * (1n << BigInt(meaning.exponent)) * NANO, 10n ** BigInt(denom.length))
    if (magnitude > MAX_BINARY_NANOS) magnitude = MAX_BINARY_NANOS
  } else {
    // (num.denom) * 10^exponent in nano units: digits * 10^(exponent + 9 - fraction digits)
    const shift = meaning.exponent + 9 - denom.length
    if (shift > MAX_EXPONENT) throw new QuantityParseError(quantityErrors.numeric)
    if (shift >= 0) magnitude = digits * 10n ** BigInt(shift)
    else if (digits === 0n) magnitude = 0n
    else if (-shift > (num + denom).length + 1) magnitude = 1n // far below a nano: rounds up to one
    else magnitude = divCeil(digits, 10n ** BigInt(-shift))
  }
  return {quantity: make(positive ? magnitude : -magnitude, meaning.format), keepsText}
}

/** The Kubernetes parse error for the text, or null when it is a valid quantity. */
export function quantityError(text: string): string | null {
  try {
    parseQuantity(text)
    return null
  } catch (e) {
    if (e instanceof QuantityParseError) return e.message
    throw e
  }
}

/** Removes factors of `base` from a non-zero value: [what remains, how many were removed]. */
function removeFactors(value: bigint, base: bigint): [bigint, number] {
  let times = 0
  const negative = value < 0n
  let result = negative ? -value : value
  while (result >= base && result % base === 0n) {
    result /= base
    times++
  }
  return [negative ? -result : result, times]
}

/**
 * The canonical text of a quantity (Kubernetes' CanonicalizeBytes): the largest suffix of the
 * quantity's family that keeps the number whole, e.g. `1536Mi`, `1500m`, `1k`, `1e3`, `0`.
 * A binary quantity below 1024 in magnitude or with a fraction is shown with decimal suffixes.
 */
export function formatQuantity(q: Pick<Quantity, 'nanos' | 'format'>): string {
  if (q.nanos === 0n) return '0'
  let format = q.format
  if (format === 'BinarySI') {
    const whole = q.nanos % NANO === 0n
    if ((q.nanos > -1024n * NANO && q.nanos < 1024n * NANO) || !whole) format = 'DecimalSI'
  }
  if (format === 'BinarySI') {
    const [amount, times] = removeFactors(q.nanos / NANO, 1024n)
    const exponent = Math.min(times, 6)
    const scaled = amount * 1024n ** BigInt(times - exponent)
    return `${scaled}${binarySuffixOf.get(exponent * 10) ?? ''}`
  }
  let [mantissa, exponent] = removeFactors(q.nanos, 10n)
  exponent -= 9
  while (exponent % 3 !== 0) {
    mantissa *= 10n
    exponent--
  }
  if (format === 'DecimalExponent') return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`
  // past E (10^18) there is no decimal SI suffix: Kubernetes 1.32 prints the mantissa alone, which
  // reads back as another value ("1000E" as 1); orch writes the exponent, as later Kubernetes does
  const suffix = decimalSuffixOf.get(exponent)
  return suffix === undefined ? `${mantissa}e${exponent}` : `${mantissa}${suffix}`
}

/**
 * The text Kubernetes stores and serves for a quantity written `text`: String() of ParseQuantity(text),
 * which is the text itself when ParseQuantity kept it (see keepsWrittenText), else its canonical form.
 * Throws QuantityParseError when invalid.
 */
export function canonicalQuantity(text: string): string {
  const {quantity, keepsText} = parse(text)
  return keepsText ? text : formatQuantity(quantity)
}

/** Compares two quantities by value: negative, zero or positive like a sort comparator. */
export function compareQuantities(a: Pick<Quantity, 'nanos'>, b: Pick<Quantity, 'nanos'>): number {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0
}

/** Kubernetes' Value(): the value as a whole number, rounded away from zero. */
export function quantityValue(q: Pick<Quantity, 'nanos'>): bigint {
  const magnitude = divCeil(q.nanos < 0n ? -q.nanos : q.nanos, NANO)
  return q.nanos < 0n ? -magnitude : magnitude
}
