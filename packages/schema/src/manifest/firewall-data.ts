/**
 * Facts pve-firewall's rule verification (PVE::Firewall verify_rule) reads, for validating offline: the standard
 * macros ($pve_fw_macros; each line's fixed keys, as a rule may not contradict them), ICMP type names and the
 * service and protocol names of a Debian node's /etc/services and /etc/protocols. The simulator keeps its own copy:
 * the two must not share code.
 */

export const FW_MACROS: Readonly<Record<string, readonly (readonly [string, string][])[]>> = {
  Amanda: [
    [
      ['dport', '10080'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '10080'],
      ['proto', 'tcp'],
    ],
  ],
  Auth: [
    [
      ['dport', '113'],
      ['proto', 'tcp'],
    ],
  ],
  BGP: [
    [
      ['dport', '179'],
      ['proto', 'tcp'],
    ],
  ],
  BitTorrent: [
    [
      ['dport', '6881:6889'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '6881'],
      ['proto', 'udp'],
    ],
  ],
  BitTorrent32: [
    [
      ['dport', '6881:6999'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '6881'],
      ['proto', 'udp'],
    ],
  ],
  Ceph: [
    [
      ['dport', '6789'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '3300'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '6800:7300'],
      ['proto', 'tcp'],
    ],
  ],
  Citrix: [
    [
      ['dport', '1494'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '1604'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '2598'],
      ['proto', 'tcp'],
    ],
  ],
  CVS: [
    [
      ['dport', '2401'],
      ['proto', 'tcp'],
    ],
  ],
  DAAP: [
    [
      ['dport', '3689'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '3689'],
      ['proto', 'udp'],
    ],
  ],
  DCC: [
    [
      ['dport', '6277'],
      ['proto', 'tcp'],
    ],
  ],
  DHCPfwd: [
    [
      ['dport', '67:68'],
      ['proto', 'udp'],
      ['sport', '67:68'],
    ],
  ],
  DHCPv6: [
    [
      ['dport', '546:547'],
      ['proto', 'udp'],
      ['sport', '546:547'],
    ],
  ],
  Distcc: [
    [
      ['dport', '3632'],
      ['proto', 'tcp'],
    ],
  ],
  DNS: [
    [
      ['dport', '53'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '53'],
      ['proto', 'tcp'],
    ],
  ],
  Finger: [
    [
      ['dport', '79'],
      ['proto', 'tcp'],
    ],
  ],
  FTP: [
    [
      ['dport', '21'],
      ['proto', 'tcp'],
    ],
  ],
  Git: [
    [
      ['dport', '9418'],
      ['proto', 'tcp'],
    ],
  ],
  GNUnet: [
    [
      ['dport', '2086'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '2086'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '1080'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '1080'],
      ['proto', 'udp'],
    ],
  ],
  GRE: [[['proto', '47']]],
  HKP: [
    [
      ['dport', '11371'],
      ['proto', 'tcp'],
    ],
  ],
  HTTP: [
    [
      ['dport', '80'],
      ['proto', 'tcp'],
    ],
  ],
  HTTPS: [
    [
      ['dport', '443'],
      ['proto', 'tcp'],
    ],
  ],
  ICPV2: [
    [
      ['dport', '3130'],
      ['proto', 'udp'],
    ],
  ],
  ICQ: [
    [
      ['dport', '5190'],
      ['proto', 'tcp'],
    ],
  ],
  IMAP: [
    [
      ['dport', '143'],
      ['proto', 'tcp'],
    ],
  ],
  IMAPS: [
    [
      ['dport', '993'],
      ['proto', 'tcp'],
    ],
  ],
  IPIP: [[['proto', '94']]],
  IPsec: [
    [
      ['dport', '500'],
      ['proto', 'udp'],
      ['sport', '500'],
    ],
    [['proto', '50']],
  ],
  IPsecah: [
    [
      ['dport', '500'],
      ['proto', 'udp'],
      ['sport', '500'],
    ],
    [['proto', '51']],
  ],
  IPsecnat: [
    [
      ['dport', '500'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '4500'],
      ['proto', 'udp'],
    ],
    [['proto', '50']],
  ],
  IRC: [
    [
      ['dport', '6667'],
      ['proto', 'tcp'],
    ],
  ],
  Jetdirect: [
    [
      ['dport', '9100'],
      ['proto', 'tcp'],
    ],
  ],
  L2TP: [
    [
      ['dport', '1701'],
      ['proto', 'udp'],
    ],
  ],
  LDAP: [
    [
      ['dport', '389'],
      ['proto', 'tcp'],
    ],
  ],
  LDAPS: [
    [
      ['dport', '636'],
      ['proto', 'tcp'],
    ],
  ],
  Mail: [
    [
      ['dport', '25'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '465'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '587'],
      ['proto', 'tcp'],
    ],
  ],
  MDNS: [
    [
      ['dport', '5353'],
      ['proto', 'udp'],
    ],
  ],
  MSNP: [
    [
      ['dport', '1863'],
      ['proto', 'tcp'],
    ],
  ],
  MSSQL: [
    [
      ['dport', '1433'],
      ['proto', 'tcp'],
    ],
  ],
  Munin: [
    [
      ['dport', '4949'],
      ['proto', 'tcp'],
    ],
  ],
  MySQL: [
    [
      ['dport', '3306'],
      ['proto', 'tcp'],
    ],
  ],
  NeighborDiscovery: [
    [
      ['dport', 'router-solicitation'],
      ['proto', 'icmpv6'],
    ],
    [
      ['dport', 'router-advertisement'],
      ['proto', 'icmpv6'],
    ],
    [
      ['dport', 'neighbor-solicitation'],
      ['proto', 'icmpv6'],
    ],
    [
      ['dport', 'neighbor-advertisement'],
      ['proto', 'icmpv6'],
    ],
  ],
  NNTP: [
    [
      ['dport', '119'],
      ['proto', 'tcp'],
    ],
  ],
  NNTPS: [
    [
      ['dport', '563'],
      ['proto', 'tcp'],
    ],
  ],
  NTP: [
    [
      ['dport', '123'],
      ['proto', 'udp'],
    ],
  ],
  OpenVPN: [
    [
      ['dport', '1194'],
      ['proto', 'udp'],
    ],
  ],
  OSPF: [[['proto', '89']]],
  PCA: [
    [
      ['dport', '5632'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '5631'],
      ['proto', 'tcp'],
    ],
  ],
  Ping: [
    [
      ['dport', 'echo-request'],
      ['proto', 'icmp'],
    ],
  ],
  PMG: [
    [
      ['dport', '8006'],
      ['proto', 'tcp'],
    ],
  ],
  POP3: [
    [
      ['dport', '110'],
      ['proto', 'tcp'],
    ],
  ],
  POP3S: [
    [
      ['dport', '995'],
      ['proto', 'tcp'],
    ],
  ],
  PostgreSQL: [
    [
      ['dport', '5432'],
      ['proto', 'tcp'],
    ],
  ],
  PPtP: [
    [['proto', '47']],
    [
      ['dport', '1723'],
      ['proto', 'tcp'],
    ],
  ],
  Printer: [
    [
      ['dport', '515'],
      ['proto', 'tcp'],
    ],
  ],
  Razor: [
    [
      ['dport', '2703'],
      ['proto', 'tcp'],
    ],
  ],
  Rdate: [
    [
      ['dport', '37'],
      ['proto', 'tcp'],
    ],
  ],
  RDP: [
    [
      ['dport', '3389'],
      ['proto', 'tcp'],
    ],
  ],
  RIP: [
    [
      ['dport', '520'],
      ['proto', 'udp'],
    ],
  ],
  RNDC: [
    [
      ['dport', '953'],
      ['proto', 'tcp'],
    ],
  ],
  Rsync: [
    [
      ['dport', '873'],
      ['proto', 'tcp'],
    ],
  ],
  SANE: [
    [
      ['dport', '6566'],
      ['proto', 'tcp'],
    ],
  ],
  SixXS: [
    [
      ['dport', '3874'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '3740'],
      ['proto', 'udp'],
    ],
    [['proto', '41']],
    [
      ['dport', '5072,8374'],
      ['proto', 'udp'],
    ],
  ],
  SMB: [
    [
      ['dport', '135,445'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '137:139'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '1024:65535'],
      ['proto', 'udp'],
      ['sport', '137'],
    ],
    [
      ['dport', '135,139,445'],
      ['proto', 'tcp'],
    ],
  ],
  SMBswat: [
    [
      ['dport', '901'],
      ['proto', 'tcp'],
    ],
  ],
  SMTP: [
    [
      ['dport', '25'],
      ['proto', 'tcp'],
    ],
  ],
  SMTPS: [
    [
      ['dport', '465'],
      ['proto', 'tcp'],
    ],
  ],
  SNMP: [
    [
      ['dport', '161:162'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '161'],
      ['proto', 'tcp'],
    ],
  ],
  SPAMD: [
    [
      ['dport', '783'],
      ['proto', 'tcp'],
    ],
  ],
  SPICEproxy: [
    [
      ['dport', '3128'],
      ['proto', 'tcp'],
    ],
  ],
  Squid: [
    [
      ['dport', '3128'],
      ['proto', 'tcp'],
    ],
  ],
  SSH: [
    [
      ['dport', '22'],
      ['proto', 'tcp'],
    ],
  ],
  Submission: [
    [
      ['dport', '587'],
      ['proto', 'tcp'],
    ],
  ],
  SVN: [
    [
      ['dport', '3690'],
      ['proto', 'tcp'],
    ],
  ],
  Syslog: [
    [
      ['dport', '514'],
      ['proto', 'udp'],
    ],
    [
      ['dport', '514'],
      ['proto', 'tcp'],
    ],
  ],
  Telnet: [
    [
      ['dport', '23'],
      ['proto', 'tcp'],
    ],
  ],
  Telnets: [
    [
      ['dport', '992'],
      ['proto', 'tcp'],
    ],
  ],
  TFTP: [
    [
      ['dport', '69'],
      ['proto', 'udp'],
    ],
  ],
  Time: [
    [
      ['dport', '37'],
      ['proto', 'tcp'],
    ],
  ],
  Trcrt: [
    [
      ['dport', '33434:33524'],
      ['proto', 'udp'],
    ],
    [
      ['dport', 'echo-request'],
      ['proto', 'icmp'],
    ],
  ],
  VNC: [
    [
      ['dport', '5900:5999'],
      ['proto', 'tcp'],
    ],
  ],
  VNCL: [
    [
      ['dport', '5500'],
      ['proto', 'tcp'],
    ],
  ],
  Web: [
    [
      ['dport', '80'],
      ['proto', 'tcp'],
    ],
    [
      ['dport', '443'],
      ['proto', 'tcp'],
    ],
  ],
  Webcache: [
    [
      ['dport', '8080'],
      ['proto', 'tcp'],
    ],
  ],
  Webmin: [
    [
      ['dport', '10000'],
      ['proto', 'tcp'],
    ],
  ],
  Whois: [
    [
      ['dport', '43'],
      ['proto', 'tcp'],
    ],
  ],
}

