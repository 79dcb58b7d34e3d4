/**
 * How a kind says what each of its requests needs from the API token (docs/getting-started.md "A least-privilege
 * token"): one alternative list of grants per need, or why only root@pam may do it. The preflight
 * (privileges.ts) collects the needs of every request of a plan through the kinds' tables.
 */
import { splitList } from '@proxops/pve-client/wire'
import type { Action, PlanParams, PveRequest } from '../plan-types.js'
import type { RequestOf } from './runners.js'

/** One way to satisfy a need: every privilege in `privs` on `path`. */
export interface Grant {
  path: string
  privs: readonly string[]
}

/** One need of a request: any one of the grants, or a text saying why only root@pam may (`key`: what it is for). */
export interface RequestNeed {
  key?: string
  need: Grant[] | string
}

/** What each request call of a kind needs, from the request and the action that sends it. */
export type Privileges = {
  [C in PveRequest['call']]?: (request: RequestOf<C>, action: Action) => RequestNeed[]
}

/** every privilege in `privs` on `path` */
export const one = (path: string, ...privs: string[]): Grant[] => [{ path, privs }]
/** any one of `privs` on `path` */
export const anyOf = (path: string, ...privs: string[]): Grant[] => privs.map((p) => ({ path, privs: [p] }))

/** a request parameter as text (numbers printed), or undefined */
export const str = (params: PlanParams, k: string): string | undefined =>
  typeof params[k] === 'string' ? params[k] : typeof params[k] === 'number' ? String(params[k]) : undefined
/** the keys a request's `delete` parameter removes */
export const deletes = (params: PlanParams): string[] => splitList(str(params, 'delete'))

/** Collects needs: `push(key, list)` records each of `list` for `key` (undefined: the call itself). */
export function needs(): { out: RequestNeed[]; push(key: string | undefined, list: (Grant[] | string)[]): void } {
  const out: RequestNeed[] = []
  return {
    out,
    push(key, list) {
      for (const need of list) out.push(key === undefined ? { need } : { key, need })
    },
  }
}
