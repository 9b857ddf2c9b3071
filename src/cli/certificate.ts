// `orch certificate approve|deny NAME...`, as kubectl's: adds the Approved or Denied condition
// through the /approval subresource, re-reading and retrying on a conflict. A request already
// approved (or denied) is left as it is unless --force; approving a denied request, or denying an
// approved one, is an error.
import type {AnyObject} from '../api/types.js'
import {ApiStatusError} from '../client/index.js'
import {reportError, withSession, type ConnectOptions, type Session} from './connect.js'

const CSR = {group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests'} as const
const MAX_CONFLICT_RETRIES = 10

export type Decision = 'approve' | 'deny'

export interface CertificateOptions extends ConnectOptions {
  decision: Decision
  names: string[]
  force: boolean
}

const condition = {
  approve: {type: 'Approved', opposite: 'Denied', reason: 'OrchApprove', past: 'approved', message: 'This CSR was approved by orch certificate approve.'},
  deny: {type: 'Denied', opposite: 'Approved', reason: 'OrchDeny', past: 'denied', message: 'This CSR was denied by orch certificate deny.'},
} as const

/** The request with the decision's condition added; `already` when it was there. Throws when the
 *  opposite decision was made. */
export function decide(csr: AnyObject, decision: Decision, now = new Date()): {csr: AnyObject; already: boolean} {
  const wanted = condition[decision]
  const conditions: AnyObject[] = Array.isArray(csr.status?.conditions) ? csr.status.conditions : []
  // kubectl names the condition type it found: `is already Denied`
  if (conditions.some((c) => c?.type === wanted.opposite)) {
    throw new Error(`certificate signing request "${csr.metadata?.name}" is already ${wanted.opposite}`)
  }
  if (conditions.some((c) => c?.type === wanted.type)) return {csr, already: true}
  const stamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z')
  const added = {type: wanted.type, status: 'True', reason: wanted.reason, message: wanted.message, lastUpdateTime: stamp}
  return {csr: {...csr, status: {...(csr.status ?? {}), conditions: [...conditions, added]}}, already: false}
}

async function decideOne(session: Session, name: string, options: CertificateOptions): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const current = await session.client.get<AnyObject>({...CSR, name})
    const {csr, already} = decide(current, options.decision)
    if (already && !options.force) break
    try {
      await session.client.update({...CSR, name, subresource: 'approval'}, csr)
      break
    } catch (error) {
      if (error instanceof ApiStatusError && error.code === 409 && attempt < MAX_CONFLICT_RETRIES) continue
      throw error
    }
  }
  process.stdout.write(`certificatesigningrequest.certificates.orch.io/${name} ${condition[options.decision].past}\n`)
}

export function runCertificateDecision(options: CertificateOptions): Promise<void> {
  return withSession(options, async (session) => {
    let failed = 0
    for (const name of options.names) {
      try {
        await decideOne(session, name, options)
      } catch (error) {
        failed++
        reportError(error, session.server)
      }
    }
    return failed > 0 ? 1 : 0
  })
}
