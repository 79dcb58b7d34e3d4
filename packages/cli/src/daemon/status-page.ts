/**
 * The status page at `/` of the daemon (docs/operations.md, "The status page"): one server-rendered HTML page of
 * the same document /status serves (status-document.ts), readable without JavaScript and refreshing itself.
 *
 * Secrets are masked in the document BEFORE the template escapes it: a masker that ran on the HTML would no longer
 * recognise a secret holding `&`, `<` or `"`, which escaping turns into entities. The template (Eta) escapes every
 * value it prints and prints nothing raw; every state is a word and a colour, never a colour alone.
 */
import { Eta } from 'eta'
import { describeAction } from '@proxops/planner'
import type { Redactor } from '../redact.js'
import { safeValue } from '../safe-text.js'
import type { ObjectStatus } from '../status-model.js'
import { shortRevision } from '../render/plan-text.js'
import type { ClusterStatus, StatusDocument } from './status-document.js'
import type { CycleSummary } from './history.js'

/** the look of a state: its word and a colour class (`ok` green, `changed` blue, `warn` amber, `bad` red, `muted` grey) */
export interface Badge {
  word: string
  tone: 'ok' | 'changed' | 'warn' | 'bad' | 'muted'
}

/** No script, no frames, nothing fetched: the page is its own HTML and one inline style sheet. */
export const STATUS_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

/** a cluster's last cycle (`null`: no cycle yet) */
export function clusterBadge(result: ClusterStatus['result']): Badge {
  switch (result) {
    case 'converged':
      return { word: 'converged', tone: 'ok' }
    case 'drift':
      return { word: 'drift', tone: 'warn' }
    case 'blocked':
      return { word: 'blocked', tone: 'warn' }
    case 'incomplete':
      return { word: 'incomplete', tone: 'bad' }
    case 'aborted':
      return { word: 'aborted', tone: 'bad' }
    case null:
      return { word: 'no cycle yet', tone: 'muted' }
  }
}

/** an object's state this cycle: `changed` when its actions ran and it converged, `unknown` when it could not be read */
export function objectBadge(o: ObjectStatus): Badge {
  switch (o.state) {
    case 'converged':
      return o.action !== undefined ? { word: 'changed', tone: 'changed' } : { word: 'converged', tone: 'ok' }
    case 'blocked':
      return o.blocked === 'unknown' ? { word: 'unknown', tone: 'muted' } : { word: 'blocked', tone: 'warn' }
    case 'failed':
      return { word: 'failed', tone: 'bad' }
    case 'drift':
      return { word: 'drift', tone: 'warn' }
    case 'skipped':
      return { word: 'skipped', tone: 'warn' }
    case 'pruned':
      return { word: 'pruned', tone: 'changed' }
    case 'in_progress':
      return { word: 'in progress', tone: 'changed' }
  }
}

const resultBadge = (result: string | undefined): Badge =>
  result === 'ok'
    ? { word: 'ok', tone: 'ok' }
    : result === 'failed'
      ? { word: 'failed', tone: 'bad' }
      : result === undefined
        ? { word: 'planned', tone: 'muted' }
        : { word: result, tone: 'warn' }

/** `0.8 s`, `12 s`, `3 min 5 s`, `2 h 1 min` */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-'
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

/** `2026-01-01 00:00:01 UTC` */
const when = (iso: string): string => (iso ? `${iso.slice(0, 19).replace('T', ' ')} UTC` : '-')
const span = (from: string, to: string): string => duration(Date.parse(to) - Date.parse(from))
const ago = (iso: string, now: string): string => `${duration(Date.parse(now) - Date.parse(iso))} ago`
const counts = (c: Pick<CycleSummary, 'actions' | 'blocked' | 'anomalies'>): string =>
  `${c.actions.planned} planned, ${c.actions.ok} ok, ${c.actions.failed} failed, ${c.actions.skipped} skipped; ${c.blocked} blocked, ${c.anomalies} anomalies`

/** The overall word of several clusters: the worst one's. */
export function overallBadge(results: readonly ClusterStatus['result'][]): Badge {
  const order: ClusterStatus['result'][] = ['aborted', 'incomplete', 'blocked', 'drift', null, 'converged']
  const worst = order.find((r) => results.includes(r)) ?? null
  return clusterBadge(results.length === 0 ? null : worst)
}

/** `lab: blocked · ProxOps`; with several clusters the worst state first: `blocked · edge: converged, lab: blocked · ProxOps` */
export function pageTitle(clusters: readonly Pick<ClusterStatus, 'cluster' | 'result'>[]): string {
  const each = clusters.map((c) => `${c.cluster}: ${clusterBadge(c.result).word}`).join(', ')
  if (clusters.length === 1) return `${each} · ProxOps`
  return `${overallBadge(clusters.map((c) => c.result)).word} · ${each} · ProxOps`
}

