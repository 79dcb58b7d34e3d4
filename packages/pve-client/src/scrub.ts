import { SENSITIVE } from './wire/sensitive.js'

/**
 * Removes known secret values from text before it leaves the client (error messages, log lines). Defence in
 * depth: messages are built without credentials, but PVE echoes some parameter values in its errors.
 */
export function scrub(text: string, secrets: Iterable<string>): string {
  let out = text
  for (const s of secrets) {
    if (s.length < 4) continue
    out = out.split(s).join(SENSITIVE)
    const enc = encodeURIComponent(s)
    if (enc !== s) out = out.split(enc).join(SENSITIVE)
  }
  return out
}
