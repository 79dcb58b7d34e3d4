/**
 * PVE message texts whose meaning both the client's error classification and the planner's executor need.
 * Pure, no I/O.
 */

/**
 * PVE could not get a lock in time: a flock (`lock_file`: `can't lock file '<path>' - got timeout`) or a
 * pmxcfs cluster lock (pve-cluster `cfs_lock_storage`/`cfs_lock_domain`: `cfs-lock 'storage-<id>' error:
 * got lock request timeout`). Matched anywhere, as tasks prefix it (`unable to create VM 100 - ...`).
 */
const LOCK_TIMEOUT = /can't lock file .*got timeout|cfs-lock '[^']*' error: got lock request timeout/

export function isLockTimeoutMessage(message: string): boolean {
  return LOCK_TIMEOUT.test(message)
}
