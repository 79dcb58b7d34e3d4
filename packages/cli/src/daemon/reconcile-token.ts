/**
 * The bearer token of `POST /reconcile` when the daemon has no HTTP credentials: a random value the leading daemon
 * writes to `<data-dir>/reconcile.token` (mode 0600) at start, so that only users who can read its data dir (the
 * daemon's own, root) can ask it for a tick. `proxops reconcile` reads it from there.
 */
export const RECONCILE_TOKEN_FILE = 'reconcile.token'
