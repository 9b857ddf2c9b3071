import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {
  canonicalQuantity,
  compareQuantities,
  formatQuantity,
  parseQuantity,
  QuantityParseError,
  quantityError,
  quantityErrors,
  quantityValue,
} from '../../src/machinery/quantity.js'

const formatError = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

describe('parseQuantity', () => {
  it('reads plain numbers, signs and fractions', () => {
    assert.equal(parseQuantity('1').nanos, 1_000_000_000n)
    assert.equal(parseQuantity('+1').nanos, 1_000_000_000n)
    assert.equal(parseQuantity('-1').nanos, -1_000_000_000n)
    assert.equal(parseQuantity('1.5').nanos, 1_500_000_000n)
    assert.equal(parseQuantity('.5').nanos, 500_000_000n)
    assert.equal(parseQuantity('1.').nanos, 1_000_000_000n)
    assert.equal(parseQuantity('007').nanos, 7_000_000_000n)
  })

  it('reads the decimal SI suffixes n u m k M G T P E', () => {
    const cases: [string, bigint][] = [
      ['1n', 1n],
      ['1u', 1_000n],
      ['1m', 1_000_000n],
      ['1k', 1_000_000_000_000n],
      ['1M', 10n ** 15n],
      ['1G', 10n ** 18n],
      ['1T', 10n ** 21n],
      ['1P', 10n ** 24n],
      ['1E', 10n ** 27n],
    ]
    for (const [text, nanos] of cases) {
      const q = parseQuantity(text)
      assert.equal(q.nanos, nanos, text)
      assert.equal(q.format, 'DecimalSI', text)
    }
  })

  it('reads the binary SI suffixes Ki Mi Gi Ti Pi Ei', () => {
    const cases: [string, bigint][] = [
      ['1Ki', 2n ** 10n],
      ['1Mi', 2n ** 20n],
      ['1Gi', 2n ** 30n],
      ['1Ti', 2n ** 40n],
      ['1Pi', 2n ** 50n],
      ['1Ei', 2n ** 60n],
    ]
    for (const [text, value] of cases) {
      const q = parseQuantity(text)
      assert.equal(q.nanos, value * 1_000_000_000n, text)
      assert.equal(q.format, 'BinarySI', text)
    }
    assert.equal(parseQuantity('1.5Gi').value, 1610612736)
  })

  it('reads decimal exponents e and E', () => {
    assert.equal(parseQuantity('1e3').nanos, 1_000_000_000_000n)
    assert.equal(parseQuantity('1E3').nanos, 1_000_000_000_000n)
    assert.equal(parseQuantity('1.5e3').nanos, 1_500_000_000_000n)
    assert.equal(parseQuantity('1e-3').nanos, 1_000_000n)
    assert.equal(parseQuantity('1e+3').format, 'DecimalExponent')
  })

  it('rounds values finer than a nano up, away from zero', () => {
    assert.equal(parseQuantity('0.1n').nanos, 1n)
    assert.equal(parseQuantity('1.0001n').nanos, 2n)
    assert.equal(parseQuantity('-0.1n').nanos, -1n)
    assert.equal(parseQuantity('1e-30').nanos, 1n)
  })

  it('caps binary quantities at the largest int64', () => {
    assert.equal(parseQuantity('8Ei').nanos, (2n ** 63n - 1n) * 1_000_000_000n)
  })

  it('reports milli values rounded away from zero', () => {
    assert.equal(parseQuantity('1.5').milli, 1500n)
    assert.equal(parseQuantity('100m').milli, 100n)
    assert.equal(parseQuantity('0.0001').milli, 1n)
    assert.equal(parseQuantity('-0.0001').milli, -1n)
    assert.equal(parseQuantity('250m').value, 0.25)
  })

  it('refuses malformed text with the Kubernetes message', () => {
    for (const text of ['', 'abc', '1x', '1 ', ' 1', '1.2.3', '1KiB', '1gi', '1e3x']) {
      assert.throws(() => parseQuantity(text), (e: unknown) => e instanceof QuantityParseError && e.message === formatError, JSON.stringify(text))
    }
    assert.equal(quantityErrors.format, formatError)
  })

  it('refuses unknown suffixes with the Kubernetes message', () => {
    for (const text of ['1K', '1mi', '1e', '1i', '--1', '1Gi2']) {
      assert.equal(quantityError(text), "unable to parse quantity's suffix", text)
    }
    assert.equal(quantityError('1Gi'), null)
  })
})

describe('formatQuantity', () => {
  it('prints the canonical text Kubernetes prints', () => {
    const cases: [string, string][] = [
      ['0', '0'],
      ['0Gi', '0'],
      ['-0', '0'],
      ['1', '1'],
      ['+1', '+1'],
      ['1000', '1k'],
      ['1500', '1500'],
      ['1.5', '1500m'],
      ['0.1', '100m'],
      ['100m', '100m'],
      ['1000m', '1'],
      ['1.G', '1.G'],
      ['12E', '12E'],
      ['0.1n', '1n'],
      ['1u', '1u'],
      ['1e3', '1e3'],
      ['1.5e3', '1500'],
      ['1e-3', '1e-3'],
      ['1000e0', '1e3'],
      ['1Ki', '1Ki'],
      ['1024Ki', '1Mi'],
      ['1.5Gi', '1536Mi'],
      ['100Mi', '100Mi'],
      ['0.5Ki', '512'],
      ['0.1Ki', '102400m'],
      ['1023', '1023'],
      ['-1.5Gi', '-1536Mi'],
      ['-100m', '-100m'],
      ['8Ei', '9223372036854775807'],
    ]
    for (const [text, canonical] of cases) assert.equal(canonicalQuantity(text), canonical, text)
  })

  it('formats a parsed quantity and round-trips its own output', () => {
    for (const text of ['1536Mi', '1500m', '1k', '1e3', '7', '-2Ki']) {
      const q = parseQuantity(text)
      assert.equal(formatQuantity(q), text)
      assert.equal(parseQuantity(formatQuantity(q)).nanos, q.nanos)
    }
  })
})

