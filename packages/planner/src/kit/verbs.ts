/**
 * The verbs of a plan's actions: how a plan shows each one and where it falls among the actions of one dependency
 * level, unless the kind that plans it says otherwise (Kind.verbs). A new kind planning `create`, `update` and
 * `delete` needs nothing here; the CLI renders every action from this and its kind (describeAction).
 */
import type { ActionType } from '../plan-types.js'

export interface VerbText {
  /** what happens to the object, after its address: `will be created` */
  readonly phrase: string
  /** its place among the actions of one tier and level (lower first) */
  readonly rank: number
}

export const VERBS: Readonly<Record<ActionType, VerbText>> = {
  download: { phrase: 'will be downloaded', rank: 0 },
  create: { phrase: 'will be created', rank: 0 },
  // before every other action of its guest (a guest is never both created and snapshotted in one plan)
  snapshot: { phrase: 'will get a safety snapshot first (the changes below wait for it)', rank: 0 },
  clone: { phrase: 'will be cloned', rank: 0 },
  // a guest that moves does nothing else this cycle; its other changes follow once it is on its node
  migrate: { phrase: 'will be migrated to its spec.node (its other changes follow once it is there)', rank: 0 },
  // before the guest's snapshot, writes and resizes (`#move-disk:` sorts before `#snapshot`; each waits for it)
  'move-disk': {
    phrase: 'will have a disk moved to another storage (the old volume is freed once the copy is in place)',
    rank: 0,
  },
  update: { phrase: 'will be updated in place', rank: 1 },
  'shutdown-then-update': { phrase: 'will be updated, shut down and started again', rank: 1 },
  resize: { phrase: 'will have a disk grown', rank: 2 },
  'mark-template': { phrase: 'will be marked as a template', rank: 3 },
  restart: { phrase: 'will be restarted to apply pending changes', rank: 4 },
  start: { phrase: 'will be started', rank: 5 },
  stop: { phrase: 'will be stopped', rank: 6 },
  join: { phrase: 'will join its pool', rank: 8 },
  delete: { phrase: 'will be deleted (prune)', rank: 9 },
}