/** what the template prints: plain strings, already masked; it only lays them out */
function pageModel(doc: StatusDocument) {
  return {
    title: pageTitle(doc.clusters),
    overall: overallBadge(doc.clusters.map((c) => c.result)),
    refreshSeconds: Math.min(300, Math.max(5, Math.round(doc.poll_interval_seconds))),
    now: when(doc.now),
    since: when(doc.process_start),
    commit: doc.commit !== null ? shortRevision(doc.commit) : '-',
    commitFull: doc.commit ?? '',
    stale: doc.desired_stale,
    // an uncommitted edit is never applied: the page says so, beside the commit that is
    uncommitted: doc.work_tree?.dirty
      ? `${doc.work_tree.paths.join(', ')}${doc.work_tree.more > 0 ? ` and ${doc.work_tree.more} more` : ''}`
      : '',
    readiness: readinessBadge(doc),
    webhooks: doc.webhooks.map((w) => ({
      path: w.path,
      provider: w.provider,
      last: w.deliveries[0]
        ? `${when(w.deliveries[0].at)}: ${w.deliveries[0].result} (${w.deliveries[0].detail})`
        : 'no delivery yet',
    })),
    clusters: doc.clusters.map((c) => {
      const history = c.history.map((h) => ({
        finished: when(h.finishedAt),
        took: span(h.startedAt, h.finishedAt),
        commit: h.commit !== undefined ? shortRevision(h.commit) : '-',
        badge: clusterBadge(h.result),
        counts: counts(h),
        reason: h.abortReason ?? '',
      }))
      // what `proxops suspend` holds: the whole cluster, or objects of it, since when and why
      const suspended = doc.suspensions
        .filter((s) => s.cluster === c.cluster)
        .map(
          (s) => `${s.object ?? 'the whole cluster'} since ${when(s.since)}${s.by ? ` by ${s.by}` : ''}: ${s.reason}`,
        )
      if (c.result === null) return { name: c.cluster, badge: clusterBadge(null), cycle: undefined, history, suspended }
      const lastKnown = c.lastKnown && {
        read: when(c.lastKnown.readAt),
        ago: ago(c.lastKnown.readAt, doc.now),
        commit: c.lastKnown.commit !== undefined ? shortRevision(c.lastKnown.commit) : '-',
        commitFull: c.lastKnown.commit ?? '',
        // stale: each keeps its word, in grey, so no colour says more than the last read knew
        objects: c.lastKnown.objects.map((o) => objectRow(o, true)),
      }
      return {
        name: c.cluster,
        badge: clusterBadge(c.result),
        cycle: {
          finished: when(c.finishedAt),
          ago: ago(c.finishedAt, doc.now),
          took: span(c.startedAt, c.finishedAt),
          commit: c.commit !== undefined ? shortRevision(c.commit) : '-',
          commitFull: c.commit ?? '',
          mode: c.mode,
          abortReason: c.abortReason ?? '',
          stale: c.desiredStale,
          counts: counts(c),
          blocked: Object.entries(c.blockedByReason).map(([reason, n]) => `${reason} ${n ?? 0}`),
          objects: c.objects.map((o) => objectRow(o, false)),
          lastKnown,
          actions: c.plannedActions.map((a) => ({
            address: a.address,
            type: describeAction(a).label,
            disruption: a.disruption,
            badge: resultBadge(a.result),
            reason: a.reason,
            detail: a.detail ?? '',
          })),
          findings: c.findings.map((f) => ({
            type: f.type,
            code: f.code,
            address: f.address ?? c.cluster,
            message: f.message,
          })),
        },
        history,
        suspended,
      }
    }),
  }
}

/** an object's row; `stale`: from an earlier cycle, its word kept and its colour greyed */
function objectRow(o: ObjectStatus, stale: boolean) {
  const badge = objectBadge(o)
  return {
    kind: o.kind,
    name: o.name,
    node: o.node,
    vmid: o.vmid !== undefined ? String(o.vmid) : '-',
    badge: stale ? { word: badge.word, tone: 'muted' as const } : badge,
    detail: objectDetail(o),
    unmanaged: (o.unmanaged ?? []).filter((k) => k.executes === undefined).map((k) => k.key),
    executes: (o.unmanaged ?? []).filter((k) => k.executes !== undefined).map((k) => `${k.key}: ${k.executes}`),
  }
}

/**
 * The daemon's readiness beside the cycles' words: `ready` only while no cluster's last cycle failed (aborted or
 * incomplete). /readyz tolerates failed cycles for 3 poll intervals (docs/operations.md); the page says what failed.
 */
