/**
 * PVE endpoint URLs: one spelling per endpoint, so a configured `base-url` and the client's request prefix
 * agree. The configuration's checks (https, no credentials, no query) are in @proxops/schema's config.
 */

/**
 * `https://host:port` plus any path prefix, without a trailing `/` and without `/api2/json` (the client adds
 * it). Throws a TypeError when `input` is not an absolute URL.
 */
export function normaliseBaseUrl(input: string): string {
  const url = new URL(input.trim())
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api2\/json$/, '')
  return `${url.protocol}//${url.host}${path}`
}
