/**
 * PVE endpoint URLs: one spelling per endpoint, so a configured `base-url` and the client's request prefix
 * agree, and one rule for what an endpoint URL may be, which the configuration check and the client both word.
 */

/** What is wrong with a PVE endpoint URL, in words that fit after "the base URL"; undefined when it is usable. */
export function baseUrlProblem(input: string): string | undefined {
  let url: URL
  try {
    url = new URL(input.trim())
  } catch {
    return 'is not an absolute URL: write https://<host>:8006'
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must use https:// (or http://)'
  if (!url.hostname) return 'has no host'
  if (url.username || url.password) return 'must not carry credentials'
  if (url.search || url.hash) return 'must not have a query or fragment'
  return undefined
}

/**
 * `https://host:port` plus any path prefix, without a trailing `/` and without `/api2/json` (the client adds
 * it). Throws a TypeError when `input` is not an absolute URL.
 */
export function normaliseBaseUrl(input: string): string {
  const url = new URL(input.trim())
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api2\/json$/, '')
  return `${url.protocol}//${url.host}${path}`
}
