/**
 * The `proxops/*` annotations every kind may carry: dependencies, the disruption cap, safety snapshots, a
 * suspension and the per-object policies (prune, ignored fields).
 */
import type { Add } from '../kinds/contract.js'
import { KINDS, type Kind, canonicalKind } from '../kinds.js'

/** `proxops/depends-on` item grammar. */
export const DEPENDS_ON_ITEM = /^([A-Za-z]+):([A-Za-z0-9._-]+)$/
export const DEPENDS_ON = 'proxops/depends-on'
export const DISRUPTION = 'proxops/disruption'
/** Disruption policies, least to most disruptive; `allow` is `stop` (every class applied). */
export const DISRUPTION_POLICIES = ['none', 'hotplug', 'reboot', 'stop', 'allow'] as const
/** `"true"` or `"false"`: safety snapshots for this guest, whatever the cluster's `safety-snapshots` says */
export const SAFETY_SNAPSHOTS = 'proxops/safety-snapshots'
/** a reason: the object is read and shown with its drift, never written (docs/operations.md, "Suspend and resume") */
export const SUSPEND = 'proxops/suspend'
/** `never`: ProxOps never deletes the object, even after it leaves git (docs/operations.md, "Per-object policies") */
export const PRUNE = 'proxops/prune'
/** comma-separated manifest paths (`spec.memory, spec.cpu`) whose live values are never compared */
export const IGNORE_FIELDS = 'proxops/ignore-fields'
/** one `ignore-fields` path: `spec.` then dotted names, each with optional `[n]` indexes */
export const IGNORE_FIELD_PATH = /^spec(\.[a-z][a-z0-9-]*(\[\d+\])*)+$/

/** The paths of a `proxops/ignore-fields` value (empty items dropped). */
export const ignoreFieldPaths = (value: string): string[] =>
  value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')

/** how many safety snapshots a guest keeps when the cluster entry does not say (`safety-snapshots.keep`) */
export const DEFAULT_SAFETY_SNAPSHOT_KEEP = 3

/** Parses a `proxops/depends-on` value into canonical (kind, name) pairs, or returns the first problem. */
export function parseDependsOn(
  value: string,
): { ok: true; refs: Array<{ kind: Kind; name: string }> } | { ok: false; message: string } {
  const refs: Array<{ kind: Kind; name: string }> = []
  for (const raw of value.split(',')) {
    const item = raw.trim()
    if (item === '') continue
    const match = DEPENDS_ON_ITEM.exec(item)
    if (!match)
      return {
        ok: false,
        message: `${DEPENDS_ON} item ${JSON.stringify(item)} must look like Kind:name (e.g. "ISO:debian-13")`,
      }
    const kind = canonicalKind(match[1]!)
    if (!kind)
      return {
        ok: false,
        message: `${DEPENDS_ON} item ${JSON.stringify(item)} names unknown kind ${JSON.stringify(match[1])}: use one of ${KINDS.join(', ')}`,
      }
    refs.push({ kind, name: match[2]! })
  }
  return { ok: true, refs }
}

/** The `proxops/*` annotations of any kind. */
export function checkAnnotations(annotations: Record<string, string>, add: Add): void {
  for (const [key, value] of Object.entries(annotations)) {
    const path = ['metadata', 'annotations', key]
    if (key === DEPENDS_ON) {
      const r = parseDependsOn(value)
      if (!r.ok) add('annotation-invalid', path, r.message)
    } else if (key === DISRUPTION) {
      if (!(DISRUPTION_POLICIES as readonly string[]).includes(value.trim())) {
        add('annotation-invalid', path, `${DISRUPTION} must be one of ${DISRUPTION_POLICIES.join(', ')}`)
      }
    } else if (key === SAFETY_SNAPSHOTS) {
      if (value.trim() !== 'true' && value.trim() !== 'false')
        add('annotation-invalid', path, `${SAFETY_SNAPSHOTS} must be "true" or "false"`)
    } else if (key === PRUNE) {
      if (value.trim() !== 'never') add('annotation-invalid', path, `${PRUNE} must be "never" (leave it out to allow)`)
    } else if (key === IGNORE_FIELDS) {
      const paths = ignoreFieldPaths(value)
      const bad = paths.find((p) => !IGNORE_FIELD_PATH.test(p))
      if (paths.length === 0 || bad !== undefined)
        add(
          'annotation-invalid',
          path,
          `${IGNORE_FIELDS} must list manifest paths such as "spec.memory, spec.cpu.cores"${bad !== undefined ? `: ${JSON.stringify(bad)} is not one` : ''}`,
        )
    } else if (key === SUSPEND) {
      if (value.trim() === '') add('annotation-invalid', path, `${SUSPEND} must say why (a reason, not empty)`)
    } else if (key.startsWith('proxops/')) {
      add(
        'annotation-invalid',
        path,
        `unknown annotation ${JSON.stringify(key)}: ProxOps reads only ${DEPENDS_ON}, ${DISRUPTION}, ${SAFETY_SNAPSHOTS}, ${SUSPEND}, ${PRUNE} and ${IGNORE_FIELDS}`,
      )
    }
  }
}
