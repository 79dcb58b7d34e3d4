/**
 * Running the access kinds' requests: `/access` writes are synchronous (user.cfg under its lock). A new token's
 * secret goes straight from PVE's answer to the executor's token sink (encrypted, outside the work tree) and into
 * the run's redaction list; it is never returned, logged or kept.
 */
import { resolveParams } from '../../kit/params.js'
import { ActionFailure, write, type ActionContext, type Runners } from '../../kit/runners.js'
import type { PlanParams } from '../../plan-types.js'

const plain = async (params: PlanParams) => (await resolveParams(params, undefined)).params

/** a create without secrets, named by the id among its parameters */
async function create(
  noun: string,
  idKey: string,
  given: PlanParams,
  ctx: ActionContext,
  send: (params: Awaited<ReturnType<typeof plain>>) => Promise<unknown>,
): Promise<void> {
  const params = await plain(given)
  await write(`create ${noun} ${String(params[idKey])}`, ctx, () => send(params))
}

export const accessRunners = {
  createRole: (r, { ctx }) => create('role', 'roleid', r.params, ctx, (p) => ctx.writer.createRole(p)),
  updateRole: async (r, { ctx }) =>
    write(`update role ${r.roleid}`, ctx, async () => ctx.writer.updateRole(r.roleid, await plain(r.params))),
  deleteRole: (r, { ctx }) => write(`delete role ${r.roleid}`, ctx, () => ctx.writer.deleteRole(r.roleid)),
  createGroup: (r, { ctx }) => create('group', 'groupid', r.params, ctx, (p) => ctx.writer.createGroup(p)),
  updateGroup: async (r, { ctx }) =>
    write(`update group ${r.groupid}`, ctx, async () => ctx.writer.updateGroup(r.groupid, await plain(r.params))),
  deleteGroup: (r, { ctx }) => write(`delete group ${r.groupid}`, ctx, () => ctx.writer.deleteGroup(r.groupid)),
  createUser: async (r, { ctx, secrets }) => {
    // the password (a SOPS reference) is resolved here, at execute time, and redacted from every message
    const { params, secrets: s } = await resolveParams(r.params, ctx.secrets)
    secrets.push(...s)
    await write(`create user ${String(params.userid)}`, ctx, () => ctx.writer.createUser(params))
  },
  updateUser: async (r, { ctx }) =>
    write(`update user ${r.userid}`, ctx, async () => ctx.writer.updateUser(r.userid, await plain(r.params))),
  deleteUser: (r, { ctx }) => write(`delete user ${r.userid}`, ctx, () => ctx.writer.deleteUser(r.userid)),
  createToken: async (r, { ctx, secrets, notes }) => {
    const full = `${r.userid}!${r.tokenid}`
    const sink = ctx.tokenSecrets
    if (!sink)
      throw new ActionFailure(
        `create token ${full}: not created: its secret could not be kept (the cluster needs a secrets-file, and a token-secrets-dir outside the repository)`,
      )
    const params = await plain(r.params)
    let created: { reveal(): string } | undefined
    await write(`create token ${full}`, ctx, async () => {
      created = (await ctx.writer.createToken(r.userid, r.tokenid, params)).value
    })
    if (!created) throw new ActionFailure(`create token ${full}: PVE gave no secret`)
    secrets.push(created.reveal())
    try {
      notes.push(`the secret of token ${full} was written, age-encrypted, to ${await sink(full, created)}`)
    } catch (error) {
      throw new ActionFailure(
        `create token ${full}: created on PVE, but its secret could not be stored (${error instanceof Error ? error.message : String(error)}); delete the token and apply again`,
      )
    }
  },
  updateToken: async (r, { ctx }) =>
    write(`update token ${r.userid}!${r.tokenid}`, ctx, async () =>
      ctx.writer.updateToken(r.userid, r.tokenid, await plain(r.params)),
    ),
  deleteToken: (r, { ctx }) =>
    write(`delete token ${r.userid}!${r.tokenid}`, ctx, () => ctx.writer.deleteToken(r.userid, r.tokenid)),
  updateAcl: async (r, { ctx }) => {
    const params = await plain(r.params)
    const verb = params.delete === 1 ? 'remove' : 'grant'
    await write(`${verb} ACL on ${String(params.path)}`, ctx, () => ctx.writer.updateAcl(params))
  },
} satisfies Runners