export const ICMP_TYPES: ReadonlySet<string> = new Set([
  'any',
  'echo-reply',
  'destination-unreachable',
  'network-unreachable',
  'host-unreachable',
  'protocol-unreachable',
  'port-unreachable',
  'fragmentation-needed',
  'source-route-failed',
  'network-unknown',
  'host-unknown',
  'network-prohibited',
  'host-prohibited',
  'TOS-network-unreachable',
  'TOS-host-unreachable',
  'communication-prohibited',
  'host-precedence-violation',
  'precedence-cutoff',
  'source-quench',
  'redirect',
  'network-redirect',
  'host-redirect',
  'TOS-network-redirect',
  'TOS-host-redirect',
  'echo-request',
  'router-advertisement',
  'router-solicitation',
  'time-exceeded',
  'ttl-zero-during-transit',
  'ttl-zero-during-reassembly',
  'parameter-problem',
  'ip-header-bad',
  'required-option-missing',
  'timestamp-request',
  'timestamp-reply',
  'address-mask-request',
  'address-mask-reply',
])

export const ICMPV6_TYPES: ReadonlySet<string> = new Set([
  'destination-unreachable',
  'no-route',
  'communication-prohibited',
  'beyond-scope',
  'address-unreachable',
  'port-unreachable',
  'failed-policy',
  'reject-route',
  'packet-too-big',
  'time-exceeded',
  'ttl-zero-during-transit',
  'ttl-zero-during-reassembly',
  'parameter-problem',
  'bad-header',
  'unknown-header-type',
  'unknown-option',
  'echo-request',
  'echo-reply',
  'router-solicitation',
  'router-advertisement',
  'neighbor-solicitation',
  'neighbour-solicitation',
  'neighbor-advertisement',
  'neighbour-advertisement',
  'redirect',
])

