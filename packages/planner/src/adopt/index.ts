export { adopt, sanitiseName } from './adopt.js'
export { adoptedKeyName } from './ssh.js'
export type { AdoptOptions, AdoptResult, AdoptedFile, AdoptGap, AdoptSkip } from './types.js'
