export { adopt, sanitiseName } from './adopt.js'
export { adoptKeyName } from '../kit/ssh.js'
export type { AdoptOptions, AdoptResult, AdoptedFile, AdoptGap, AdoptSkip } from '../kit/adopt.js'
export {
  selectForAdoption,
  matchesFilter,
  declaredObjects,
  type AdoptSelection,
  type AdoptFilter,
  type SelectedInventory,
  type OwnedElsewhere,
} from './select.js'
