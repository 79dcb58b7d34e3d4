export type * from './ports.js'
export type * from './inventory.js'
export * from './plan-types.js'
export type * from './desired.js'
export { guestVmids } from './desired.js'
export { plan, artifactVolid, mergedView, compareActions, guestAddress, artifactAddress } from './plan/index.js'
export type { PlanOptions } from './plan/index.js'
export { serializePlan, parsePlan } from './serialize.js'
export {
  convergence,
  describeBlocked,
  blockedCount,
  type Convergence,
  type Blocked,
  type BlockReason,
} from './convergence.js'
export {
  checkPrivileges,
  neededPaths,
  privilegeNeeds,
  pveumGrant,
  type Grant,
  type PrivilegeNeed,
  type Privileges,
} from './privileges.js'
export { PlanInputError, type PlanErrorCode } from './errors.js'
export * from './observe/index.js'
export * from './execute/index.js'
export * from './adopt/index.js'
export * from './firewall/index.js'
