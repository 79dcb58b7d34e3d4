export type * from './ports.js'
export type * from './inventory.js'
export * from './observe/index.js'
export * from './execute/index.js'
