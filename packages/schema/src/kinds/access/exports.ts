/** What the planner needs of the access kinds' rules (one home: the planner never repeats PVE's id formats). */
export { normalizeAclPath, validAclPath } from './finalise.js'
export { aclEntries, tokenFullId } from './identity.js'
export { validUserid } from './schema.js'
