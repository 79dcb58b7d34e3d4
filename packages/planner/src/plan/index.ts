export { plan, artifactVolid, type PlanOptions } from './plan.js'
export { mergedView } from './guest-plan.js'
export { compareActions, guestAddress, artifactAddress } from './order.js'
