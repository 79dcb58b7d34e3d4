export { observe, ObserveError, DEFAULT_READ_CONCURRENCY } from './observe.js'
export { splitPending } from '../kinds/guest/read.js'
export type { ObserveOptions } from './observe.js'
