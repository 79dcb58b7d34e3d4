import { describe, expect, it } from 'vitest'
import { clusterTwins, endpointAddresses, identityFromStatus, twins } from './identity.js'

// the shape of PVE::API2::ClusterConfig's status answer: one cluster entry (when corosync runs), one per node
const clustered = (name: string, nodes: string[]) => [
  { type: 'cluster', id: 'cluster', name, nodes: nodes.length, quorate: 1, version: 3 },
  ...nodes.map((n, i) => ({
    type: 'node',
    id: `node/${n}`,
    name: n,
    nodeid: i + 1,
    ip: `10.0.0.${i + 1}`,
    online: 1,
    local: i === 0 ? 1 : 0,
  })),
]

describe('cluster identity', () => {
  it('is the corosync cluster name and its nodes, whichever node answered', () => {
    const a = identityFromStatus(clustered('prod', ['pve1', 'pve2']))
    // another node answers: local differs, order may differ
    const b = identityFromStatus(
      [...clustered('prod', ['pve1', 'pve2'])]
        .reverse()
        .map((e) => ({ ...e, local: e.type === 'node' && e.name === 'pve2' ? 1 : 0 })),
    )
    expect(b.key).toBe(a.key)
    expect(a.text).toBe('PVE cluster "prod" (nodes pve1, pve2)')
    expect(identityFromStatus(clustered('prod', ['pve1', 'pve3'])).key).not.toBe(a.key)
    expect(identityFromStatus(clustered('lab', ['pve1', 'pve2'])).key).not.toBe(a.key)
  })

  it('for a node in no cluster, is its name and address; an answer without nodes is an error', () => {
    const one = identityFromStatus([{ type: 'node', name: 'pve', nodeid: 0, ip: '192.0.2.10', local: 1 }])
    expect(one.key).not.toBe(
      identityFromStatus([{ type: 'node', name: 'pve', nodeid: 0, ip: '192.0.2.11', local: 1 }]).key,
    )
    expect(() => identityFromStatus([])).toThrow(/no nodes/)
    expect(() => identityFromStatus({ data: 1 })).toThrow(/no nodes/)
  })

  it('blocks both entries of a twin and any entry whose identity cannot be read, only with two or more', async () => {
    const answers: Record<string, unknown> = {
      a: clustered('prod', ['pve1']),
      b: clustered('prod', ['pve1']),
      c: clustered('lab', ['x1']),
    }
    const read = async (name: string) => {
      if (name === 'd') throw new Error('403 Permission check failed')
      return answers[name]
    }
    const blocked = await clusterTwins([{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd' }], read)
    expect([...blocked.keys()].sort()).toEqual(['a', 'b', 'd'])
    expect(blocked.get('a')).toMatch(/clusters "a" and "b" are the same PVE cluster "prod"/)
    expect(blocked.get('d')).toMatch(/cannot tell which PVE cluster this is/)
    expect((await clusterTwins([{ name: 'd' }], read)).size).toBe(0)
    expect(
      twins(
        [
          { name: 'y', key: 1 },
          { name: 'x', key: 1 },
          { name: 'z', key: 2 },
        ],
        (p, q) => p === q,
      ),
    ).toEqual([['x', 'y']])
  })

  it('reads every entry at once: the second read starts before the first answers', async () => {
    const started: string[] = []
    let release: () => void = () => undefined
    const answered = new Promise<void>((resolve) => (release = resolve))
    const read = async (name: string) => {
      started.push(name)
      if (started.length === 2) release()
      await answered // one read at a time would wait here forever
      return clustered(name, [`${name}1`])
    }
    expect((await clusterTwins([{ name: 'a' }, { name: 'b' }], read)).size).toBe(0)
    expect(started).toEqual(['a', 'b'])
  })

  it('resolves spellings of one endpoint to the same address and port', async () => {
    expect(await endpointAddresses('https://LOCALHOST:8006')).toContain('127.0.0.1:8006')
    expect(await endpointAddresses('https://127.0.0.1:8006/')).toEqual(['127.0.0.1:8006'])
    expect(await endpointAddresses('https://[::ffff:127.0.0.1]:8006')).toEqual(['127.0.0.1:8006'])
    expect(await endpointAddresses('https://127.1')).toEqual(['127.0.0.1:443'])
  })
})
