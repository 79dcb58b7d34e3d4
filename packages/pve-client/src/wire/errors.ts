/** Stable codes for every way a wire codec can refuse its input. */
export type WireErrorCode =
  'WIRE_PROPERTY_STRING' | 'WIRE_SIZE' | 'WIRE_TAGS' | 'WIRE_SSHKEYS' | 'WIRE_UPID' | 'WIRE_SCALAR' | 'WIRE_CONFIG'

/**
 * The only error a codec throws. Messages name the field and the reason, never echo a whole input value
 * (config values can hold secrets such as `cipassword`).
 */
export class WireError extends Error {
  override readonly name = 'WireError'
  readonly code: WireErrorCode
  readonly field: string | undefined
  /** the reason without the field name */
  readonly detail: string

  constructor(code: WireErrorCode, message: string, field?: string) {
    super(field === undefined ? message : `${field}: ${message}`)
    this.code = code
    this.field = field
    this.detail = message
  }
}

/** Short, printable excerpt of a non-secret value for messages (sizes, UPIDs, tags). */
export function excerpt(value: string, max = 40): string {
  const s = JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value)
  return s
}
