#!/usr/bin/env bash
# fetch-deps.sh - prepares .deps/ (git-ignored) for building on the GPU machine.
#
# That machine has libsqlite3.so.0 but no sqlite3.h, no yaml.h, no libyaml and no
# package registry. This downloads the Debian packages here and unpacks them into
# .deps/root, which a device run carries (carry: [".deps"]) and
# tools/device-build.sh builds against.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .deps && mkdir -p .deps/debs
(cd .deps/debs && apt-get download libyaml-0-2 libyaml-dev libsqlite3-dev libcmocka0 libcmocka-dev libxxhash-dev)
for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
# the -dev symlink points at a versioned file we do not carry; the GPU machine has its own libsqlite3.so.0
ln -sf /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 .deps/root/usr/lib/x86_64-linux-gnu/libsqlite3.so
rm -rf .deps/debs
echo "fetch-deps: .deps/root ready ($(du -sh .deps | cut -f1))"
