export { observe, ObserveError, DEFAULT_READ_CONCURRENCY } from './observe.js'
export type { ObserveOptions } from './observe.js'
