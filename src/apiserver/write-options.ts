// The options of a write (CreateOptions, UpdateOptions, PatchOptions) read from the query and checked as
// Kubernetes' ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions check them: every
// problem in one 422 Invalid naming the options kind (`CreateOptions.meta.orch.io "" is invalid: …`).
import type {IncomingMessage} from 'node:http'
import type {FieldError} from '../api/types.js'
import type {FieldValidation} from '../machinery/field-validation.js'
import {errors} from '../machinery/status.js'

const FIELD_MANAGER_MAX_LENGTH = 128

export type WriteVerb = 'create' | 'update' | 'patch'

const OPTIONS_KIND: Record<WriteVerb, string> = {create: 'CreateOptions', update: 'UpdateOptions', patch: 'PatchOptions'}

/** unicode.IsPrint, near enough: letters, marks, numbers, punctuation, symbols and the ASCII space */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u

/** ValidateFieldManager: at most 128 bytes, every character printable */
function fieldManagerErrors(fieldManager: string): FieldError[] {
  const out: FieldError[] = []
  if (Buffer.byteLength(fieldManager) > FIELD_MANAGER_MAX_LENGTH) {
    out.push({type: 'FieldValueTooLong', field: 'fieldManager', value: '', message: `may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes`})
  }
  let at = 0
  for (const char of fieldManager) {
    if (!PRINTABLE.test(char)) {
      const code = char.codePointAt(0)!
      const name = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
      out.push({type: 'FieldValueInvalid', field: 'fieldManager', value: fieldManager, message: `invalid character ${name} (at position ${at})`})
    }
    at += Buffer.byteLength(char)
  }
  return out
}

/**
 * Checks a write's options; throws the 422 Kubernetes answers. `patchType`: the media type of a patch
 * (`force` is for apply patches only).
 */
export function validateWriteOptions(verb: WriteVerb, query: URLSearchParams, patchType?: string): void {
  const problems: FieldError[] = []
  if (verb === 'patch' && patchType !== undefined && !patchType.startsWith('application/apply-patch') && query.has('force')) {
    problems.push({type: 'FieldValueForbidden', field: 'force', message: 'may not be specified for non-apply patch'})
  }
  const fieldManager = query.get('fieldManager')
  if (fieldManager !== null) problems.push(...fieldManagerErrors(fieldManager))
  for (const value of query.getAll('dryRun')) {
    if (value !== 'All') problems.push({type: 'FieldValueNotSupported', field: 'dryRun', value, message: 'supported values: "All"'})
  }
  const validation = query.get('fieldValidation')
  if (validation !== null && validation !== '' && validation !== 'Strict' && validation !== 'Warn' && validation !== 'Ignore') {
    problems.push({type: 'FieldValueNotSupported', field: 'fieldValidation', value: validation, message: 'supported values: "Ignore", "Strict", "Warn"'})
  }
  if (problems.length > 0) throw errors.invalid({group: 'meta.orch.io', kind: OPTIONS_KIND[verb]}, '', problems)
}

/** A create's, update's or patch's options as Kubernetes decodes them from the query (a patch's reach
 *  admission as UpdateOptions or CreateOptions, which have no `force`); unset ones are left out. */
export function requestedWriteOptions(query: URLSearchParams): Record<string, unknown> {
  const options: Record<string, unknown> = {}
  const dryRun = query.getAll('dryRun')
  if (dryRun.length > 0) options.dryRun = dryRun
  const fieldManager = query.get('fieldManager')
  if (fieldManager) options.fieldManager = fieldManager
  const fieldValidation = query.get('fieldValidation')
  if (fieldValidation) options.fieldValidation = fieldValidation
  return options
}

/** ?dryRun=All (checked by validateWriteOptions) */
export function dryRunParam(query: URLSearchParams): boolean {
  return query.getAll('dryRun').length > 0
}

/** The field manager of a write: ?fieldManager, else the User-Agent's product (as Kubernetes). */
export function fieldManagerOf(query: URLSearchParams, request: IncomingMessage): string {
  const given = query.get('fieldManager')
  if (given !== null) return given
  const agent = String(request.headers['user-agent'] ?? '').split('/')[0].trim()
  return (agent || 'unknown').slice(0, FIELD_MANAGER_MAX_LENGTH)
}

/** ?fieldValidation (checked by validateWriteOptions), Warn when unset */
export function fieldValidationParam(query: URLSearchParams): FieldValidation {
  const value = query.get('fieldValidation')
  return value === 'Strict' || value === 'Ignore' ? value : 'Warn'
}
