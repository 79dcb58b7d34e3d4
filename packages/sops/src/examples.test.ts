// The committed example secrets files decrypt with the committed test-only key, hold the credential
// document the example configs and manifests reference, and match what gen-examples would write.
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { parse } from 'yaml'
import { loadCredentials, readCredentials } from './credentials.js'
import { decryptSops, decryptSopsFile } from './decrypt.js'
import { DEMO_TOKEN_SECRET, EXAMPLE_SECRETS, repoRoot, secretsFile, testKeyFile } from './examples/gen.js'

const key = () => readFileSync(testKeyFile, 'utf8')

describe.each(Object.keys(EXAMPLE_SECRETS))('examples/repository/clusters/%s/secrets.sops.yaml', (cluster) => {
  test('decrypts with the test-only key to exactly the generator content (MAC verified)', async () => {
    const doc = await decryptSopsFile(secretsFile(cluster), { identities: [key()] })
    expect(doc.revealText()).toBe(EXAMPLE_SECRETS[cluster])
  })

  test('found through sops-style discovery (SOPS_AGE_KEY_FILE)', async () => {
    const doc = await decryptSopsFile(secretsFile(cluster), {
      discovery: { env: { SOPS_AGE_KEY_FILE: testKeyFile }, homeDir: '/nonexistent' },
    })
    expect(doc.recipients).toHaveLength(1)
  })

  test('holds the PVE credentials named in the cluster config', async () => {
    const config = parse(
      readFileSync(join(repoRoot, 'examples', 'repository', 'clusters', cluster, 'config.yaml'), 'utf8'),
    ) as {
      pve: { clusters: Record<string, { 'secrets-file': string; secrets: { pve: Record<string, string> } }> }
    }
    const entry = config.pve.clusters[cluster]
    expect(entry?.['secrets-file']).toBe('secrets.sops.yaml')
    const creds = readCredentials(await decryptSopsFile(secretsFile(cluster), { identities: [key()] }), { cluster })
    const names = entry?.secrets.pve ?? {}
    expect(creds.requireSecret(names.user as string, 'secrets.pve.user').reveal()).toBe('root@pam')
    expect(creds.requireSecret(names['token-id'] as string, 'secrets.pve.token-id').reveal()).toBe('proxops')
    expect(creds.requireSecret(names.token as string, 'secrets.pve.token').reveal()).toBe(DEMO_TOKEN_SECRET)
  })

  test('every cloud-init reference in the cluster’s example manifests resolves', async () => {
    const creds = readCredentials(await decryptSopsFile(secretsFile(cluster), { identities: [key()] }), { cluster })
    const refs: string[] = []
    for (const kind of ['vm', 'templatevm']) {
      let files: string[]
      try {
        files = readdirSync(join(repoRoot, 'examples', 'repository', kind, cluster)).filter((f) => f.endsWith('.yaml'))
      } catch {
        continue
      }
      for (const f of files) {
        const text = readFileSync(join(repoRoot, 'examples', 'repository', kind, cluster, f), 'utf8')
        refs.push(...[...text.matchAll(/cloud-init\.(?:ssh-keys|passwords)\.[a-z0-9-]+/g)].map((m) => m[0]))
      }
    }
    if (cluster === 'homelab') expect(refs.length).toBeGreaterThan(0)
    for (const ref of refs) expect(creds.resolveRef(ref).reveal()).not.toBe('')
  })

  test('loadCredentials: decrypt and read the credential document in one step', async () => {
    const creds = await loadCredentials(secretsFile(cluster), { cluster, identities: [key()] })
    expect(creds.secret('proxops-token-id')?.reveal()).toBe('proxops')
  })

  test('is not readable without the key', async () => {
    await expect(decryptSops(readFileSync(secretsFile(cluster), 'utf8'), { identities: [] })).rejects.toMatchObject({
      code: 'NoIdentity',
    })
  })
})
