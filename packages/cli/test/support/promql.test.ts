import { describe, expect, it } from 'vitest'
import { metricNames } from './promql.js'

describe('metricNames', () => {
  it.each([
    ['proxops_converged{cluster=~"$cluster"}', ['proxops_converged']],
    ['time() - proxops_last_success_timestamp_seconds > 600', ['proxops_last_success_timestamp_seconds']],
    [
      'histogram_quantile(0.95, sum by (cluster, le) (rate(proxops_cycle_duration_seconds_bucket{cluster=~"$cluster"}[$__rate_interval])))',
      ['proxops_cycle_duration_seconds_bucket'],
    ],
    [
      'sum by (cluster) (increase(a_total{status="0"}[5m])) > 0 unless sum by (cluster) (increase(b_total{status!="0"}[5m] offset 1m)) > 0',
      ['a_total', 'b_total'],
    ],
    ['label_values(proxops_converged{x="1"}, cluster)', ['proxops_converged']],
    ['x / on(job) group_left(instance) y * 1e3', ['x', 'y']],
    ['absent(up{job="a b (c)"}) or vector(0)', ['up']],
  ])('%s', (expr, names) => {
    expect(metricNames(expr)).toEqual(names)
  })
})
