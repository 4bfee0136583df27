#!/usr/bin/env bash
# Prepares the cgroup v2 VM test (local/test/cgroup2, `make test-cgroup2`),
# which boots a Linux kernel in qemu with an initramfs it builds itself, and
# prints a directory holding what that needs: vmlinuz (the kernel image) and
# busybox (static: the guest's shell and tools). It installs qemu-system-x86 and cpio with apt-get when
# missing, and takes the kernel out of Debian's current linux-image package
# (the one linux-image-amd64 depends on) and busybox out of busybox-static
# without installing either: each package is downloaded into a cache outside
# the work tree and only the one file is kept, so a second run prints the
# cached paths.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${RAY_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ray-operator}/cgroup2-vm
missing=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
command -v cpio >/dev/null 2>&1 || missing+=(cpio)
if [[ ${#missing[@]} -gt 0 ]]; then
	if [[ $(id -u) -ne 0 ]]; then
		echo "the cgroup v2 VM test needs ${missing[*]}: install them as root" >&2
		exit 1
	fi
	"$here/apt-install.sh" "${missing[@]}"
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
# extract PACKAGE MEMBER prints the cached copy of the package's file
# MEMBER (a tar pattern), downloading the package first when it is missing.
extract() {
	local pkg=$1 member=$2
	local dir="$cache/$pkg-$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2; exit}' | tr ':' '_')"
	if [[ -z "$(ls "$dir" 2>/dev/null)" ]]; then
		echo "downloading $pkg for the cgroup v2 VM test (first run only)" >&2
		local work
		work=$(mktemp -d "$cache/.download.XXXXXX")
		(cd "$work" && "$here/timings.sh" run tool "apt-get download $pkg" -- apt-get download "$pkg" >&2)
		dpkg-deb --fsys-tarfile "$work"/*.deb | tar -x -C "$work" --wildcards "$member"
		mkdir -p "$dir.tmp"
		mv "$work"/$member "$dir.tmp/"
		rm -rf "$work"
		mv "$dir.tmp" "$dir"
	fi
	ls "$dir"/*
}

# The newest kernel package the configured archives know (a bump of the
# meta-package downloads the new one). Without apt lists (a fresh machine),
# update them once.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')
if [[ -z "$pkg" ]]; then
	"$here/timings.sh" run tool "apt-get update" -- apt-get update >&2
	pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
fi
if [[ -z "$pkg" ]]; then
	echo "apt knows no linux-image-amd64: the cgroup v2 VM test takes its kernel from Debian's archive" >&2
	exit 1
fi
kernel=$(extract "$pkg" './boot/vmlinuz-*')
busybox=$(extract busybox-static ./bin/busybox)
mkdir -p "$cache/assets"
ln -sfn "$kernel" "$cache/assets/vmlinuz"
ln -sfn "$busybox" "$cache/assets/busybox"
echo "$cache/assets"
