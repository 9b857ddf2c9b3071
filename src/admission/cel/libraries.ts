// Kubernetes' CEL libraries that cel-js lacks, registered on an Environment: strings (replace,
// charAt, reverse), lists (isSorted, sum, min, max, indexOf, lastIndexOf, slice, flatten, sort,
// distinct), regex (find, findAll), quantity, ip, cidr, url, and jsonpatch.escapeKey.
import type {Environment} from '@marcbachmann/cel-js'
import {canonicalIp, cidrContains, ipToBigInt, parseCidr, bigIntToIp, type Cidr} from '../../machinery/ipnet.js'
import {compareQuantities, formatQuantity, parseQuantity, quantityValue, type Quantity} from '../../machinery/quantity.js'

type Env = InstanceType<typeof Environment>

// ---------------------------------------------------------------------------------------- values

export class CelQuantity {
  constructor(readonly q: Quantity) {}
  toString(): string {
    return formatQuantity(this.q)
  }
}

export class CelIP {
  constructor(readonly address: string, readonly value: bigint, readonly family: 4 | 6) {}
}

export class CelCIDR {
  constructor(readonly cidr: Cidr, readonly text: string) {}
}

export class CelURL {
  constructor(readonly url: URL) {}
}

export class JSONPatchLibrary {}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  if (a instanceof CelQuantity && b instanceof CelQuantity) return compareQuantities(a.q, b.q)
  throw new Error('no such overload: the list elements are not comparable')
}

function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'bigint' || typeof b === 'bigint') return typeof a === typeof b && a === b
  return JSON.stringify(a) === JSON.stringify(b)
}

function toIP(text: string): CelIP {
  if (text.includes('/')) throw new Error(`IP Address "${text}" parse error during conversion from string: CIDR notation is not allowed`)
  const parsed = ipToBigInt(text)
  const canonical = canonicalIp(text)
  if (!parsed || !canonical) throw new Error(`IP Address "${text}" parse error during conversion from string`)
  return new CelIP(canonical, parsed.value, parsed.family)
}

function toCIDR(text: string): CelCIDR {
  const parsed = parseCidr(text)
  if (!parsed) throw new Error(`network address parse error during conversion from string: ${text}`)
  return new CelCIDR(parsed, text)
}

function inRange(ip: CelIP, base: string, prefix: number): boolean {
  const cidr = parseCidr(`${base}/${prefix}`)
  return cidr !== null && cidr.family === ip.family && cidrContains(cidr, ip.address)
}

function toQuantity(text: string): CelQuantity {
  return new CelQuantity(parseQuantity(text))
}

function addNanos(q: CelQuantity, nanos: bigint): CelQuantity {
  return new CelQuantity({...q.q, nanos: q.q.nanos + nanos, value: Number(q.q.nanos + nanos) / 1e9, milli: 0n})
}

function toURL(text: string): CelURL {
  // Kubernetes accepts absolute URIs and absolute paths
  try {
    return new CelURL(new URL(text))
  } catch {
    if (text.startsWith('/')) return new CelURL(new URL(text, 'relative:///'))
    throw new Error(`URL parse error during conversion from string: ${text}`)
  }
}

// ---------------------------------------------------------------------------------------- registration

