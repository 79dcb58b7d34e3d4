// Generates examples/repository/clusters/*/secrets.sops.yaml with this package's own encrypt code, encrypted to
// the public, test-only age key in examples/repository/keys/test-only.agekey. Run: pnpm --filter @proxops/sops gen-examples
// A file that already decrypts to the wanted content is left alone (no churn); --force rewrites it.
import { readFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import * as age from 'age-encryption'
import { decryptSops } from '../decrypt.js'
import { encryptSops } from '../encrypt.js'
import { writeFileAtomic } from '../fsutil.js'
import { identitiesFromStrings } from '../identities.js'

/** The simulator's demo API token (tools/pve-sim DEMO_TOKEN_ID / DEMO_TOKEN_SECRET). */
export const DEMO_TOKEN_SECRET = '5b1f0c2e-0d0b-4a51-9a43-0c7a1d2e3f40'

/**
 * Plaintext of each example secrets file, in the credential document shape (reference behaviour 7.1),
 * printed as the decryptor prints it (4-space indentation) so an unchanged file is recognised.
 */
export const EXAMPLE_SECRETS: Readonly<Record<string, string>> = {
  homelab: `secrets:
    proxops-user: root@pam
    proxops-token-id: proxops
    proxops-token: ${DEMO_TOKEN_SECRET}
cloud-init:
    ssh-keys:
        main: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDemoDemoDemoDemoDemoDemoDemoDemoDemoDemo ops@homelab
    passwords:
        default: demo-cloud-init-password
`,
  edge: `secrets:
    proxops-user: root@pam
    proxops-token-id: proxops
    proxops-token: ${DEMO_TOKEN_SECRET}
`,
}

const here = dirname(fileURLToPath(import.meta.url))
/** The repository root (this file sits in packages/sops/{src,dist}/examples). */
export const repoRoot = resolve(here, '../../../..')
export const testKeyFile = join(repoRoot, 'examples', 'repository', 'keys', 'test-only.agekey')
export const secretsFile = (cluster: string) =>
  join(repoRoot, 'examples', 'repository', 'clusters', cluster, 'secrets.sops.yaml')

async function sameContent(file: string, plain: string, identity: string): Promise<boolean> {
  try {
    const doc = await decryptSops(await readFile(file, 'utf8'), { file, identities: [identity] })
    return doc.revealText() === plain
  } catch {
    return false
  }
}

export async function generateExamples(force = false): Promise<string[]> {
  const keyText = await readFile(testKeyFile, 'utf8')
  const [identity] = identitiesFromStrings([keyText], testKeyFile)
  if (!identity) throw new Error(`${testKeyFile}: no age identity`)
  const recipient = await age.identityToRecipient(identity.key.reveal())
  const written: string[] = []
  for (const [cluster, plain] of Object.entries(EXAMPLE_SECRETS)) {
    const file = secretsFile(cluster)
    if (!force && (await sameContent(file, plain, identity.key.reveal()))) continue
    await writeFileAtomic(file, await encryptSops(plain, { recipients: [recipient], file }))
    written.push(file)
  }
  return written
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  generateExamples(process.argv.includes('--force')).then(
    (files) => console.log(files.length ? `wrote ${files.join(', ')}` : 'examples are up to date'),
    (e: unknown) => {
      console.error(String(e))
      process.exitCode = 1
    },
  )
}
