// Whether one set of RBAC rules covers another, as Kubernetes' component-helpers Covers decides it,
// and the text the escalation checks print for the rules that are not covered (CompactRules,
// CompactString). Each rule is broken down to one apiGroup, resource, verb and resourceName (or one
// nonResourceURL and verb); a piece is covered when a single owner rule covers it.
import {compareGoStrings, goQuote} from '../../machinery/field-errors.js'
import {ALL, stringList, type PolicyRule} from './rbac.js'


/** BreakdownRule: the rule as pieces of one verb, one resource (and group) and at most one name. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = []
  const verbs = stringList(rule.verbs)
  const names = stringList(rule.resourceNames)
  for (const group of stringList(rule.apiGroups)) {
    for (const resource of stringList(rule.resources)) {
      for (const verb of verbs) {
        if (names.length > 0) {
          for (const name of names) out.push({apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name]})
        } else {
          out.push({apiGroups: [group], resources: [resource], verbs: [verb]})
        }
      }
    }
  }
  for (const url of stringList(rule.nonResourceURLs)) {
    for (const verb of verbs) out.push({nonResourceURLs: [url], verbs: [verb]})
  }
  return out
}

function hasAll(set: readonly string[], wanted: readonly string[]): boolean {
  const owned = new Set(set)
  return wanted.every((w) => owned.has(w))
}

// `*` covers every resource, `*/status` any resource's status
function resourcesCovered(owned: readonly string[], wanted: readonly string[]): boolean {
  if (owned.includes(ALL) || hasAll(owned, wanted)) return true
  for (const resource of wanted) {
    if (owned.includes(resource)) continue
    const slash = resource.indexOf('/')
    if (slash < 0) return false
    if (!owned.includes(`*/${resource.slice(slash + 1)}`)) return false
  }
  return true
}

function nonResourceURLCovered(owner: string, path: string): boolean {
  return owner === path || (owner.endsWith('*') && path.startsWith(owner.replace(/\*+$/, '')))
}

function ruleCovers(owner: PolicyRule, piece: PolicyRule): boolean {
  const ownerVerbs = stringList(owner.verbs)
  const ownerGroups = stringList(owner.apiGroups)
  const ownerNames = stringList(owner.resourceNames)
  const pieceNames = stringList(piece.resourceNames)
  const verbs = ownerVerbs.includes(ALL) || hasAll(ownerVerbs, stringList(piece.verbs))
  const groups = ownerGroups.includes(ALL) || hasAll(ownerGroups, stringList(piece.apiGroups))
  const resources = resourcesCovered(stringList(owner.resources), stringList(piece.resources))
  const urls = stringList(piece.nonResourceURLs).every((path) => stringList(owner.nonResourceURLs).some((o) => nonResourceURLCovered(o, path)))
  const names = pieceNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, pieceNames)
  return verbs && groups && resources && urls && names
}

/** Covers: do the owner's rules cover all the servant's? With the pieces they do not. */
export function covers(ownerRules: readonly PolicyRule[], servantRules: readonly PolicyRule[]): {covered: boolean; missing: PolicyRule[]} {
  const missing: PolicyRule[] = []
  for (const servant of servantRules) {
    for (const piece of breakdownRule(servant)) {
      if (!ownerRules.some((owner) => ruleCovers(owner, piece))) missing.push(piece)
    }
  }
  return {covered: missing.length === 0, missing}
}

/** CompactRules: pieces of one group, one resource and at most one resource name (isSimpleResourceRule)
 *  merged, their verbs joined. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const compacted: PolicyRule[] = []
  const simple = new Map<string, PolicyRule>()
  for (const rule of rules) {
    const groups = stringList(rule.apiGroups)
    const resources = stringList(rule.resources)
    const names = stringList(rule.resourceNames)
    const isSimple = names.length <= 1 && stringList(rule.nonResourceURLs).length === 0 && groups.length === 1 && resources.length === 1
    if (!isSimple) {
      compacted.push(rule)
      continue
    }
    const key = JSON.stringify([groups[0], resources[0], names])
    const existing = simple.get(key)
    if (existing) existing.verbs = [...existing.verbs, ...stringList(rule.verbs)]
    else simple.set(key, {apiGroups: [...groups], resources: [...resources], ...(names.length > 0 ? {resourceNames: [...names]} : {}), verbs: [...stringList(rule.verbs)]})
  }
  return [...compacted, ...simple.values()]
}

/** Go's %q of a []string: `["a" "b"]`. */
export function goQuotedList(values: readonly string[]): string {
  return `[${values.map(goQuote).join(' ')}]`
}

/** CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`, empty parts left out. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = []
  const add = (label: string, values: string[]) => {
    if (values.length > 0) parts.push(`${label}:${goQuotedList(values)}`)
  }
  add('APIGroups', stringList(rule.apiGroups))
  add('Resources', stringList(rule.resources))
  add('NonResourceURLs', stringList(rule.nonResourceURLs))
  add('ResourceNames', stringList(rule.resourceNames))
  add('Verbs', stringList(rule.verbs))
  return `{${parts.join(', ')}}`
}

/** The missing rules as ConfirmNoEscalation lists them: compacted, one a line, sorted, no repeats. */
export function describeMissingRules(missing: readonly PolicyRule[]): string {
  return [...new Set(compactRules(missing).map(compactString))].sort(compareGoStrings).join('\n')
}
