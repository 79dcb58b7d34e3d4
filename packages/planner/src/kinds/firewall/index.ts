export { firewallVmids } from './plan.js'
export {
  applyWrite,
  desiredFirewall,
  firewallWrites,
  liveFirewall,
  ruleLine,
  type CanonFirewall,
  type CanonRule,
  type DesiredFirewall,
} from './canon.js'