export function readinessBadge(doc: Pick<StatusDocument, 'ready' | 'clusters'>): Badge {
  if (doc.ready.role === 'standby')
    return {
      word: `standby: the daemon with pid ${doc.ready.leader ?? '?'} leads; this one writes nothing`,
      tone: 'warn',
    }
  const failed = doc.clusters.filter((c) => c.result === 'aborted' || c.result === 'incomplete').map((c) => c.cluster)
  if (failed.length > 0) return { word: `last cycle failed: ${failed.join(', ')}`, tone: 'bad' }
  if (doc.ready.ready) return { word: 'ready', tone: 'ok' }
  const reasons = Object.entries(doc.ready.clusters)
    .filter(([, r]) => !r.ready)
    .map(([cluster, r]) => `${cluster}: ${r.reason ?? 'not ready'}`)
  return { word: reasons.length > 0 ? `not ready (${reasons.join('; ')})` : 'not ready', tone: 'warn' }
}

/** what a person needs beside the state word: the reason blocked, the error failed, the action that changed it */
function objectDetail(o: ObjectStatus): string {
  switch (o.state) {
    case 'converged':
      return o.action ?? ''
    case 'failed':
      // the executor's error names the action (`update failed: ...`)
      return o.error ?? `${o.action ?? 'action'} failed: ${o.reason ?? 'unknown error'}`
    case 'blocked':
      return `${o.blocked ?? 'blocked'}: ${o.reason ?? ''}`
    default:
      return [o.action, o.reason].filter((x) => x !== undefined && x !== '').join(': ')
  }
}

