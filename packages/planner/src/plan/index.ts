export { plan, type PlanOptions } from './plan.js'
export { addressesOf } from './addresses.js'
