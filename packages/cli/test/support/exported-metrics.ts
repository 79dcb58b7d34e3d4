/** The series names the daemon exports on /metrics: its Metrics registry, default process metrics included. */
import { Metrics } from '../../src/daemon/metrics.js'

export async function exportedSeries(): Promise<Set<string>> {
  const text = await new Metrics().text()
  const names = new Set<string>()
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string]
    // a histogram is queried through its series, never by its family name
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`)
    else if (type === 'summary') for (const s of ['', '_sum', '_count']) names.add(`${name}${s}`)
    else names.add(name)
  }
  return names
}

/** the repository root, where deploy/ and docs/ are */
export const repoRoot = new URL('../../../../', import.meta.url)
