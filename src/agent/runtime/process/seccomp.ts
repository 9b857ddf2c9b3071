// Seccomp profile handling of the process runtime. Node cannot install a seccomp filter on a child
// before exec, so profiles are NOT enforced by this runtime: they are checked and recorded (shown in
// verbose ContainerStatus), so that a pod fails the same way it would on a real runtime when its
// `Localhost` profile is missing or broken.
import {readFileSync} from 'node:fs'
import {isAbsolute} from 'node:path'
import type {DeepPartial, LinuxContainerSecurityContext} from '../../cri/types.js'
import {errnoCode, invalidArgument, notFound} from './errors.js'

export interface SeccompChoice {
  type: 'RuntimeDefault' | 'Unconfined' | 'Localhost'
  /** the profile file for Localhost */
  localhostRef?: string
  /** always false here: the process runtime records profiles, it cannot apply them */
  enforced: false
}

/** Actions a profile may name (libseccomp's, and the kernel's name of the notify action). */
export const SECCOMP_ACTIONS = new Set([
  'SCMP_ACT_ERRNO',
  'SCMP_ACT_ALLOW',
  'SCMP_ACT_KILL_PROCESS',
  'SCMP_ACT_KILL_THREAD',
  'SCMP_ACT_KILL',
  'SCMP_ACT_TRAP',
  'SCMP_ACT_NOTIFY',
  'SECCOMP_RET_USER_NOTIF',
  'SCMP_ACT_TRACE',
  'SCMP_ACT_LOG',
])
const NOTIFY_ACTIONS = new Set(['SCMP_ACT_NOTIFY', 'SECCOMP_RET_USER_NOTIF'])

/**
 * The container's seccomp profile. A privileged container runs Unconfined whatever it asks for. A
 * `Localhost` profile must exist and be a valid profile document, else container creation fails.
 */
export function chooseSeccomp(context: DeepPartial<LinuxContainerSecurityContext> | null | undefined): SeccompChoice {
  if (context?.privileged) return {type: 'Unconfined', enforced: false}
  let type = context?.seccomp?.profileType ?? undefined
  let ref = context?.seccomp?.localhostRef ?? ''
  if (!context?.seccomp && context?.seccompProfilePath) {
    // the deprecated string form: `runtime/default`, `docker/default`, `unconfined`, `localhost/<path>`
    const path = context.seccompProfilePath
    if (path.startsWith('localhost/')) {
      type = 'Localhost'
      ref = path.slice('localhost/'.length)
    } else type = path === 'unconfined' ? 'Unconfined' : 'RuntimeDefault'
  }
  if (type === 'Localhost') {
    validateProfileFile(ref)
    return {type, localhostRef: ref, enforced: false}
  }
  return {type: type === 'Unconfined' ? 'Unconfined' : 'RuntimeDefault', enforced: false}
}

function validateProfileFile(path: string): void {
  if (!path) throw invalidArgument('seccomp profile type Localhost needs a profile path (localhost_ref)')
  if (!isAbsolute(path)) throw invalidArgument(`seccomp profile path ${JSON.stringify(path)} is not absolute`)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') throw notFound(`cannot load seccomp profile ${JSON.stringify(path)}: the file does not exist`)
    throw invalidArgument(`cannot load seccomp profile ${JSON.stringify(path)}: ${(error as Error).message}`)
  }
  let profile: unknown
  try {
    profile = JSON.parse(text)
  } catch (error) {
    throw invalidArgument(`seccomp profile ${JSON.stringify(path)} is not JSON: ${(error as Error).message}`)
  }
  const problem = profileProblem(profile)
  if (problem) throw invalidArgument(`seccomp profile ${JSON.stringify(path)}: ${problem}`)
}

/** What is wrong with a profile document, or null. */
export function profileProblem(profile: unknown): string | null {
  if (typeof profile !== 'object' || profile === null || Array.isArray(profile)) return 'the profile must be a JSON object'
  const {defaultAction, defaultErrnoRet, syscalls} = profile as Record<string, unknown>
  if (typeof defaultAction !== 'string' || !SECCOMP_ACTIONS.has(defaultAction)) return `defaultAction ${JSON.stringify(defaultAction)} is not a seccomp action`
  if (NOTIFY_ACTIONS.has(defaultAction)) return `${defaultAction} cannot be the defaultAction`
  if (defaultErrnoRet !== undefined && !Number.isInteger(defaultErrnoRet)) return 'defaultErrnoRet must be an integer'
  if (syscalls === undefined || syscalls === null) return null
  if (!Array.isArray(syscalls)) return 'syscalls must be an array'
  for (const [index, rule] of syscalls.entries()) {
    if (typeof rule !== 'object' || rule === null) return `syscalls[${index}] must be an object`
    const {names, action, errnoRet, args} = rule as Record<string, unknown>
    if (!Array.isArray(names) || !names.every((name) => typeof name === 'string')) return `syscalls[${index}].names must be an array of strings`
    if (typeof action !== 'string' || !SECCOMP_ACTIONS.has(action)) return `syscalls[${index}].action ${JSON.stringify(action)} is not a seccomp action`
    if (errnoRet !== undefined && !Number.isInteger(errnoRet)) return `syscalls[${index}].errnoRet must be an integer`
    if (args !== undefined && args !== null && !Array.isArray(args)) return `syscalls[${index}].args must be an array`
  }
  return null
}
