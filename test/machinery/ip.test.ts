import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {isIP} from 'node:net'
import {ipFamilyOf, isValidCIDR, isValidIP, parseCIDR} from '../../src/machinery/validation.js'

const badIP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'
const badCIDR = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'

describe('isValidIP', () => {
  it('accepts canonical IPv4 and IPv6 addresses', () => {
    for (const ip of ['0.0.0.0', '1.2.3.4', '255.255.255.255', '10.9.8.7', '::', '::1', '2001:db8::ffff', 'fe80::1', '1:2:3:4:5:6:7:8', '1::', '0:2:3:4:5:6:7:8']) {
      assert.deepEqual(isValidIP(ip), [], ip)
    }
  })

  it('agrees with node:net on what is an address for canonical text', () => {
    for (const ip of ['1.2.3.4', '2001:db8::1', '::', '256.1.1.1', '1.2.3', 'x']) {
      assert.equal(isValidIP(ip).length === 0, isIP(ip) !== 0, ip)
    }
  })

  it('rejects text that is not an address', () => {
    for (const ip of ['', 'x', '1.2.3', '1.2.3.4.5', '256.0.0.1', '1.2.3.4 ', ' 1.2.3.4', '1.2.3.-4', ':::', '1:2:3:4:5:6:7:8:9', '1::2::3', '12345::', 'fe80::1%eth0', '1.2.3.4/32', '::1.2.3', '1:2:3:4:5:6:7::8']) {
      assert.deepEqual(isValidIP(ip), [badIP], ip)
    }
  })

  it('rejects IPv4 octets with leading zeros', () => {
    assert.deepEqual(isValidIP('010.0.0.1'), ['must not have leading 0s'])
    assert.deepEqual(isValidIP('1.2.3.04'), ['must not have leading 0s'])
    assert.deepEqual(isValidIP('::ffff:1.02.3.4'), ['must not have leading 0s'])
  })

  it('rejects IPv6 groups of more than four hex digits', () => {
    assert.deepEqual(isValidIP('00001::'), ['must not have leading 0s'])
  })

  it('rejects IPv4-mapped IPv6 addresses', () => {
    assert.deepEqual(isValidIP('::ffff:1.2.3.4'), ['must not be an IPv4-mapped IPv6 address'])
    assert.deepEqual(isValidIP('::ffff:102:304'), ['must not be an IPv4-mapped IPv6 address'])
  })

  it('rejects IPv6 addresses not in RFC 5952 canonical form, naming the canonical form', () => {
    assert.deepEqual(isValidIP('2001:DB8::1'), ['must be in canonical form ("2001:db8::1")'])
    assert.deepEqual(isValidIP('2001:db8:0:0:0:0:0:1'), ['must be in canonical form ("2001:db8::1")'])
    assert.deepEqual(isValidIP('2001:0db8::1'), ['must be in canonical form ("2001:db8::1")'])
    assert.deepEqual(isValidIP('1:0:0:1:0:0:0:1'), ['must be in canonical form ("1:0:0:1::1")'])
    assert.deepEqual(isValidIP('1:0:0:2:0:0:3:4'), ['must be in canonical form ("1::2:0:0:3:4")'])
    assert.deepEqual(isValidIP('1:0:2:3:4:5:6:7'), [])
    assert.deepEqual(isValidIP('1::2:3:4:5:6:7'), ['must be in canonical form ("1:0:2:3:4:5:6:7")'])
    assert.deepEqual(isValidIP('::2:3:4:5:6:7:8'), ['must be in canonical form ("0:2:3:4:5:6:7:8")'])
    assert.deepEqual(isValidIP('::1.2.3.4'), ['must be in canonical form ("::102:304")'])
  })
})

