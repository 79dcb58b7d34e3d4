import { describe, expect, it } from 'vitest'
import { PassThrough } from 'node:stream'
import { createLogger } from './log.js'
import { Redactor } from './redact.js'

function capture(format: 'text' | 'json', level: 'info' | 'debug' = 'info') {
  const stream = new PassThrough()
  const chunks: string[] = []
  stream.on('data', (c: Buffer) => chunks.push(c.toString()))
  const redactor = new Redactor().add('CANARY-token-1')
  const log = createLogger({ level, format, redactor, stream })
  return { log, text: () => chunks.join('') }
}

describe('logger', () => {
  it('writes human lines with fields, masking secrets in messages, fields and errors', async () => {
    const { log, text } = capture('text')
    log.info('cycle done', { cluster: 'homelab', actions: 3, note: 'with CANARY-token-1' })
    log.warn('failed', { error: new Error('bad PVEAPIToken=root@pam!x=CANARY-token-1'), password: 'hunter22' })
    log.debug('hidden')
    await new Promise((r) => setImmediate(r))
    const out = text()
    expect(out).toContain('info: cycle done cluster=homelab actions=3 note="with (sensitive)"')
    expect(out).toContain('password="(sensitive)"')
    expect(out).not.toContain('CANARY')
    expect(out).not.toContain('hunter22')
    expect(out).not.toContain('hidden')
  })

  it('writes no terminal control from a message or a field, in either format; NDJSON keeps the values', async () => {
    const hostile = 'PVE said \u001b]0;pwned\u0007\u001b[2J\u009b31m\u202e\r\nnext'
    for (const format of ['text', 'json'] as const) {
      const { log, text } = capture(format)
      log.error(hostile, { error: new Error(hostile), name: hostile })
      await new Promise((r) => setImmediate(r))
      const out = text()
      expect(out.trimEnd().split('\n'), format).toHaveLength(1)
      expect(out.trimEnd(), format).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/)
      if (format === 'json')
        expect(JSON.parse(out)).toMatchObject({ message: expect.stringContaining(hostile), name: hostile })
      else expect(out).toContain('\\u001b]0;pwned\\u0007')
    }
  })

  it('writes NDJSON in json mode', async () => {
    const { log, text } = capture('json', 'debug')
    log.debug('tick', { cluster: 'edge', token: 'CANARY-token-1' })
    await new Promise((r) => setImmediate(r))
    const lines = text().trim().split('\n')
    expect(lines).toHaveLength(1)
    const parsed = JSON.parse(lines[0] as string) as Record<string, unknown>
    expect(parsed).toMatchObject({ level: 'debug', message: 'tick', cluster: 'edge', token: '(sensitive)' })
    expect(typeof parsed.timestamp).toBe('string')
  })

  it('log(level) writes at that level and drops levels below the configured one', async () => {
    const { log, text } = capture('text', 'info')
    log.log('debug', 'not shown')
    log.log('warn', 'shown', { token: 'CANARY-token-1' })
    log.error('bad', { note: 'CANARY-token-1' })
    await new Promise((r) => setImmediate(r))
    const lines = text().trim().split('\n')
    expect(lines).toEqual(['warn: shown token="(sensitive)"', 'error: bad note="(sensitive)"'])
  })
})
