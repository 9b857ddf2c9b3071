// The kinds this server serves, indexed for the request path.
import {apiVersionOf, type KindDeclaration} from '../api/types.js'

export class Catalog {
  private readonly byResource = new Map<string, KindDeclaration>()
  private readonly byKind = new Map<string, KindDeclaration>()

  constructor(readonly declarations: readonly KindDeclaration[]) {
    for (const d of declarations) {
      this.byResource.set(`${d.group}/${d.version}/${d.resource}`, d)
      this.byKind.set(`${apiVersionOf(d)}/${d.kind}`, d)
    }
  }

  resource(group: string, version: string, resource: string): KindDeclaration | undefined {
    return this.byResource.get(`${group}/${version}/${resource}`)
  }

  kind(apiVersion: string, kind: string): KindDeclaration | undefined {
    return this.byKind.get(`${apiVersion}/${kind}`)
  }

  /** group -> versions served */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>()
    for (const d of this.declarations) {
      const versions = out.get(d.group) ?? []
      if (!versions.includes(d.version)) versions.push(d.version)
      out.set(d.group, versions)
    }
    return out
  }

  /** Resolves a name the CLI accepts (plural, singular, short name, Kind, or resource.group). */
  lookup(name: string): KindDeclaration | undefined {
    const lower = name.toLowerCase()
    const [base, ...groupParts] = lower.split('.')
    const group = groupParts.join('.')
    for (const d of this.declarations) {
      if (group && d.group !== group) continue
      if (d.resource === base || d.singular === base || d.kind.toLowerCase() === base || d.shortNames?.includes(base)) return d
    }
    return undefined
  }
}
