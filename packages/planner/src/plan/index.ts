export { plan, artifactVolid, type PlanOptions } from './plan.js'
export { addressesOf } from './addresses.js'
export { mergedView } from '../kinds/guest/guest-plan.js'
export { compareActions, guestAddress, artifactAddress } from './order.js'
