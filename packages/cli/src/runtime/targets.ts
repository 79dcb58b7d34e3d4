/**
 * Objects named on the command line: `--target KIND/name` (diff, apply) and `status KIND/name`. A kind is spelled
 * as in a manifest (any case, with its aliases: `vm/web`, `TemplateCT/debian-tpl`, `ctt/debian-13`).
 */
import { KIND_ALIASES, KINDS, nearest, type Kind } from '@proxops/schema'
import type { PlanTarget } from '@proxops/planner'
import { CliError } from '../errors.js'
import type { DesiredObject } from '../status-model.js'

export interface ObjectRef {
  kind: Kind
  name: string
  /** as typed, for messages */
  text: string
}

function kindOf(spelling: string): Kind | undefined {
  const lower = spelling.toLowerCase()
  return KINDS.find((k) => KIND_ALIASES[k].some((a) => a.toLowerCase() === lower))
}

/** `VM/web` -> {kind: 'VM', name: 'web'}; `what` names the flag or argument in the error. */
export function parseObjectRef(text: string, what: string): ObjectRef {
  const slash = text.indexOf('/')
  const kind = slash > 0 ? kindOf(text.slice(0, slash)) : undefined
  const name = text.slice(slash + 1)
  if (slash <= 0 || name === '' || name.includes('/'))
    throw new CliError('USAGE', `${what} ${text}: write KIND/name, such as VM/web or LXC/cache-01`)
  if (!kind) {
    const guess = nearest(text.slice(0, slash), KINDS)
    throw new CliError(
      'USAGE',
      `${what} ${text}: unknown kind "${text.slice(0, slash)}"${guess ? `; did you mean ${guess}/${name}?` : ''} (one of ${KINDS.join(', ')})`,
    )
  }
  return { kind, name, text }
}

export const sameObject = (ref: ObjectRef, o: { kind: string; name: string }): boolean =>
  o.kind === ref.kind && o.name === ref.name

/**
 * Every reference must name an object some cluster declares; the error suggests the nearest one. `declared`: each
 * cluster's desired objects (clusters that could not be loaded are left out: their cycle reports why).
 */
export function checkDeclared(
  refs: readonly ObjectRef[],
  declared: ReadonlyMap<string, readonly DesiredObject[]>,
  what: string,
): void {
  const all = [...declared.values()].flat()
  for (const ref of refs) {
    if (all.some((o) => sameObject(ref, o))) continue
    const names = all.filter((o) => o.kind === ref.kind).map((o) => o.name)
    const guess = nearest(ref.name, names)
    throw new CliError(
      'USAGE',
      `${what} ${ref.text}: no ${ref.kind} named "${ref.name}" in cluster${declared.size === 1 ? '' : 's'} ${[...declared.keys()].join(', ')}${guess ? `; did you mean ${ref.kind}/${guess}?` : ''}`,
    )
  }
}

/** The planner's targets for one cluster: each reference with the addresses the plan gives its object there. */
export function planTargets(refs: readonly ObjectRef[], objects: readonly DesiredObject[]): PlanTarget[] {
  return refs.map((ref) => {
    const object = objects.find((o) => sameObject(ref, o))
    return { kind: ref.kind, name: ref.name, ...(object ? { addresses: object.addresses } : {}) }
  })
}