describe('ipFamilyOf', () => {
  it('tells IPv4 from IPv6', () => {
    assert.equal(ipFamilyOf('10.0.0.1'), 'IPv4')
    assert.equal(ipFamilyOf('fd00::1'), 'IPv6')
    assert.equal(ipFamilyOf('::'), 'IPv6')
  })

  it('counts IPv4-mapped IPv6 as IPv4 and tolerates leading zeros, as Kubernetes does', () => {
    assert.equal(ipFamilyOf('::ffff:10.0.0.1'), 'IPv4')
    assert.equal(ipFamilyOf('010.000.000.001'), 'IPv4')
  })

  it('returns null for text that is not an address', () => {
    assert.equal(ipFamilyOf('nope'), null)
    assert.equal(ipFamilyOf('10.0.0.0/8'), null)
  })
})

describe('isValidCIDR', () => {
  it('accepts canonical subnets', () => {
    for (const c of ['10.0.0.0/8', '192.168.1.0/24', '0.0.0.0/0', '1.2.3.4/32', '2001:db8::/32', '::/0', 'fd00::/64', '::1/128']) {
      assert.deepEqual(isValidCIDR(c), [], c)
    }
  })

  it('rejects text that is not a CIDR', () => {
    for (const c of ['', '10.0.0.0', '10.0.0.0/', '10.0.0.0/33', '::/129', 'x/8', '10.0.0.0/8/8', '10.0.0.0/+8', '10.0.0.0/ 8', '2001:db8::/-1']) {
      assert.deepEqual(isValidCIDR(c), [badCIDR], c)
    }
  })

  it('rejects leading zeros in the address or the prefix length', () => {
    assert.deepEqual(isValidCIDR('010.0.0.0/8'), ['must not have leading 0s in IP or prefix length'])
    assert.deepEqual(isValidCIDR('10.0.0.0/08'), ['must not have leading 0s in IP or prefix length'])
  })

  it('rejects IPv4-mapped IPv6 subnets', () => {
    assert.deepEqual(isValidCIDR('::ffff:10.0.0.0/120'), ['must not have an IPv4-mapped IPv6 address'])
  })

  it('rejects host bits set beyond the prefix length', () => {
    assert.deepEqual(isValidCIDR('10.0.0.1/8'), ['must not have bits set beyond the prefix length'])
    assert.deepEqual(isValidCIDR('2001:db8::1/64'), ['must not have bits set beyond the prefix length'])
  })

  it('rejects IPv6 subnets not in canonical form', () => {
    assert.deepEqual(isValidCIDR('2001:DB8::/32'), ['must be in canonical form ("2001:db8::/32")'])
    assert.deepEqual(isValidCIDR('2001:db8:0:0::/64'), ['must be in canonical form ("2001:db8::/64")'])
  })
})

describe('parseCIDR', () => {
  it('returns the address, the prefix length, the family and the network', () => {
    assert.deepEqual(parseCIDR('10.1.2.3/8'), {ip: '10.1.2.3', prefix: 8, family: 'IPv4', network: '10.0.0.0/8'})
    assert.deepEqual(parseCIDR('2001:DB8::1/64'), {ip: '2001:db8::1', prefix: 64, family: 'IPv6', network: '2001:db8::/64'})
  })

  it('accepts the lenient forms Kubernetes still reads from old objects', () => {
    assert.deepEqual(parseCIDR('010.0.0.0/08'), {ip: '10.0.0.0', prefix: 8, family: 'IPv4', network: '10.0.0.0/8'})
  })

  it('treats an IPv4-mapped subnet as IPv4 with the prefix counted over 32 bits', () => {
    assert.deepEqual(parseCIDR('::ffff:10.0.0.0/104'), {ip: '10.0.0.0', prefix: 8, family: 'IPv4', network: '10.0.0.0/8'})
  })

  it('returns null for text that is not a CIDR', () => {
    for (const c of ['10.0.0.0', '10.0.0.0/33', 'fe80::/129', 'x/1', '10.0.0.0/a']) assert.equal(parseCIDR(c), null, c)
  })
})
