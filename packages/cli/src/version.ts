import { readFileSync } from 'node:fs'

/** The CLI's own version, read from its package.json (works from src/ and dist/). */
export const version: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version
