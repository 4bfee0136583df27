#!/usr/bin/env bash
# Makes sure the Debian packages the local node needs are installed: runc
# (it runs every container), conmon (each container's monitor, which keeps
# it and its log going whatever happens to the node's process), nft (kube-proxy's nftables mode drives the
# kernel through it), iptables (kube-proxy removes iptables leftovers when it
# starts and on --cleanup), conntrack, and mkfs.ext4, fsck, blkid and mount
# (each persistent volume is an ext4 filesystem in a file, mounted through
# a loop device). CI machines start without them and
# run as root: there, missing ones are installed with apt-get. Elsewhere it
# only says what is missing; the local node needs root anyway.
set -euo pipefail

declare -A package_of=([runc]=runc [conmon]=conmon [nft]=nftables [iptables]=iptables [conntrack]=conntrack
	[mkfs.ext4]=e2fsprogs [fsck]=util-linux [blkid]=util-linux [mount]=mount)
missing=()
for cmd in "${!package_of[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("${package_of[$cmd]}")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if [[ $(id -u) -ne 0 ]]; then
	echo "local node packages missing (${missing[*]}); install them as root to run real pods" >&2
	exit 0
fi
"$(dirname "$0")/apt-install.sh" "${missing[@]}"
