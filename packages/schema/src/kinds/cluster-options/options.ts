/**
 * The one field table of ClusterOptions: the datacenter.cfg options ProxOps can own (pve-cluster
 * PVE::DataCenterConfig's schema, `PUT /cluster/options`), each with the form of its value. `map` options are
 * property strings (parse_datacenter_config reads them back as objects); `list` ones are `;`-joined.
 */
export type ClusterOptionForm = 'string' | 'int' | 'bool' | 'map' | 'list'

export const CLUSTER_OPTIONS = {
  bwlimit: {
    form: 'map',
    description: 'I/O bandwidth limits (KiB/s): `clone`, `default`, `migration`, `move`, `restore`.',
  },
  console: { form: 'string', description: 'Default console viewer (applet, vv, html5, xtermjs).' },
  'consent-text': { form: 'string', description: 'Consent text shown before login.' },
  crs: { form: 'map', description: 'Cluster resource scheduling: `ha` (basic, static), `ha-rebalance-on-start`.' },
  description: { form: 'string', description: 'Datacenter notes (datacenter.cfg comment lines).' },
  email_from: { form: 'string', description: 'Sender address of notification mails.' },
  fencing: { form: 'string', description: 'HA fencing mode (watchdog, hardware, both).' },
  ha: {
    form: 'map',
    description: 'Cluster-wide HA settings: `shutdown_policy` (freeze, failover, conditional, migrate).',
  },
  http_proxy: { form: 'string', description: 'External HTTP proxy for downloads.' },
  keyboard: { form: 'string', description: 'Default VNC keyboard layout.' },
  language: { form: 'string', description: 'Default GUI language.' },
  mac_prefix: { form: 'string', description: 'Prefix of generated MAC addresses.' },
  max_workers: { form: 'int', description: 'Workers per node for bulk actions (start all, migrate all).' },
  migration: { form: 'map', description: 'Migration settings: `type` (secure, insecure), `network` (CIDR).' },
  'next-id': { form: 'map', description: 'Range of free VMIDs auto-selection: `lower`, `upper`.' },
  notify: { form: 'map', description: 'Legacy notification settings.' },
  'registered-tags': { form: 'list', description: 'Tags that need Sys.Modify on / to set or delete.' },
  replication: { form: 'map', description: 'Replication settings: `type`, `network`.' },
  'tag-style': { form: 'map', description: 'Tag style: `shape`, `ordering`, `case-sensitive`, `color-map`.' },
  'user-tag-access': { form: 'map', description: 'Which tags users may set: `user-allow`, `user-allow-list`.' },
} as const satisfies Record<string, { form: ClusterOptionForm; description: string }>

export type ClusterOptionKey = keyof typeof CLUSTER_OPTIONS
