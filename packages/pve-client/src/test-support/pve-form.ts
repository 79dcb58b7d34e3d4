/**
 * Test oracle: decodes a query/form string the way pve-http-server's `extract_params` does (pairs split on
 * `&` and `;`, each pair on `=` keeping the first two fields, `+` as space, then percent-decoding), so tests
 * can prove our encoding survives PVE's decoder. Written from pve-http-server's decode_urlencoded, independent of our encoder.
 */
export function pveDecodeForm(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const pair of body.split(/[&;]/)) {
    if (pair === '') continue
    const fields = pair.split('=')
    const key = unescape(fields[0] ?? '')
    const value = unescape(fields[1] ?? '')
    const prev = out[key]
    if (prev === undefined) out[key] = value
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value]
  }
  return out
}

function unescape(s: string): string {
  const plus = s.replace(/\+/g, ' ')
  try {
    return decodeURIComponent(plus)
  } catch {
    return plus
  }
}
