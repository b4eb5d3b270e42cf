#!/usr/bin/env bash
# deps.sh - installs the Debian packages fatune builds and tests with, if any is missing.
# Needs root (or sudo) only when something must be installed. clang builds the
# libFuzzer targets (tests/fuzz) with libclang-rt-dev (libFuzzer and the sanitizers). The CUDA toolkit
# (NVRTC and headers) must already be there: it does not come from Debian.
set -euo pipefail
pkgs="cmake gcc make pkg-config libsqlite3-dev libyaml-dev libxxhash-dev libcmocka-dev sqlite3 python3 clang libclang-rt-dev"
# the SLURM test (tests/cli/071-slurm.sh) and the report render (tests/cli/073-report.sh)
pkgs="$pkgs slurmctld slurmd munge chromium"
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -e /usr/local/cuda/include/nvrtc.h ]; then
	echo "deps: the CUDA toolkit (NVRTC) is missing: install CUDA 12 or 13 and put nvcc on PATH" >&2
	exit 1
fi
