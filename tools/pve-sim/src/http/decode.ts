/**
 * Request parameter decoding exactly as pve-http-server's AnyEvent.pm does it:
 * `decode_urlencoded` splits pairs on `&` *and* `;`, splits each pair on `=` keeping only the first two fields
 * (so an unescaped second `=` cuts the value), decodes `+` and `%XX`, turns repeated keys into arrays, and a key
 * without `=` into undef (`null` here). `extract_params` reads form or JSON bodies for POST/PUT and lets query
 * parameters override body parameters; `_dc` is dropped.
 */

export type DecodedValue = string | string[] | null
export type RawParams = Record<string, unknown>

/** Perl's `split(/re/, $s)`: like String.split but trailing empty fields are removed. */
function perlSplit(s: string, re: RegExp): string[] {
  const parts = s.split(re)
  while (parts.length && parts[parts.length - 1] === '') parts.pop()
  return parts
}

function unescapeBytes(s: string): string {
  return s.replace(/\+/g, ' ').replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
}

/** `data` is the raw bytes as a latin1 string (one char per byte). Keys stay bytes; values are UTF-8 decoded. */
export function decodeUrlencoded(data: string): Record<string, DecodedValue> {
  const res: Record<string, DecodedValue> = Object.create(null) as Record<string, DecodedValue>
  if (!data) return res
  for (const kv of perlSplit(data, /[&;]/)) {
    const fields = perlSplit(kv, /=/)
    const k = unescapeBytes(fields[0] ?? '')
    const raw = fields[1]
    if (raw === undefined) {
      res[k] = null
      continue
    }
    const v = Buffer.from(unescapeBytes(raw), 'latin1').toString('utf8')
    const old = res[k]
    if (old !== undefined && old !== null) res[k] = Array.isArray(old) ? [...old, v] : [old, v]
    else res[k] = v
  }
  return res
}

/** `parse_content_type`: the media type before the first `;` or `,`. */
export function mediaType(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined
  return contentType.split(/\s*[;,]\s*/)[0]
}

export class BodyDecodeError extends Error {}

/**
 * Parameters of one request. `body` is the raw request body; a JSON body must decode to an object (Perl dies
 * with a 500 otherwise, which the caller renders).
 */
export function extractParams(method: string, contentType: string | undefined, body: Buffer, query: string): RawParams {
  let params: RawParams = Object.create(null) as RawParams
  if (method === 'PUT' || method === 'POST') {
    if (mediaType(contentType) === 'application/json') {
      let parsed: unknown
      try {
        parsed = JSON.parse(body.toString('utf8'))
      } catch {
        throw new BodyDecodeError(
          `malformed JSON string, neither tag, array, object, number, string or atom, at character offset 0 (before "${body.toString('utf8').slice(0, 20)}")`,
        )
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new BodyDecodeError('Not a HASH reference')
      params = Object.assign(Object.create(null) as RawParams, parsed)
    } else {
      params = decodeUrlencoded(body.toString('latin1'))
    }
  }
  const q = decodeUrlencoded(query)
  for (const k of Object.keys(q)) params[k] = q[k]
  delete params._dc
  return params
}
