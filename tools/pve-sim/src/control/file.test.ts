import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startSimulator } from '../index.js'
import { ControlApplier, ControlDocError, parseControlDoc } from './file.js'

describe('control document parsing', () => {
  it('accepts the documented fields', () => {
    const doc = parseControlDoc(
      JSON.stringify({
        latencyMs: 50,
        latency: [{ ms: 10, method: 'GET', path: '/cluster/resources' }],
        offlineNodes: ['pve3'],
        failedNodes: ['pve2'],
        revokedTokens: ['root@pam!proxops'],
        taskDurationMs: 100,
        tasks: {
          qmstart: { fail: "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout", durationMs: 5 },
        },
        locks: { '100': 'backup' },
        flockContention: [101],
        failNext: [{ status: 596, count: 2, path: '/nodes/{node}/qemu/{vmid}/config', method: 'PUT' }],
        drift: [{ vmid: 100, set: { memory: '4096' }, delete: ['tags'] }],
        power: { '100': 'stopped' },
      }),
      'test.json',
    )
    expect(doc.failNext?.[0]).toEqual({
      status: 596,
      count: 2,
      path: '/nodes/{node}/qemu/{vmid}/config',
      method: 'PUT',
    })
    expect(doc.tasks?.qmstart?.durationMs).toBe(5)
    expect(doc.failedNodes).toEqual(['pve2'])
  })

  it('names the file and the offending field', () => {
    const err = (text: string): string => {
      try {
        parseControlDoc(text, 'control file x.json')
      } catch (e) {
        expect(e).toBeInstanceOf(ControlDocError)
        return (e as Error).message
      }
      return 'no error'
    }
    expect(err('{')).toMatch(/^control file x\.json: field "\(document\)": not valid JSON/)
    expect(err('{"offline": []}')).toMatch(/field "offline": unknown field/)
    expect(err('{"failNext": [{"status": 200}]}')).toBe(
      'control file x.json: field "failNext[0].status": expected an HTTP error status 400..599',
    )
    expect(err('{"failNext": [{"network": "drop"}]}')).toBe(
      'control file x.json: field "failNext[0].network": expected reset or hang',
    )
    expect(parseControlDoc('{"failNext": [{"network": "reset", "count": 3}]}', 'x').failNext).toEqual([
      { network: 'reset', count: 3 },
    ])
    expect(err('{"latency": [{"ms": -1}]}')).toBe(
      'control file x.json: field "latency[0].ms": expected an integer >= 0',
    )
    expect(err('{"tasks": {"qmstart": {"fail": 1}}}')).toBe(
      'control file x.json: field "tasks.qmstart.fail": expected the error text (string)',
    )
    expect(err('{"tasks": {"qmmove": {"hold": 1}}}')).toBe(
      'control file x.json: field "tasks.qmmove.hold": expected true or false',
    )
    expect(parseControlDoc('{"tasks": {"qmmove": {"hold": true}}}', 'x').tasks).toEqual({ qmmove: { hold: true } })
    expect(err('{"power": {"100": "off"}}')).toBe('control file x.json: field "power.100": expected running or stopped')
  })
})

describe('control file of the standalone simulator', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pve-sim-control-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('applies the file at start, re-reads it on change, and resets state fields that disappear', async () => {
    const file = join(dir, 'control.json')
    writeFileSync(file, JSON.stringify({ offlineNodes: ['pve2'] }))
    const errors: string[] = []
    const sim = await startSimulator({ tls: false, controlFile: file, log: (l) => errors.push(l) })
    try {
      const get = async (path: string): Promise<number> =>
        (await fetch(`${sim.apiUrl}${path}`, { headers: { Authorization: sim.token.header } })).status
      expect(await get('/nodes/pve2/qemu')).toBe(595)
      writeFileSync(file, JSON.stringify({ failNext: [{ status: 503, path: '/version' }] }))
      const deadline = Date.now() + 5000
      while ((await get('/nodes/pve2/qemu')) === 595 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50))
      expect(await get('/nodes/pve2/qemu')).toBe(200)
      expect(await get('/version')).toBe(503)
      expect(await get('/version')).toBe(200)
      writeFileSync(file, '{"bogus": 1}')
      const d2 = Date.now() + 5000
      while (!errors.some((e) => e.includes('bogus')) && Date.now() < d2) await new Promise((r) => setTimeout(r, 50))
      expect(errors.join('\n')).toContain('field "bogus": unknown field')
    } finally {
      await sim.close()
    }
  })
})

describe('failedNodes (SimControl.failNode)', () => {
  it('a node listed fails once (its guests stop, HA fences it); a node no longer listed comes back, reset', async () => {
    const sim = await startSimulator({
      tls: false,
      schemaValidation: false,
      taskDurationMs: 0,
      controlEndpoint: false,
      log: () => {},
    })
    try {
      const apply = new ControlApplier(sim.control, 0)
      sim.control.loadGuest({ vmid: 100, type: 'qemu', node: 'pve2', config: { memory: '512' }, status: 'running' })
      apply.apply(parseControlDoc('{"failedNodes": ["pve2"]}', 'x'))
      expect(sim.control.guest(100)?.status).toBe('stopped')
      const nodes = await fetch(`${sim.apiUrl}/nodes`, { headers: { Authorization: sim.token.header } })
      const pve2 = ((await nodes.json()) as { data: { node: string; status: string }[] }).data.find(
        (n) => n.node === 'pve2',
      )
      expect(pve2?.status).toBe('offline')
      apply.apply(parseControlDoc('{}', 'x'))
      const back = await fetch(`${sim.apiUrl}/nodes/pve2/qemu`, { headers: { Authorization: sim.token.header } })
      expect(back.status).toBe(200)
      expect(sim.control.guest(100)).toMatchObject({ node: 'pve2', status: 'stopped' })
    } finally {
      await sim.close()
    }
  })
})
