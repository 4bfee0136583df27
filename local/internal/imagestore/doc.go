// Package imagestore is the local node's image store: it pulls OCI and
// Docker images from registries with go-containerregistry, verifies every
// digest on the way (manifest, config, each layer's blob and its
// uncompressed diff ID), keeps one copy of each image per manifest digest for
// the node's platform, unpacked once into a root filesystem that containers
// use as the read-only lower layer of their overlays, and removes images no
// pod uses when the store grows past a threshold or when asked. Load brings
// in the images of an archive (`docker save`, OCI layout) as a pull would,
// for images no registry here serves (`ray-local load image-archive`).
//
// On disk, under the store's root:
//
//	images/<hex>/image.json  the image's record (reference, digest, config, size)
//	images/<hex>/rootfs/     its unpacked root filesystem
//	refs/<hex of ref>        the manifest digest a reference resolved to last
//	tmp/                     unpacks under way; renamed into images/ when whole
//	trash/                   images being removed
//	lock                     flocked by GC and Load, which may run in
//	                         another process than the node's
//
// An image directory exists only once its unpack finished (it is renamed into
// place whole), so a pull that fails half-way leaves nothing a container
// could use; tmp/ and trash/ are emptied when the store opens.
package imagestore
