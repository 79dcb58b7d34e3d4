/**
 * Run counts for the fuzz and crash suites. CI runs the bounded default; `PROXOPS_SOAK=<factor>` multiplies
 * every count for a long soak (e.g. PROXOPS_SOAK=20 pnpm --filter @proxops/reliability test).
 */
const factor = Math.max(1, Number(process.env.PROXOPS_SOAK ?? '1') || 1)

export const runs = (n: number): number => Math.round(n * factor)
