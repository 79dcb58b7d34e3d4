import type { CommandModule } from 'yargs'

// Placeholder wiring, replaced by the repository loader of @proxops/schema.
export function validateCommand(setExit: (code: number) => void): CommandModule {
  return {
    command: 'validate',
    describe: 'Check the repository offline: manifests, composition, configs',
    handler: () => {
      setExit(0)
    },
  }
}
