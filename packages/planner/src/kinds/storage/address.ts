/** How a plan names a storage (docs/plan-format.md, `address`). */
export const storageAddress = (id: string): string => `Storage/${id}`
