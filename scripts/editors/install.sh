#!/usr/bin/env bash
# Installs what the real-editor tests drive (tests/editors/): Debian packages (Neovim, Chromium,
# ripgrep, the compilers code-server's native modules need), code-server and playwright-core in
# .editors/ (gitignored). Idempotent: each step is skipped when its result is already there.
# Needs root for apt-get; reaches only the Debian mirrors and the npm registry.
#
#   scripts/editors/install.sh            # everything
#   EDITORS_DIR=/opt/editors scripts/editors/install.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
EDITORS_DIR="${EDITORS_DIR:-$ROOT/.editors}"
CODE_SERVER_VERSION=4.100.3   # = VS Code 1.100.3, the newest release whose engines.node is 20
PLAYWRIGHT_VERSION=1.65.1
# @vscode/ripgrep, as pinned by code-server 4.100.3, and the ripgrep build its postinstall wants.
RIPGREP_PKG_VERSION=1.15.11
RIPGREP_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz

DEBIAN_PACKAGES=(build-essential libkrb5-dev ripgrep chromium fonts-dejavu-core neovim)

step() { printf '\n== %s\n' "$*"; }
started=$SECONDS

step "Debian packages"
missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "already installed: ${DEBIAN_PACKAGES[*]}"
fi

step "code-server $CODE_SERVER_VERSION"
code_server="$EDITORS_DIR/bin/code-server"
have=""
[ -x "$code_server" ] && have="$(XDG_CONFIG_HOME="$(mktemp -d)" XDG_DATA_HOME="$(mktemp -d)" "$code_server" --version 2>/dev/null | head -n1 | cut -d' ' -f1 || true)"
if [ "$have" = "$CODE_SERVER_VERSION" ]; then
  echo "already installed: $code_server"
else
  # @vscode/ripgrep downloads rg from GitHub in its postinstall, which is unreachable here; it
  # first looks in its cache under the temp dir, so put Debian's rg there in the expected archive.
  cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RIPGREP_PKG_VERSION"
  if [ ! -s "$cache/$RIPGREP_ASSET" ]; then
    mkdir -p "$cache"
    work="$(mktemp -d)"
    cp "$(command -v rg)" "$work/rg"
    tar -czf "$cache/$RIPGREP_ASSET" -C "$work" rg
    rm -rf "$work"
  fi
  # nodedir: node-gyp uses Debian's node headers instead of downloading them;
  # yes: node-pty's install step would otherwise wait on a prompt; unsafe-perm: we are root.
  npm_config_nodedir=/usr npm_config_yes=true \
    npm install --global --prefix "$EDITORS_DIR" --unsafe-perm --no-audit --no-fund \
    "code-server@$CODE_SERVER_VERSION"
fi

step "playwright-core $PLAYWRIGHT_VERSION (drives Debian's chromium; downloads no browser)"
if [ -f "$EDITORS_DIR/node_modules/playwright-core/package.json" ] &&
   grep -q "\"version\": \"$PLAYWRIGHT_VERSION\"" "$EDITORS_DIR/node_modules/playwright-core/package.json"; then
  echo "already installed: $EDITORS_DIR/node_modules/playwright-core"
else
  [ -f "$EDITORS_DIR/package.json" ] || echo '{"private": true}' > "$EDITORS_DIR/package.json"
  npm install --prefix "$EDITORS_DIR" --no-audit --no-fund --save-exact "playwright-core@$PLAYWRIGHT_VERSION"
fi

step "versions"
nvim --version | head -n1
chromium --version
XDG_CONFIG_HOME="$(mktemp -d)" XDG_DATA_HOME="$(mktemp -d)" "$code_server" --version | head -n1
node -e "console.log('playwright-core', require('$EDITORS_DIR/node_modules/playwright-core/package.json').version)"
echo "install took $((SECONDS - started)) s"