/** /etc/services names with a tcp, udp or sctp port */
export const SERVICES: ReadonlySet<string> = new Set(
  'acr-nema afpovertcp afs3-bos afs3-callback afs3-fileserver afs3-kaserver afs3-prserver afs3-rmtsys afs3-update afs3-vlserver afs3-volser amanda amandaidx amidxtape amqp amqps asf-rmcp asp auth babel bacula-dir bacula-fd bacula-sd bbs bgp bgpd biff binkp bootpc bootps canna cfengine chargen cisco-sccp clc-build-daemon clearcase cmip-agent cmip-man codaauth2 codasrv codasrv-se csync2 cvspserver daap datametrics daytime db-lsp dcap dhcpv6-client dhcpv6-server dicom dict dircproxy discard distcc domain domain-s echo epmap epmd exec f5-globalsite f5-iquery fax fido finger font-service freeciv fsp ftp ftp-data ftps ftps-data gdomap gds-db git gnunet gnutella-rtr gnutella-svc gopher gpsd gris groupwise gsidcap gsiftp gsigatekeeper hkp http http-alt https hylafax iax icpv2 imap2 imaps ingreslock ipp iprop ipsec-nat-t ipx ircd ircs-u isakmp iscsi-target isisd isns iso-tsap kamanda kerberos kerberos-adm kerberos-master kerberos4 kermit klogin kpasswd krb-prop kshell l2f ldap ldaps ldp login lotusnote mailq mdns microsoft-ds moira-db moira-update moira-ureg mon ms-sql-m ms-sql-s ms-wbt-server mtn munin mysql mysql-proxy nbd netbios-dgm netbios-ns netbios-ssn netstat nfs nntp nntps nqs nrpe nsca ntalk ntp ntske nut omniorb openvpn ospf6d ospfapi ospfd passwd-server pawserv pop3 pop3s poppassd postgresql predict printer proofd ptp-event ptp-general puppet qmqp qmtp qotd radius radius-acct radmin-port redis remctl ripd ripngd rmiregistry rmtcfg rootd route rpc2portmap rplay rsync rtcm-sc104 rtsp sa-msg-port saft sane-port sge-execd sge-qmaster sgi-cad sgi-cmsd sgi-crsd sgi-gcd shell sieve silc sip sip-tls skkserv smtp smux snmp snmp-trap snpp socks spamd ssh submission submissions sunrpc supfiledbg supfilesrv suucp svn svrloc syslog syslog-tls sysrqd systat tacacs talk tcpmux telnet telnets tfido tftp time tinc tproxy uucp venus venus-se webmin who whois wnn6 x11 x11-1 x11-2 x11-3 x11-4 x11-5 x11-6 x11-7 xdmcp xinetd xmms2 xmpp-client xmpp-server xtel xtelw z3950 zabbix-agent zabbix-trapper zebra zebrasrv zephyr-clt zephyr-hm zephyr-srv zope zope-ftp zserv'.split(
    ' ',
  ),
)

