#!/usr/bin/env bash
# Makes sure Node.js and npm are here, at least version MIN (default 18: the dashboard's build;
# the browser tests' playwright-core needs 20). Installs Debian's nodejs and npm with apt when
# node is missing (root needed); an older node is not replaced: the message says what to do.
# Usage: scripts/need-node.sh [MIN]
set -euo pipefail
min="${1:-18}"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "need-node: Node.js $min+ and npm are needed: install them (sudo apt-get install nodejs npm on Debian 12 gives Node.js 18), then run this again" >&2
    exit 1
  fi
  echo "need-node: installing Debian's nodejs and npm with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi
have="$(node --version | sed 's/^v//')"
if [ "${have%%.*}" -lt "$min" ]; then
  echo "need-node: Node.js $min+ is needed here and this is $have (Debian 12's apt has 18): install Node.js $min or later, e.g. from NodeSource's Debian packages (deb.nodesource.com) or with nvm, then run this again" >&2
  exit 1
fi
