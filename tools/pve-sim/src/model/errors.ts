import { PveHttpError } from '../http/types.js'

/** PVE's `die "..."` in a handler: 500 with the message as reason phrase. */
export function fail500(message: string): PveHttpError {
  return new PveHttpError(500, message)
}

/** raise_param_exc: 400 `Parameter verification failed.` with the per-parameter errors map. */
export function fail400(errors: Record<string, string>): PveHttpError {
  return new PveHttpError(400, 'Parameter verification failed.', errors)
}

export { PveHttpError }
