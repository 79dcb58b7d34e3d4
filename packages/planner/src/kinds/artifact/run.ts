/** Running the artifact kind's request: `download-url`, waited on for the download timeout. */
import { resolveParams } from '../../kit/params.js'
import { call, type Runners } from '../../kit/runners.js'

export const artifactRunners = {
  downloadUrl: async (request, { ctx, tasks, secrets }) => {
    const { params, secrets: s } = await resolveParams(request.params, ctx.secrets)
    secrets.push(...s)
    await call(
      'download',
      ctx,
      tasks,
      () => ctx.writer.downloadUrl(request.node, request.storage, params),
      undefined,
      ctx.downloadTimeoutMs,
    )
  },
} satisfies Runners
