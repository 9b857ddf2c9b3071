// The agent's reading of CRI log files (the kubelet's ReadLogs) and of PodLogOptions: the CRI line
// format, partial lines joined, timestamps, tailLines, sinceSeconds/sinceTime, limitBytes, follow;
// the server's PodLogOptions decoding and validation and its choice of container.
import assert from 'node:assert/strict'
import {appendFileSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, describe, it} from 'node:test'
import {parseCriLine, renderLogText, streamContainerLog} from '../../src/agent/server/container-logs.js'
import {containerLogOptions, logContainerId} from '../../src/agent/server/server.js'
import {agentLogQuery, decodePodLogOptions, validatePodLogOptions} from '../../src/machinery/pod-log-options.js'
import {logContainer} from '../../src/apiserver/pod-log.js'
import {ApiError} from '../../src/machinery/status.js'

const dir = mkdtempSync(join(tmpdir(), 'orch-container-logs-'))
after(() => rmSync(dir, {recursive: true, force: true}))

const FILE = [
  '2026-11-25T10:00:00.100000000Z stdout F one',
  '2026-11-25T10:00:01.200000000Z stderr F two',
  '2026-11-25T10:00:02.000000000Z stdout P thr',
  '2026-11-25T10:00:02.000000001Z stdout F ee',
  'garbage line',
  '2026-11-25T10:00:03Z stdout F ',
  '2026-11-25T10:00:04.5Z stdout F four',
  '',
].join('\n')

const text = (options: Parameters<typeof renderLogText>[1], now?: Date) => renderLogText(Buffer.from(FILE), options, now).toString()

