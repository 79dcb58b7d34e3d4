/**
 * `@proxops/planner/inventory`: the parts of a LiveInventory (what observe() read), for code that builds or reads
 * one field by field: a custom reader's tests, a status renderer. `LiveInventory` itself is on the main entry.
 */
export type {
  HeldVmid,
  LiveBackupJob,
  LiveFirewall,
  LiveGuest,
  LiveHa,
  LiveNode,
  LivePool,
  LiveStorage,
  LiveVolume,
  MigrationCheck,
  Observed,
  UnknownGuest,
} from '../inventory.js'