const TEMPLATE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="<%= it.refreshSeconds %>">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title><%= it.title %></title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; padding: 1rem 1.5rem; max-width: 1200px; color: #1f2328; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; } h2 { font-size: 1.2rem; margin: 1.5rem 0 .4rem; }
h3 { font-size: 1rem; margin: 1rem 0 .3rem; }
.meta { color: #57606a; margin: 0 0 .5rem; }
table { border-collapse: collapse; width: 100%; margin-bottom: .5rem; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #d0d7de; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
/* names, addresses, words and numbers on one line; the free text beside them takes the rest and breaks anywhere */
th, td { white-space: nowrap; }
td.detail { white-space: normal; overflow-wrap: anywhere; width: 100%; }
section { overflow-x: auto; }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 1rem; font-weight: 700; white-space: nowrap; border: 1px solid; }
.ok { color: #116329; background: #dafbe1; border-color: #4ac26b; }
.changed { color: #0550ae; background: #ddf4ff; border-color: #54aeff; }
.warn { color: #7d4e00; background: #fff8c5; border-color: #d4a72c; }
.bad { color: #a40e26; background: #ffebe9; border-color: #ff8182; }
.muted { color: #424a53; background: #eaeef2; border-color: #afb8c1; }
.ok-text { color: #116329; } .warn-text { color: #7d4e00; } .bad-text { color: #a40e26; }
.alert { padding: .4rem .6rem; border-radius: .3rem; margin: .5rem 0; }
.note { color: #57606a; }
code { font-size: 90%; }
</style>
</head>
<body>
<header>
<h1>ProxOps <span class="badge <%= it.overall.tone %>"><%= it.overall.word %></span></h1>
<p class="meta">commit <code title="<%= it.commitFull %>"><%= it.commit %></code> · daemon up since <%= it.since %> · page made <%= it.now %>, refreshed every <%= it.refreshSeconds %> s · <span id="readiness" class="<%= it.readiness.tone %>-text"><%= it.readiness.word %></span> · <a href="/status">/status</a> · <a href="/metrics">/metrics</a></p>
<% if (it.uncommitted) { %><p class="alert warn" id="uncommitted">Uncommitted changes in the work tree are not applied (the daemon reconciles commit <code><%= it.commit %></code>): <%= it.uncommitted %></p><% } %>
<% if (it.stale) { %><p class="alert bad">Desired state is stale: git fetches are failing; the last good commit is reconciled.</p><% } %>
</header>
<main>
<% for (const c of it.clusters) { %>
<section id="cluster-<%= c.name %>">
<h2>Cluster <%= c.name %> <span class="badge <%= c.badge.tone %>"><%= c.badge.word %></span></h2>
<% for (const s of c.suspended) { %><p class="alert warn suspended">Suspended (read, never written): <%= s %></p><% } %>
<% if (!c.cycle) { %>
<p class="note">No cycle has finished yet.</p>
<% } else { %>
<p class="meta">last cycle finished <%= c.cycle.finished %> (<%= c.cycle.ago %>), took <%= c.cycle.took %> · commit <code title="<%= c.cycle.commitFull %>"><%= c.cycle.commit %></code> · <%= c.cycle.mode %> · <%= c.cycle.counts %></p>
<% if (c.cycle.abortReason) { %><p class="alert bad">Aborted: <%= c.cycle.abortReason %></p><% } %>
<% if (c.cycle.blocked.length > 0) { %><p class="alert warn">Blocked by reason: <%= c.cycle.blocked.join(', ') %></p><% } %>
<h3>Objects</h3>
<% const known = c.cycle.lastKnown %>
<% if (known) { %><p class="alert warn stale">Stale: this cycle read nothing; the objects as the cycle of <%= known.read %> (<%= known.ago %>, commit <code title="<%= known.commitFull %>"><%= known.commit %></code>) read them.</p><% } %>
<% const rows = known ? known.objects : c.cycle.objects %>
<% if (rows.length === 0) { %><p class="note">No objects.</p><% } else { %>
<table class="objects<%= known ? ' stale' : '' %>">
<thead><tr><th>kind</th><th>name</th><th>node</th><th>vmid</th><th>state</th><th>detail</th></tr></thead>
<tbody>
<% for (const o of rows) { %>
<tr><td><%= o.kind %></td><td class="name"><%= o.name %></td><td><%= o.node %></td><td><%= o.vmid %></td><td><span class="badge <%= o.badge.tone %>"><%= o.badge.word %></span></td><td class="detail"><%= o.detail %><% if (o.unmanaged.length > 0) { %><div class="note">unmanaged on PVE, not in git: <%= o.unmanaged.join(', ') %></div><% } %><% for (const e of o.executes) { %><div class="bad">unmanaged, executes: <%= e %></div><% } %></td></tr>
<% } %>
</tbody>
</table>
<% } %>
<h3>Last plan</h3>
<% if (c.cycle.actions.length === 0) { %><p class="note">Nothing to do.</p><% } else { %>
<table class="actions">
<thead><tr><th>action</th><th>address</th><th>disruption</th><th>result</th><th>reason</th></tr></thead>
<tbody>
<% for (const a of c.cycle.actions) { %>
<tr><td><%= a.type %></td><td class="name"><%= a.address %></td><td><%= a.disruption %></td><td><span class="badge <%= a.badge.tone %>"><%= a.badge.word %></span></td><td class="detail"><%= a.reason %><% if (a.detail) { %><div class="note"><%= a.detail %></div><% } %></td></tr>
<% } %>
</tbody>
</table>
<% } %>
<h3>Anomalies and gaps</h3>
<% if (c.cycle.findings.length === 0) { %><p class="note">None.</p><% } else { %>
<ul class="findings">
<% for (const f of c.cycle.findings) { %>
<li><strong><%= f.type %> <%= f.code %></strong> <code><%= f.address %></code>: <%= f.message %></li>
<% } %>
</ul>
<% } %>
<% } %>
<h3>Recent cycles</h3>
<% if (c.history.length === 0) { %><p class="note">None yet.</p><% } else { %>
<table class="history">
<thead><tr><th>finished</th><th>took</th><th>commit</th><th>result</th><th>counts</th></tr></thead>
<tbody>
<% for (const h of c.history) { %>
<tr><td><%= h.finished %></td><td><%= h.took %></td><td><code><%= h.commit %></code></td><td><span class="badge <%= h.badge.tone %>"><%= h.badge.word %></span></td><td class="detail"><%= h.counts %><% if (h.reason) { %><div class="note"><%= h.reason %></div><% } %></td></tr>
<% } %>
</tbody>
</table>
<% } %>
</section>
<% } %>
<% if (it.webhooks.length > 0) { %>
<section id="webhooks">
<h2>Push webhooks</h2>
<table class="webhooks">
<thead><tr><th>path</th><th>forge</th><th>last delivery</th></tr></thead>
<tbody>
<% for (const w of it.webhooks) { %>
<tr><td class="name"><%= w.path %></td><td><%= w.provider %></td><td class="detail"><%= w.last %></td></tr>
<% } %>
</tbody>
</table>
</section>
<% } %>
</main>
</body>
</html>
`

// autoEscape: every <%= %> is HTML-escaped (&, <, >, ", '); useWith off: the template reads `it` only
const eta = new Eta({ autoEscape: true, useWith: false, varName: 'it', autoTrim: false, cache: false })
const compiled = eta.compile(TEMPLATE)

/** The template, for tests: it must print nothing unescaped. */
export const STATUS_PAGE_TEMPLATE = TEMPLATE

/**
 * The page for a status document. Every string is masked first, then made safe (no control character or bidi
 * override from PVE or git reorders what a reader sees, or reaches a terminal that fetched the page), then the
 * template escapes it.
 */
export function renderStatusPage(doc: StatusDocument, redactor: Redactor): string {
  return eta.render(compiled, pageModel(safeValue(redactor.value(doc))))
}