describe('CRI log parsing', () => {
  it('a CRI line is split into timestamp, stream, tag and content; a full line ends with a newline, a partial one not', () => {
    const full = parseCriLine(Buffer.from('2026-11-25T10:00:00.120000000Z stdout F hello world'))
    assert.equal(full.timestamp, '2026-11-25T10:00:00.12Z')
    assert.equal(full.timeNs, 1795600800120000000n)
    assert.equal(full.stream, 'stdout')
    assert.equal(full.partial, false)
    assert.equal(full.content.toString(), 'hello world\n')
    const part = parseCriLine(Buffer.from('2026-11-25T10:00:00Z stderr P abc'))
    assert.equal(part.partial, true)
    assert.equal(part.content.toString(), 'abc')
    assert.throws(() => parseCriLine(Buffer.from('yesterday stdout F x')), /unexpected timestamp format/)
    assert.throws(() => parseCriLine(Buffer.from('2026-11-25T10:00:00Z stdin F x')), /unexpected stream type/)
  })

  it('all lines, stdout and stderr, partial entries joined into their line, unparsable lines skipped', () => {
    assert.equal(text({}), 'one\ntwo\nthree\n\nfour\n')
  })

  it('timestamps puts the entry time (RFC3339Nano, trailing zeros dropped) before each whole line', () => {
    assert.equal(
      text({timestamps: true}),
      '2026-11-25T10:00:00.1Z one\n2026-11-25T10:00:01.2Z two\n2026-11-25T10:00:02Z three\n2026-11-25T10:00:03Z \n2026-11-25T10:00:04.5Z four\n',
    )
  })

  it('tailLines counts the entries of the file from its end; 0 prints nothing', () => {
    assert.equal(text({tailLines: 2}), '\nfour\n')
    assert.equal(text({tailLines: 4}), 'ee\n\nfour\n')
    // an unparsable line counts as a line of the file
    assert.equal(text({tailLines: 5}), 'three\n\nfour\n')
    assert.equal(text({tailLines: 0}), '')
    assert.equal(text({tailLines: 100}), 'one\ntwo\nthree\n\nfour\n')
  })

  it('sinceTime and sinceSeconds skip older entries (the later of the two counts)', () => {
    assert.equal(text({sinceTime: '2026-11-25T10:00:03Z'}), '\nfour\n')
    assert.equal(text({sinceSeconds: 2}, new Date('2026-11-25T10:00:03.000Z')), 'two\nthree\n\nfour\n')
    assert.equal(text({sinceSeconds: 1}, new Date('2026-11-25T10:00:03.000Z')), 'three\n\nfour\n')
    // entry by entry: the part of a line written before the time is left out
    assert.equal(text({sinceTime: '2026-11-25T10:00:02.000000001Z'}), 'ee\n\nfour\n')
  })

  it('limitBytes stops after that many bytes of output, timestamps included', () => {
    assert.equal(text({limitBytes: 6}), 'one\ntw')
    assert.equal(text({limitBytes: 5, timestamps: true}), '2026-')
  })

  it('follow streams what is appended later and ends once the container no longer runs', async () => {
    const path = join(dir, 'follow.log')
    writeFileSync(path, '2026-11-25T10:00:00Z stdout F first\n')
    let running = true
    const out: string[] = []
    const done = streamContainerLog(path, {follow: true}, (c) => out.push(c.toString()), {running: async () => running, signal: new AbortController().signal, pollMs: 10, checkMs: 20})
    const deadline = Date.now() + 5000
    while (!out.join('').includes('first') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    // an entry written in two pieces, then the rest of its line in a second entry
    appendFileSync(path, '2026-11-25T10:00:01Z stdout P sec')
    appendFileSync(path, '\n2026-11-25T10:00:01Z stdout F ond\n')
    while (!out.join('').includes('second') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    appendFileSync(path, '2026-11-25T10:00:02Z stdout F last\n')
    running = false
    await done
    assert.equal(out.join(''), 'first\nsecond\nlast\n')
  })

  it('a log file that cannot be opened is an error before anything is written', async () => {
    await assert.rejects(
      streamContainerLog(join(dir, 'missing.log'), {}, () => assert.fail('wrote'), {running: async () => false, signal: new AbortController().signal}),
      /failed to open log file/,
    )
  })
})

describe('PodLogOptions', () => {
  it('the agent decodes and validates the query as the kubelet does (decode error / invalid)', () => {
    assert.deepEqual(containerLogOptions(new URLSearchParams('follow=true&tailLines=3&timestamps=1')), {
      follow: true, timestamps: true, tailLines: 3,
    })
    assert.equal(containerLogOptions(new URLSearchParams('sinceTime=2026-11-25')), 'decode')
    assert.equal(containerLogOptions(new URLSearchParams('tailLines=x')), 'decode')
    assert.equal(containerLogOptions(new URLSearchParams('tailLines=-1')), 'invalid')
    assert.equal(containerLogOptions(new URLSearchParams('sinceSeconds=1&sinceTime=2026-11-25T10:00:00Z')), 'invalid')
  })

  it('the server refuses negative values with PodLogOptions field errors, and bad values with a 400', () => {
    assert.deepEqual(validatePodLogOptions({tailLines: -1, limitBytes: 0, sinceSeconds: 0}).map((e) => [e.field, e.message]), [
      ['tailLines', 'must be greater than or equal to 0'],
      ['limitBytes', 'must be greater than 0'],
      ['sinceSeconds', 'must be greater than 0'],
    ])
    assert.deepEqual(validatePodLogOptions({sinceSeconds: 5, sinceTime: '2026-11-25T10:00:00Z'}).map((e) => e.type), ['FieldValueForbidden'])
    assert.throws(() => decodePodLogOptions(new URLSearchParams('follow=yes')), (e: ApiError) => e.code === 400 && /ParseBool/.test(e.message))
    assert.throws(() => decodePodLogOptions(new URLSearchParams('tailLines=1.5')), (e: ApiError) => e.code === 400 && /ParseInt/.test(e.message))
    assert.equal(agentLogQuery(decodePodLogOptions(new URLSearchParams('container=c&follow=true&tailLines=2&insecureSkipTLSVerifyBackend=true'))), '?follow=true&tailLines=2')
  })

  it('the container is the only one, else must be named among the pod containers (init containers listed first)', () => {
    const one = {metadata: {name: 'p'}, spec: {containers: [{name: 'a'}]}}
    const two = {metadata: {name: 'p'}, spec: {initContainers: [{name: 'i'}], containers: [{name: 'a'}, {name: 'b'}]}}
    assert.equal(logContainer(one, undefined), 'a')
    assert.equal(logContainer(two, 'i'), 'i')
    assert.throws(() => logContainer(two, undefined), {message: 'a container name must be specified for pod p, choose one of: [i a b]'})
    assert.throws(() => logContainer(one, 'c'), {message: 'container c is not valid for pod p'})
  })

  it('the agent reads the running instance, the previous one with previous, and says why there is no log', () => {
    const pod = (status: object) => ({metadata: {name: 'p'}, status: {containerStatuses: [{name: 'c', containerID: 'process://now', ...status}]}})
    assert.deepEqual(logContainerId(pod({state: {running: {}}}), 'c', false), {id: 'process://now'})
    assert.deepEqual(logContainerId(pod({state: {running: {}}, lastState: {terminated: {containerID: 'process://old'}}}), 'c', true), {id: 'process://old'})
    assert.deepEqual(logContainerId(pod({state: {running: {}}}), 'c', true), {error: 'previous terminated container "c" in pod "p" not found'})
    assert.deepEqual(logContainerId(pod({state: {waiting: {reason: 'ContainerCreating'}}}), 'c', false), {error: 'container "c" in pod "p" is waiting to start: ContainerCreating'})
  })
})
