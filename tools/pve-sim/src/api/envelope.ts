/**
 * A handler result whose envelope carries more than `data`: the task log adds a top-level `total`
 * (`{"data":[...],"total":N}`, only when N > 0). The HTTP layer renders `{data, ...extras}`.
 */
export class WithTotal {
  constructor(
    readonly data: unknown,
    readonly total: number,
  ) {}
}
