/** An error that PVE would answer with. `errors` renders as the 400 `errors` map. */
export class PveHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Record<string, string>,
  ) {
    super(message)
    this.name = 'PveHttpError'
  }
}

/** PVE's `die "..."` in a handler: 500 with the message as reason phrase. */
export function fail500(message: string): PveHttpError {
  return new PveHttpError(500, message)
}

/** raise_param_exc: 400 `Parameter verification failed.` with the per-parameter errors map. */
export function fail400(errors: Record<string, string>): PveHttpError {
  return new PveHttpError(400, 'Parameter verification failed.', errors)
}

/** qemu-server's digest check (update_vm_api, resize) */
export const QEMU_DIGEST_MISMATCH = 'checksum mismatch (file change by other user?)'
/** PVE::Tools::assert_if_modified (pve-container's config writes, move_disk, move_volume) */
export const ASSERT_IF_MODIFIED = 'detected modified configuration - file changed by other user? Try again.'
export const LXC_DIGEST_MISMATCH = ASSERT_IF_MODIFIED