/** /etc/protocols: name -> number (get_etc_protocols adds `icmpv6`) */
export const PROTOCOLS: Readonly<Record<string, number>> = {
  ip: 0,
  hopopt: 0,
  icmp: 1,
  igmp: 2,
  ggp: 3,
  ipencap: 4,
  st: 5,
  tcp: 6,
  egp: 8,
  igp: 9,
  pup: 12,
  udp: 17,
  hmp: 20,
  'xns-idp': 22,
  rdp: 27,
  'iso-tp4': 29,
  dccp: 33,
  xtp: 36,
  ddp: 37,
  'idpr-cmtp': 38,
  ipv6: 41,
  'ipv6-route': 43,
  'ipv6-frag': 44,
  idrp: 45,
  rsvp: 46,
  gre: 47,
  esp: 50,
  ah: 51,
  skip: 57,
  'ipv6-icmp': 58,
  'ipv6-nonxt': 59,
  'ipv6-opts': 60,
  rspf: 73,
  vmtp: 81,
  eigrp: 88,
  ospf: 89,
  'ax.25': 93,
  ipip: 94,
  etherip: 97,
  encap: 98,
  pim: 103,
  ipcomp: 108,
  vrrp: 112,
  l2tp: 115,
  isis: 124,
  sctp: 132,
  fc: 133,
  'mobility-header': 135,
  udplite: 136,
  'mpls-in-ip': 137,
  manet: 138,
  hip: 139,
  shim6: 140,
  wesp: 141,
  rohc: 142,
  ethernet: 143,
  mptcp: 262,
}
