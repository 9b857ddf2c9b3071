// Address arithmetic for service IP allocation: CIDRs as BigInt ranges.
import {isIPv4, isIPv6} from 'node:net'
import {randomBytes} from 'node:crypto'

export interface Cidr {
  family: 4 | 6
  /** first address of the network */
  base: bigint
  prefix: number
  bits: 32 | 128
}

export function ipToBigInt(ip: string): {value: bigint; family: 4 | 6} | null {
  if (isIPv4(ip)) {
    const value = ip.split('.').reduce((acc, part) => (acc << 8n) + BigInt(Number(part)), 0n)
    return {value, family: 4}
  }
  if (isIPv6(ip)) {
    let text = ip
    // an embedded IPv4 tail becomes two hextets
    const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
    if (v4) {
      const n = ipToBigInt(v4[1])!.value
      text = text.slice(0, -v4[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`
    }
    const [head, tail = ''] = text.split('::')
    const headParts = head ? head.split(':') : []
    const tailParts = text.includes('::') ? (tail ? tail.split(':') : []) : []
    const missing = 8 - headParts.length - tailParts.length
    const parts = text.includes('::') ? [...headParts, ...Array(missing).fill('0'), ...tailParts] : headParts
    const value = parts.reduce((acc, part) => (acc << 16n) + BigInt(parseInt(part || '0', 16)), 0n)
    return {value, family: 6}
  }
  return null
}

export function bigIntToIp(value: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.')
  const hextets = Array.from({length: 8}, (_, i) => ((value >> BigInt((7 - i) * 16)) & 0xffffn).toString(16))
  // RFC 5952: compress the longest run of zero hextets (length >= 2)
  let bestStart = -1
  let bestLength = 0
  for (let i = 0; i < 8; ) {
    if (hextets[i] !== '0') {
      i++
      continue
    }
    let j = i
    while (j < 8 && hextets[j] === '0') j++
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  if (bestStart < 0) return hextets.join(':')
  return `${hextets.slice(0, bestStart).join(':')}::${hextets.slice(bestStart + bestLength).join(':')}`
}

export function parseCidr(text: string): Cidr | null {
  const [ip, prefixText] = text.split('/')
  const parsed = ipToBigInt(ip ?? '')
  if (!parsed || prefixText === undefined || !/^\d+$/.test(prefixText)) return null
  const bits = parsed.family === 4 ? 32 : 128
  const prefix = Number(prefixText)
  if (prefix > bits) return null
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - prefix)) - 1n)
  return {family: parsed.family, base: parsed.value & mask, prefix, bits}
}

export function cidrContains(cidr: Cidr, ip: string): boolean {
  const parsed = ipToBigInt(ip)
  if (!parsed || parsed.family !== cidr.family) return false
  const size = 1n << BigInt(cidr.bits - cidr.prefix)
  return parsed.value >= cidr.base && parsed.value < cidr.base + size
}

/** The addresses a service may get: without the network address (and, for IPv4, the broadcast). */
export function usableRange(cidr: Cidr): {first: bigint; count: bigint} {
  const size = 1n << BigInt(cidr.bits - cidr.prefix)
  if (size <= 2n) return {first: cidr.base, count: size}
  const count = cidr.family === 4 ? size - 2n : size - 1n
  return {first: cidr.base + 1n, count}
}

/** A uniformly random usable address of the CIDR. */
export function randomAddress(cidr: Cidr): string {
  const {first, count} = usableRange(cidr)
  const bytes = randomBytes(16)
  let r = 0n
  for (const b of bytes) r = (r << 8n) + BigInt(b)
  return bigIntToIp(first + (r % count), cidr.family)
}

/** Canonical text of an address (e.g. IPv6 compressed). */
export function canonicalIp(ip: string): string | null {
  const parsed = ipToBigInt(ip)
  return parsed ? bigIntToIp(parsed.value, parsed.family) : null
}