describe('canonicalQuantity (ParseQuantity, then String())', () => {
  it('keeps the text when "the number is in canonical form, reuse the string" (Kubernetes\' TestQuantityString)', () => {
    for (const text of ['1Gi', '300Mi', '6Ki', '1001Gi', '1Ti', '5', '500m', '1G', '1m', '80m', '1080m', '300M', '1T', '1234567M', '3k', '1025', '0', '1e9', '1e-3', '1e-9', '80e-3', '300e6', '1e12', '1e3', '3e3', '1n', '80n', '1080n', '1u', '80u', '1080u']) {
      assert.equal(canonicalQuantity(text), text)
    }
  })

  it('prints the canonical form of an alternate text (Kubernetes\' TestQuantityString alternates)', () => {
    const cases: [string, string][] = [
      ['1024Mi', '1Gi'],
      ['307200Ki', '300Mi'],
      ['1025024Mi', '1001Gi'],
      ['1024Gi', '1Ti'],
      ['5000m', '5'],
      ['0.5', '500m'],
      ['1000M', '1G'],
      ['0.001T', '1G'],
      ['1000u', '1m'],
      ['1.08', '1080m'],
      ['1080000000n', '1080m'],
      ['.001e12', '1e9'],
      ['0.001e0', '1e-3'],
      ['1000e-12', '1e-9'],
      ['00', '0'],
    ]
    for (const [text, canonical] of cases) assert.equal(canonicalQuantity(text), canonical, text)
  })

  it('emits what Kubernetes\' TestQuantityParseEmit expects, negated too', () => {
    const cases: [string, string][] = [
      ['1Ki', '1Ki'],
      ['1Mi', '1Mi'],
      ['1Gi', '1Gi'],
      ['1024Mi', '1Gi'],
      ['1000M', '1G'],
      ['.001Ki', '1024m'],
      ['.000001Ki', '1024u'],
      ['.000000001Ki', '1024n'],
      ['.000000000001Ki', '2n'],
    ]
    for (const [text, canonical] of cases) {
      assert.equal(canonicalQuantity(text), canonical, text)
      assert.equal(canonicalQuantity(`-${text}`), `-${canonical}`, `-${text}`)
    }
  })

  it('keeps a text its fast path deems canonical by its digits alone: a sign, leading zeros, a bare point, trailing zeros of a fraction', () => {
    assert.equal(canonicalQuantity('+1'), '+1')
    assert.equal(canonicalQuantity('01'), '01')
    assert.equal(canonicalQuantity('1.'), '1.')
    assert.equal(canonicalQuantity('1.500'), '1.500')
    assert.equal(canonicalQuantity('1E3'), '1E3')
    assert.equal(canonicalQuantity('+1Ki'), '+1Ki')
    // the canonical form otherwise: a scale not a multiple of 3, digits ending in 000 or starting with 0
    assert.equal(canonicalQuantity('1.5'), '1500m')
    assert.equal(canonicalQuantity('1.0'), '1')
    assert.equal(canonicalQuantity('1000'), '1k')
    assert.equal(canonicalQuantity('0.5'), '500m')
    assert.equal(canonicalQuantity('1000Mi'), '1000Mi')
    assert.equal(canonicalQuantity('8Ki'), '8Ki')
    assert.equal(canonicalQuantity('2048Ki'), '2Mi')
    // no fast path: Pi and Ei, more than 18 digits, finer than a nano, a binary fraction
    assert.equal(canonicalQuantity('1Pi'), '1Pi')
    assert.equal(canonicalQuantity('1.5Gi'), '1536Mi')
    assert.equal(canonicalQuantity('0.1Gi'), '107374182400m')
    assert.equal(canonicalQuantity('1234567890123456789'), '1234567890123456789')
  })

  it('has no decimal SI suffix past E: the exponent is written instead ("1000E" is 1e21; 1.32 would print 1, another value)', () => {
    assert.equal(canonicalQuantity('1000E'), '1e21')
    assert.equal(canonicalQuantity('10000000000000000000000'), '10e21')
    assert.equal(canonicalQuantity('12E'), '12E')
    assert.equal(canonicalQuantity('1e21'), '1e21')
  })

  it('reads any int64 exponent as Go does (ParseInt, then an int32 conversion)', () => {
    assert.equal(canonicalQuantity('1e400'), '10e399')
    assert.equal(canonicalQuantity('1e399'), '1e399')
    assert.equal(parseQuantity('1e4294967296').nanos, 1_000_000_000n)
    assert.equal(parseQuantity('1e2147483648').nanos, 1n)
    assert.equal(quantityError('1e9223372036854775808'), "unable to parse quantity's suffix")
  })
})

describe('compareQuantities and quantityValue', () => {
  it('compares by value across formats', () => {
    assert.equal(compareQuantities(parseQuantity('1Gi'), parseQuantity('1G')), 1)
    assert.equal(compareQuantities(parseQuantity('1000m'), parseQuantity('1')), 0)
    assert.equal(compareQuantities(parseQuantity('-1'), parseQuantity('0')), -1)
  })

  it('rounds Value() away from zero', () => {
    assert.equal(quantityValue(parseQuantity('1.5')), 2n)
    assert.equal(quantityValue(parseQuantity('-1.5')), -2n)
    assert.equal(quantityValue(parseQuantity('2Ki')), 2048n)
  })
})
