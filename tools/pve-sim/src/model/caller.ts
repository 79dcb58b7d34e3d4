/** Who sends a request, as PVE's RPC environment knows them (`$rpcenv->get_user()` and the token). */
export interface Caller {
  /** `root@pam`, or the token's user */
  userid: string
  /** token name when authenticated by an API token (`root@pam!gitops` -> `gitops`) */
  tokenid?: string
  /** the full actor as PVE writes it in UPIDs: `root@pam` or `root@pam!gitops` */
  actor: string
}
