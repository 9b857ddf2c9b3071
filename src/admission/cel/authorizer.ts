// CEL's `authorizer` (Kubernetes' authz library): authorizer.group(g).resource(r)
// [.subresource(s)][.namespace(ns)][.name(n)].check(verb), authorizer.path(p).check(verb),
// authorizer.serviceAccount(ns, name) to ask for another user, and authorizer.requestResource (the
// request's own resource). A decision answers allowed(), reason(), errored(), error().
import type {Environment} from '@marcbachmann/cel-js'
import type {AnyObject} from '../../api/types.js'
import type {PolicyAuthorizer} from '../policy/engine.js'

type Env = InstanceType<typeof Environment>
type User = Parameters<PolicyAuthorizer>[0]['user']

export class CelDecision {
  constructor(readonly decision: ReturnType<PolicyAuthorizer>) {}
}

export class CelResourceCheck {
  constructor(
    readonly ask: PolicyAuthorizer,
    readonly user: User,
    readonly attributes: {group: string; resource: string; subresource: string; namespace: string; name: string},
  ) {}

  with(change: Partial<CelResourceCheck['attributes']>): CelResourceCheck {
    return new CelResourceCheck(this.ask, this.user, {...this.attributes, ...change})
  }

  check(verb: string): CelDecision {
    return new CelDecision(this.ask({user: this.user, verb, ...this.attributes}))
  }
}

export class CelGroupCheck {
  constructor(readonly ask: PolicyAuthorizer, readonly user: User, readonly group: string) {}
}

export class CelPathCheck {
  constructor(readonly ask: PolicyAuthorizer, readonly user: User, readonly path: string) {}
}

export class CelAuthorizer {
  readonly requestResource: CelResourceCheck
  readonly user: User

  constructor(
    readonly ask: PolicyAuthorizer,
    request: AnyObject,
    own: {group: string; resource: string; subresource: string; namespace: string; name: string} | undefined,
    user?: User,
  ) {
    const info = request.userInfo ?? {}
    this.user = user ?? {username: info.username ?? '', uid: info.uid, groups: info.groups ?? [], extra: info.extra}
    this.requestResource = new CelResourceCheck(ask, this.user, own ?? {group: '', resource: '', subresource: '', namespace: '', name: ''})
  }
}

function failure(error: unknown): ReturnType<PolicyAuthorizer> {
  return {decision: 'no-opinion', reason: '', error: (error as Error).message}
}

export function registerAuthorizer(env: Env, declareVariable: boolean): void {
  env.registerType('Authorizer', CelAuthorizer)
  env.registerType('GroupCheck', CelGroupCheck)
  env.registerType('ResourceCheck', CelResourceCheck)
  env.registerType('PathCheck', CelPathCheck)
  env.registerType('Decision', CelDecision)
  if (declareVariable) env.registerVariable('authorizer', 'Authorizer')
  env.registerFunction('Authorizer.group(string): GroupCheck', (a: CelAuthorizer, group: string) => new CelGroupCheck(a.ask, a.user, group))
  env.registerFunction('Authorizer.path(string): PathCheck', (a: CelAuthorizer, path: string) => new CelPathCheck(a.ask, a.user, path))
  env.registerFunction('Authorizer.serviceAccount(string, string): Authorizer', (a: CelAuthorizer, ns: string, name: string) => {
    const user: User = {username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']}
    return new CelAuthorizer(a.ask, {}, undefined, user)
  })
  env.registerFunction('GroupCheck.resource(string): ResourceCheck', (g: CelGroupCheck, resource: string) =>
    new CelResourceCheck(g.ask, g.user, {group: g.group, resource, subresource: '', namespace: '', name: ''}),
  )
  env.registerFunction('ResourceCheck.subresource(string): ResourceCheck', (r: CelResourceCheck, s: string) => r.with({subresource: s}))
  env.registerFunction('ResourceCheck.namespace(string): ResourceCheck', (r: CelResourceCheck, s: string) => r.with({namespace: s}))
  env.registerFunction('ResourceCheck.name(string): ResourceCheck', (r: CelResourceCheck, s: string) => r.with({name: s}))
  env.registerFunction('ResourceCheck.check(string): Decision', (r: CelResourceCheck, verb: string) => {
    try {
      return r.check(verb)
    } catch (error) {
      return new CelDecision(failure(error))
    }
  })
  env.registerFunction('PathCheck.check(string): Decision', (p: CelPathCheck, verb: string) => {
    try {
      return new CelDecision(p.ask({user: p.user, verb, path: p.path}))
    } catch (error) {
      return new CelDecision(failure(error))
    }
  })
  env.registerFunction('Decision.allowed(): bool', (d: CelDecision) => d.decision.decision === 'allow')
  env.registerFunction('Decision.reason(): string', (d: CelDecision) => d.decision.reason)
  env.registerFunction('Decision.errored(): bool', (d: CelDecision) => Boolean(d.decision.error))
  env.registerFunction('Decision.error(): string', (d: CelDecision) => d.decision.error ?? '')
}
