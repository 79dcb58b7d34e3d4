#!/bin/sh
# Installs the packages `pnpm pack-tarballs` packed (README.md, "Install") into PREFIX as one npm project, and links
# proxops and proxops-sops into BINDIR: by default /usr/local/bin/proxops, where deploy/systemd/proxops.service runs
# it. deploy/container/Containerfile installs its image with this script, and packages/cli/test/deploy runs it too.
#
#   sudo deploy/install-tarballs.sh dist-tarballs                 # /opt/proxops, /usr/local/bin
#   deploy/install-tarballs.sh dist-tarballs ~/proxops ~/.local/bin
#
# npm fetches the third-party dependencies from the registry. Installing again replaces the release in place.
set -eu
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: $0 TARBALL_DIR [PREFIX (default /opt/proxops)] [BINDIR (default /usr/local/bin)]" >&2
  exit 2
fi
tarballs=$(cd "$1" && pwd)
prefix=${2:-/opt/proxops}
bindir=${3:-/usr/local/bin}
set -- "$tarballs"/proxops-*.tgz
[ -f "$1" ] || { echo "$0: no proxops-*.tgz in $tarballs (run pnpm build && pnpm pack-tarballs)" >&2; exit 1; }
mkdir -p "$prefix" "$bindir"
[ -f "$prefix/package.json" ] || printf '{ "name": "proxops-install", "private": true }\n' >"$prefix/package.json"
# all five at once: they depend on each other, at versions only these tarballs have
npm install --prefix "$prefix" --omit=dev --prefer-offline --no-audit --no-fund --loglevel=error "$@"
for bin in proxops proxops-sops; do
  ln -sfn "$prefix/node_modules/.bin/$bin" "$bindir/$bin"
done
"$bindir/proxops" --version
