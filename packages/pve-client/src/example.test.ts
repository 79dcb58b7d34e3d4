import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { startSimulator } from '@proxops/pve-sim'
import { createPveClient } from './client.js'

/** Runs the README's example against the simulator, and checks the README shows that very file. */
describe('README example', () => {
  it('lists guests and waits for a task', async () => {
    const sim = await startSimulator({ taskDurationMs: 20, estate: { guests: 4 }, log: () => {} })
    try {
      const setup = createPveClient({
        baseUrl: sim.url,
        auth: { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
        tls: { ca: sim.caPem! },
      })
      await setup.waitTaskOk(await setup.createGuest('pve2', 'qemu', { vmid: 4242, name: 'example', memory: 256 }), {
        pollIntervalMs: 10,
      })
      await setup.close()
      // @ts-expect-error plain .mjs example without type declarations
      const { main } = (await import('../examples/list-guests.mjs')) as {
        main: (env: object, args: string[], print: (l: string) => void) => Promise<void>
      }
      const lines: string[] = []
      await main(
        {
          PVE_URL: sim.url,
          PVE_TOKEN_ID: sim.token.id,
          PVE_TOKEN_SECRET: sim.token.secret,
          PVE_FINGERPRINT: sim.fingerprint,
        },
        ['pve2', '4242'],
        (l) => lines.push(l),
      )
      expect(lines[0]).toMatch(/^PVE 9\.1/)
      expect(lines).toContain('pve2 qemu 4242 example stopped')
      expect(lines.filter((l) => / (qemu|lxc) \d+ /.test(l)).length).toBe(5)
      expect(lines.at(-1)).toBe('start 4242: ok (OK)')
      expect(lines.join('\n')).not.toContain(sim.token.secret)
    } finally {
      await sim.close()
    }
  })

  it('is the code the README shows', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const example = readFileSync(new URL('../examples/list-guests.mjs', import.meta.url), 'utf8')
    expect(readme).toContain(example.trim())
  })
})
