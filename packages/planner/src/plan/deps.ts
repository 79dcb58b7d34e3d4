/** The dependency model: structured edges plus `proxops/depends-on`, and topological levels. */
import { poolNeeded, type Manifest } from '@proxops/schema'
import { PlanInputError } from '../errors.js'
import type { ResourceKind } from '../plan-types.js'

const ALIASES: Record<string, ResourceKind> = {
  vm: 'VM',
  templatevm: 'TemplateVM',
  tvm: 'TemplateVM',
  template: 'TemplateVM',
  lxc: 'LXC',
  templatect: 'TemplateCT',
  tct: 'TemplateCT',
  iso: 'ISO',
  cttemplate: 'CTTemplate',
  ctt: 'CTTemplate',
  diskimage: 'DiskImage',
  disk: 'DiskImage',
  pool: 'Pool',
}

export const keyOf = (kind: string, name: string): string => `${kind}/${name}`

/** Prerequisites of a manifest as `Kind/name` keys, sorted and de-duplicated. */
export function prerequisites(m: Manifest): string[] {
  const out = new Set<string>()
  if (m.kind === 'VM' || m.kind === 'TemplateVM') {
    const iso = m.spec.hardware?.cdrom?.iso
    if (iso !== undefined && iso !== 'none') out.add(keyOf('ISO', iso))
    for (const d of m.spec.disks) if (d.image !== undefined) out.add(keyOf('DiskImage', d.image))
    if (m.spec.clone !== undefined) out.add(keyOf('TemplateVM', m.spec.clone))
  } else if (m.kind === 'LXC' || m.kind === 'TemplateCT') {
    if (m.spec.template !== undefined) out.add(keyOf('CTTemplate', m.spec.template))
    if (m.spec.clone !== undefined) out.add(keyOf('TemplateCT', m.spec.clone))
  }
  const ann = m.metadata.annotations?.['proxops/depends-on']
  for (const item of (ann ?? '').split(',')) {
    const t = item.trim()
    if (t === '') continue
    const match = /^([A-Za-z]+):([A-Za-z0-9.\-_]+)$/.exec(t)
    const kind = match ? ALIASES[(match[1] as string).toLowerCase()] : undefined
    if (!match || !kind)
      throw new PlanInputError(
        'PLAN_DEPENDENCY',
        `invalid proxops/depends-on item ${JSON.stringify(t)}`,
        keyOf(m.kind, m.metadata.name),
      )
    out.add(keyOf(kind, match[2] as string))
  }
  return [...out].sort()
}

/** Level 0 for no prerequisites, else 1 + the highest prerequisite level. Throws on unknown targets and cycles. */
export function levels(byKey: ReadonlyMap<string, Manifest>): Map<string, { level: number; prereqs: string[] }> {
  // a guest's pool and a nested pool's parent, when a Pool of this cluster declares it (schema's poolNeeded)
  const pools = new Map<string, string>()
  for (const [key, m] of byKey) if (m.kind === 'Pool') pools.set(m.spec.id, key)
  const out = new Map<string, { level: number; prereqs: string[] }>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const visit = (key: string): number => {
    const done = out.get(key)
    if (done) return done.level
    if (onStack.has(key)) {
      throw new PlanInputError(
        'PLAN_DEPENDENCY',
        `dependency cycle ${[...stack.slice(stack.indexOf(key)), key].join(' → ')}`,
        key,
      )
    }
    const m = byKey.get(key)
    if (!m)
      throw new PlanInputError(
        'PLAN_DEPENDENCY',
        `depends on ${key}, which is not in this cluster`,
        stack[stack.length - 1],
      )
    stack.push(key)
    onStack.add(key)
    const pool = poolNeeded(m)
    const poolKey = pool && pools.get(pool.id)
    const prereqs = poolKey === undefined ? prerequisites(m) : [...new Set([...prerequisites(m), poolKey])].sort()
    let level = 0
    for (const p of prereqs) level = Math.max(level, visit(p) + 1)
    stack.pop()
    onStack.delete(key)
    out.set(key, { level, prereqs })
    return level
  }
  for (const key of [...byKey.keys()].sort()) visit(key)
  return out
}
