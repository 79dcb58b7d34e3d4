import { WireError } from './errors.js'
import { isUrlEncoded } from './sshkeys.js'

/**
 * Request parameters -> form body. URLSearchParams percent-encodes `;`, `=`, `,`, `&`, `+` inside values, which
 * PVE's decoder (it splits pairs on both `&` and `;`, and each pair at the first `=`) otherwise cuts or splits.
 * Booleans are sent as `1`/`0` (PVE rejects `true`); `undefined` values are left out.
 */
export type ParamValue = string | number | boolean | undefined

export function encodeParams(params: Readonly<Record<string, ParamValue>> | undefined): URLSearchParams {
  const out = new URLSearchParams()
  if (!params) return out
  for (const key of Object.keys(params)) {
    const value = params[key]
    if (value === undefined) continue
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new WireError('WIRE_SCALAR', 'parameter must be a string, number or boolean', key)
    }
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new WireError('WIRE_SCALAR', 'parameter is not a finite number', key)
    }
    const s = typeof value === 'boolean' ? (value ? '1' : '0') : String(value)
    if (key === 'sshkeys' && !isUrlEncoded(s)) {
      // Sending raw keys makes PVE answer 400 `invalid urlencoded string`, or silently lose `+`.
      throw new WireError('WIRE_SSHKEYS', 'not in PVE urlencoded format (use encodeSshKeys)', key)
    }
    out.append(key, s)
  }
  return out
}