export function registerLibraries(env: Env): void {
  // strings
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => s.split(a).join(b))
  env.registerFunction('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => {
    if (n < 0n) return s.split(a).join(b)
    let out = s
    let from = 0
    for (let i = 0n; i < n; i++) {
      const at = out.indexOf(a, from)
      if (at < 0) break
      out = out.slice(0, at) + b + out.slice(at + a.length)
      from = at + b.length
    }
    return out
  })
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const chars = [...s]
    if (i < 0n || i > BigInt(chars.length)) throw new Error(`index out of range: ${i}`)
    return chars[Number(i)] ?? ''
  })
  env.registerFunction('string.reverse(): string', (s: string) => [...s].reverse().join(''))
  // regex
  env.registerFunction('string.find(string): string', (s: string, re: string) => new RegExp(re).exec(s)?.[0] ?? '')
  env.registerFunction('string.findAll(string): list<string>', (s: string, re: string) => [...s.matchAll(new RegExp(re, 'g'))].map((m) => m[0]))
  env.registerFunction('string.findAll(string, int): list<string>', (s: string, re: string, n: bigint) => {
    const all = [...s.matchAll(new RegExp(re, 'g'))].map((m) => m[0])
    return n < 0n ? all : all.slice(0, Number(n))
  })
  // lists
  env.registerFunction('list.isSorted(): bool', (l: unknown[]) => l.every((v, i) => i === 0 || compare(l[i - 1], v) <= 0))
  env.registerFunction('list.sum(): dyn', (l: unknown[]) => {
    if (l.length === 0) return 0n
    if (l.every((v) => typeof v === 'bigint')) return (l as bigint[]).reduce((a, b) => a + b, 0n)
    if (l.every((v) => typeof v === 'number')) return (l as number[]).reduce((a, b) => a + b, 0)
    throw new Error('no such overload: sum of mixed or non-numeric elements')
  })
  const extreme = (sign: number) => (l: unknown[]) => {
    if (l.length === 0) throw new Error(`${sign > 0 ? 'max' : 'min'} called on an empty list`)
    return l.reduce((best, v) => (compare(v, best) * sign > 0 ? v : best))
  }
  env.registerFunction('list.min(): dyn', extreme(-1))
  env.registerFunction('list.max(): dyn', extreme(1))
  env.registerFunction('list.indexOf(dyn): int', (l: unknown[], v: unknown) => BigInt(l.findIndex((x) => sameValue(x, v))))
  env.registerFunction('list.lastIndexOf(dyn): int', (l: unknown[], v: unknown) => {
    for (let i = l.length - 1; i >= 0; i--) if (sameValue(l[i], v)) return BigInt(i)
    return -1n
  })
  env.registerFunction('list.slice(int, int): list<dyn>', (l: unknown[], a: bigint, b: bigint) => {
    if (a < 0n || b < a || b > BigInt(l.length)) throw new Error(`cannot slice(${a}, ${b}), list is length ${l.length}`)
    return l.slice(Number(a), Number(b))
  })
  env.registerFunction('list.flatten(): list<dyn>', (l: unknown[]) => l.flatMap((v) => (Array.isArray(v) ? v : [v])))
  env.registerFunction('list.sort(): list<dyn>', (l: unknown[]) => [...l].sort(compare))
  env.registerFunction('list.distinct(): list<dyn>', (l: unknown[]) => l.filter((v, i) => l.findIndex((x) => sameValue(x, v)) === i))
  // quantity
  env.registerType('Quantity', CelQuantity)
  env.registerFunction('quantity(string): Quantity', toQuantity)
  env.registerFunction('isQuantity(string): bool', (s: string) => {
    try {
      parseQuantity(s)
      return true
    } catch {
      return false
    }
  })
  env.registerFunction('Quantity.sign(): int', (q: CelQuantity) => BigInt(q.q.nanos > 0n ? 1 : q.q.nanos < 0n ? -1 : 0))
  env.registerFunction('Quantity.isInteger(): bool', (q: CelQuantity) => q.q.nanos % 1_000_000_000n === 0n)
  env.registerFunction('Quantity.asInteger(): int', (q: CelQuantity) => {
    if (q.q.nanos % 1_000_000_000n !== 0n) throw new Error('cannot convert value to integer')
    return quantityValue(q.q)
  })
  env.registerFunction('Quantity.asApproximateFloat(): double', (q: CelQuantity) => Number(q.q.nanos) / 1e9)
  env.registerFunction('Quantity.add(Quantity): Quantity', (a: CelQuantity, b: CelQuantity) => addNanos(a, b.q.nanos))
  env.registerFunction('Quantity.add(int): Quantity', (a: CelQuantity, b: bigint) => addNanos(a, b * 1_000_000_000n))
  env.registerFunction('Quantity.sub(Quantity): Quantity', (a: CelQuantity, b: CelQuantity) => addNanos(a, -b.q.nanos))
  env.registerFunction('Quantity.sub(int): Quantity', (a: CelQuantity, b: bigint) => addNanos(a, -b * 1_000_000_000n))
  env.registerFunction('Quantity.isGreaterThan(Quantity): bool', (a: CelQuantity, b: CelQuantity) => compareQuantities(a.q, b.q) > 0)
  env.registerFunction('Quantity.isLessThan(Quantity): bool', (a: CelQuantity, b: CelQuantity) => compareQuantities(a.q, b.q) < 0)
  env.registerFunction('Quantity.compareTo(Quantity): int', (a: CelQuantity, b: CelQuantity) => BigInt(compareQuantities(a.q, b.q)))
  // ip
  env.registerType('IP', CelIP)
  env.registerFunction('ip(string): IP', toIP)
  env.registerFunction('isIP(string): bool', (s: string) => {
    try {
      toIP(s)
      return true
    } catch {
      return false
    }
  })
  env.registerFunction('IP.family(): int', (ip: CelIP) => BigInt(ip.family))
  env.registerFunction('IP.isUnspecified(): bool', (ip: CelIP) => ip.value === 0n)
  env.registerFunction('IP.isLoopback(): bool', (ip: CelIP) => (ip.family === 4 ? inRange(ip, '127.0.0.0', 8) : ip.value === 1n))
  env.registerFunction('IP.isLinkLocalMulticast(): bool', (ip: CelIP) => (ip.family === 4 ? inRange(ip, '224.0.0.0', 24) : inRange(ip, 'ff02::', 16)))
  env.registerFunction('IP.isLinkLocalUnicast(): bool', (ip: CelIP) => (ip.family === 4 ? inRange(ip, '169.254.0.0', 16) : inRange(ip, 'fe80::', 10)))
  env.registerFunction('IP.isGlobalUnicast(): bool', (ip: CelIP) => {
    if (ip.value === 0n || (ip.family === 4 && (inRange(ip, '127.0.0.0', 8) || inRange(ip, '224.0.0.0', 4) || ip.address === '255.255.255.255'))) return false
    if (ip.family === 6 && (ip.value === 1n || inRange(ip, 'ff00::', 8))) return false
    return !(ip.family === 4 ? inRange(ip, '169.254.0.0', 16) : inRange(ip, 'fe80::', 10))
  })
  env.registerFunction('string(IP): string', (ip: CelIP) => ip.address)
  // cidr
  env.registerType('CIDR', CelCIDR)
  env.registerFunction('cidr(string): CIDR', toCIDR)
  env.registerFunction('isCIDR(string): bool', (s: string) => parseCidr(s) !== null)
  env.registerFunction('CIDR.containsIP(IP): bool', (c: CelCIDR, ip: CelIP) => c.cidr.family === ip.family && cidrContains(c.cidr, ip.address))
  env.registerFunction('CIDR.containsIP(string): bool', (c: CelCIDR, s: string) => {
    const ip = toIP(s)
    return c.cidr.family === ip.family && cidrContains(c.cidr, ip.address)
  })
  const containsCIDR = (c: CelCIDR, other: CelCIDR) =>
    c.cidr.family === other.cidr.family && other.cidr.prefix >= c.cidr.prefix && cidrContains(c.cidr, bigIntToIp(other.cidr.base, other.cidr.family))
  env.registerFunction('CIDR.containsCIDR(CIDR): bool', containsCIDR)
  env.registerFunction('CIDR.containsCIDR(string): bool', (c: CelCIDR, s: string) => containsCIDR(c, toCIDR(s)))
  env.registerFunction('CIDR.prefixLength(): int', (c: CelCIDR) => BigInt(c.cidr.prefix))
  env.registerFunction('CIDR.ip(): IP', (c: CelCIDR) => toIP(c.text.split('/')[0]))
  env.registerFunction('CIDR.masked(): CIDR', (c: CelCIDR) => toCIDR(`${bigIntToIp(c.cidr.base, c.cidr.family)}/${c.cidr.prefix}`))
  env.registerFunction('string(CIDR): string', (c: CelCIDR) => c.text)
  // url
  env.registerType('URL', CelURL)
  env.registerFunction('url(string): URL', toURL)
  env.registerFunction('isURL(string): bool', (s: string) => {
    try {
      toURL(s)
      return true
    } catch {
      return false
    }
  })
  env.registerFunction('URL.getScheme(): string', (u: CelURL) => (u.url.protocol === 'relative:' ? '' : u.url.protocol.replace(/:$/, '')))
  env.registerFunction('URL.getHost(): string', (u: CelURL) => u.url.host)
  env.registerFunction('URL.getHostname(): string', (u: CelURL) => u.url.hostname.replace(/^\[|\]$/g, ''))
  env.registerFunction('URL.getPort(): string', (u: CelURL) => u.url.port)
  env.registerFunction('URL.getEscapedPath(): string', (u: CelURL) => u.url.pathname)
  env.registerFunction('URL.getQuery(): map<string, list<string>>', (u: CelURL) => {
    const out: Record<string, string[]> = {}
    for (const [k, v] of u.url.searchParams) (out[k] ??= []).push(v)
    return out
  })
  // jsonpatch
  env.registerType('JSONPatchLibrary', JSONPatchLibrary)
  env.registerConstant('jsonpatch', 'JSONPatchLibrary', new JSONPatchLibrary())
  env.registerFunction('JSONPatchLibrary.escapeKey(string): string', (_lib: JSONPatchLibrary, key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1'))
}
