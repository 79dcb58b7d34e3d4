export { plan, type PlanOptions } from './plan.js'
export { addressesOf } from './addresses.js'
export { describeAction } from '../kinds/index.js'
