/**
 * Resource pools: the `Pool` kind (pve-manager PVE::API2::Pool, user.cfg's `pool:` lines) and the pool id a
 * guest's `spec.pool` names. docs/schema-reference.md#pool
 */
import * as v from 'valibot'
import { issueMessage as m } from '../errors.js'
import { str } from './fields.js'
import type { PathKey } from './parse.js'
import type { Manifest } from './types.js'

/**
 * pve-access-control verify_poolname (`pve-poolid`): up to three `/`-separated levels of letters, digits, `.`,
 * `-` and `_`. Any such id may be named by `spec.pool` (a pool made by hand may predate the next rule).
 */
export const POOL_ID = /^[A-Za-z0-9.\-_]+(?:\/[A-Za-z0-9.\-_]+){0,2}$/
/** API2::Pool create_pool also wants every new level to start with a letter */
export const NEW_POOL_ID = /^[A-Za-z][A-Za-z0-9.\-_]*(?:\/[A-Za-z][A-Za-z0-9.\-_]*){0,2}$/

/** `spec.id` of a Pool (the envelope is built in schemas.ts) */
export const poolIdField = v.pipe(
  v.string(m('field-type', 'must be a string')),
  v.description(
    'PVE pool id; default `metadata.name`. Up to three `/`-separated levels (`web/blue`), each starting with a letter; a nested pool needs its parent to exist (declare it too).',
  ),
  v.regex(
    NEW_POOL_ID,
    m('field-invalid', 'must be a PVE pool id: up to three "/"-separated levels, each starting with a letter'),
  ),
)

export const poolCommentField = v.pipe(
  str('Pool comment; ProxOps writes its ownership marker in front of it (`managed-by=proxops <comment>`).'),
  v.regex(/^[^\n\r]*$/, m('field-invalid', 'must be a single line')),
)

/** the id's problem (create_pool's rules), or undefined */
export function newPoolIdProblem(id: string): string | undefined {
  return NEW_POOL_ID.test(id)
    ? undefined
    : `${JSON.stringify(id)} cannot be a PVE pool id: letters, digits, ".", "-" and "_", in at most three "/"-separated levels each starting with a letter`
}

/** `spec.pool` of guests */
export const poolRef = v.pipe(
  v.string(m('field-type', 'must be a string')),
  v.description(
    'PVE pool the guest is a member of: set with `pool=` at create/clone, else through the pools API. A Pool of the same id in this cluster is created first; absent = membership not owned.',
  ),
  v.regex(POOL_ID, m('field-invalid', 'must be a PVE pool id (up to three "/"-separated levels)')),
)

/**
 * The pool a manifest needs before it can be created, when a Pool of this cluster may declare it: a guest's
 * `spec.pool` (create_vm checks it exists), a nested pool's parent (create_pool wants it), the pool a backup
 * job selects (vzdump backs up the pool's members).
 */
export function poolNeeded(m: Manifest): { id: string; path: PathKey[] } | undefined {
  if (m.kind === 'Pool') {
    const slash = m.spec.id.lastIndexOf('/')
    return slash < 0 ? undefined : { id: m.spec.id.slice(0, slash), path: ['spec', 'id'] }
  }
  if (m.kind === 'BackupJob')
    return 'pool' in m.spec.selection ? { id: m.spec.selection.pool, path: ['spec', 'selection', 'pool'] } : undefined
  if (m.kind === 'ISO' || m.kind === 'CTTemplate' || m.kind === 'DiskImage' || m.spec.pool === undefined)
    return undefined
  return { id: m.spec.pool, path: ['spec', 'pool'] }
}
