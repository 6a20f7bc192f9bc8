/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * fpgad_dma.h - the ABI of fpgad_dma.ko, the driver of /dev/fpgadN.
 *
 * This header is the specification.  Every structure has fixed-width fields
 * only, is naturally aligned, has no implicit padding and is marked field by
 * field as "in" (written by the caller), "out" (written by the driver) or
 * "in/out".  Fields named reserved must be zero on input and are zero on
 * output.  Every ioctl is _IOWR(FPGAD_DMA_IOC_MAGIC, nr, struct) and
 * returns 0 or -1 with errno set; "out" fields are written only on success
 * (P2P_PATH's E2BIG, which writes n_hops, is the one exception).
 * Every field's offset is asserted at the end of this header.
 *
 * FPGAD_DMA_ABI_VERSION is major << 16 | minor.  The minor grows whenever
 * something is added (a structure, a field at the end of one or taken from
 * reserved, an ioctl, a flag, an errno); the major only if a meaning or a
 * layout changes, which is not planned.  A driver understands every minor
 * up to its own: an older fpgad keeps working with a newer module (see
 * FPGAD_DMA_IOC_VERSION).  Structures grow only at their end, and every
 * ioctl carries the size of the caller's structure (_IOC_SIZE): the driver
 * zero-extends a shorter one, accepts a longer one whose extra bytes are
 * zero (E2BIG otherwise) and writes back no more than the caller's size.
 * 0.2 added P2P_PATH, the wedged channel (COMPLETION_WEDGED, EIO from
 * SUBMIT and RESET, EAGAIN from RESET) and timeouts that grow with the
 * length (info.timeout_bytes_per_ms); 0.3 the minor rule above, VERSION's
 * driver_version, P2P_PATH's raw ACS registers for CAP_SYS_ADMIN only,
 * SUBMIT's EINVAL for addresses not aligned to info.align, and PIN_HOST's
 * charge to RLIMIT_MEMLOCK.
 *
 * Model
 * -----
 * A card has h2c_channels host-to-card and c2h_channels card-to-host DMA
 * engines.  One open file of /dev/fpgadN is one client: every pin and every
 * transfer belongs to the file that made it and is released when the file
 * is closed (the last close of a file, not of a process).
 *
 *   1. FPGAD_DMA_IOC_VERSION, first: states the ABI version the caller was
 *      built with.  Until it succeeds with a matching version every other
 *      ioctl and read() of the file fails with EPROTO and poll() reports
 *      POLLERR.
 *   2. FPGAD_DMA_IOC_INFO: channels, PCIe link, card memory, limits.
 *   3. A pin makes memory reachable by the card for as long as it lives and
 *      returns an opaque, non-zero handle:
 *        PIN_HOST   user memory of the caller (pin_user_pages, long term);
 *        PIN_DMABUF a dma-buf fd (GPU memory exported by the GPU driver, or
 *                   any other exporter); the buffer is attached to the
 *                   card's PCI device, pinned and mapped once;
 *        PIN_NVP2P  a CUDA device address through NVIDIA's nv-p2p API
 *                   (only in builds made with NVIDIA_SRC=, see
 *                   FPGAD_DMA_FEAT_NVP2P; otherwise EOPNOTSUPP).
 *      UNPIN releases one pin; it fails with EBUSY while a transfer that
 *      uses the pin is queued or running.
 *   4. FPGAD_DMA_IOC_SUBMIT queues one transfer and returns at once.  A
 *      channel runs its transfers one after the other, in submission order.
 *      A file may have at most max_inflight transfers outstanding (submitted
 *      and whose completion has not been read yet); beyond that SUBMIT fails
 *      with EAGAIN.
 *   5. Each submitted transfer produces exactly one completion record,
 *      struct fpgad_dma_completion, read with read(2) on the same file.
 *      read() returns whole records only (count must be at least one record)
 *      and blocks unless the file is O_NONBLOCK (then EAGAIN).  poll(2)
 *      reports POLLIN while a record is waiting, and POLLHUP once the card
 *      is gone (read() then fails with ENODEV when no record is left).  Records of one channel
 *      come in submission order; records of different channels interleave.
 *   6. A transfer that does not finish within its timeout is stopped: the
 *      engine is halted and the driver waits until the card has no DMA
 *      outstanding for it before it completes the record with -ETIMEDOUT,
 *      so the memory may be reused at once and the channel takes the next
 *      transfer without a module reload.  The wait is bounded: an engine
 *      finishes the descriptor it is on (at most 1 MiB) and then stops.
 *      One that does not (a hung AXI slave on the card, a link that went
 *      down) leaves its channel "wedged": the record completes with
 *      FPGAD_DMA_COMPLETION_WEDGED set, the pin the engine may still write
 *      stays held (closing the file does not release it) until the engine
 *      is known to have stopped, later SUBMITs to the channel fail with EIO
 *      and what is queued on it completes with -EIO and the flag.  The
 *      sysfs attribute "wedged" counts such channels.
 *   7. FPGAD_DMA_IOC_RESET (channel): cancels this file's queued and
 *      running transfers on that channel (status -ECANCELED) and resets the
 *      engine.  Other files' transfers stay queued.  On a wedged channel it
 *      first tries to stop the engine again; if that fails it resets the
 *      whole PCI function (transfers of other channels wait meanwhile),
 *      which stops every engine.  Either way the held pins are released
 *      and the channel takes transfers again.  EIO: the engine did not stop
 *      and the function cannot be reset (the channel stays wedged until the
 *      card is removed or the module unloaded, which disables the card's
 *      bus mastering first); EAGAIN: the PCI core was busy with the device
 *      (being removed or reset by someone else), try again.
 *   8. A pin whose memory its exporter takes back (nv-p2p free callback,
 *      dma-buf move_notify) turns dead: the transfer running on it is
 *      stopped before the driver lets the exporter go on, queued ones
 *      complete with -ENOLINK.  If the engine cannot be stopped, the
 *      card's bus mastering is switched off (every channel of the card
 *      then fails until a RESET resets the function).
 *
 * Errors common to all ioctls: EFAULT (bad pointer), EINVAL (bad field or
 * non-zero reserved field), EPROTO (no VERSION yet), ENODEV (the card was
 * removed; the file stays usable only for close()).
 */
#ifndef _UAPI_FPGAD_DMA_H
#define _UAPI_FPGAD_DMA_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FPGAD_DMA_ABI(major, minor)	((__u32)(major) << 16 | (__u32)(minor))
#define FPGAD_DMA_ABI_MAJOR(v)		((__u32)(v) >> 16)
#define FPGAD_DMA_ABI_MINOR(v)		((__u32)(v) & 0xffff)
#define FPGAD_DMA_ABI_VERSION		FPGAD_DMA_ABI(0, 3)

/* Device nodes are /dev/fpgad0, /dev/fpgad1, ...; the class is "fpgad". */
#define FPGAD_DMA_CLASS		"fpgad"

#define FPGAD_DMA_IOC_MAGIC	0xF9

/* Transfer directions. */
#define FPGAD_DMA_H2C		0	/* host (pinned memory) to card */
#define FPGAD_DMA_C2H		1	/* card to host (pinned memory) */

/* Features, in struct fpgad_dma_version.features. */
#define FPGAD_DMA_FEAT_DMABUF	(1u << 0)	/* PIN_DMABUF works */
#define FPGAD_DMA_FEAT_NVP2P	(1u << 1)	/* PIN_NVP2P works */
#define FPGAD_DMA_FEAT_POLL_WB	(1u << 2)	/* completion by write-back polling */

/*
 * FPGAD_DMA_IOC_VERSION - must be the first call on a file.
 * Succeeds whatever @abi_version is.  The file is usable when the driver
 * understands the caller's version (the same major, a minor no newer than
 * the driver's): then @abi_version comes back unchanged, so that a caller
 * that compares it for equality works with any newer minor.  Otherwise it
 * comes back as the driver's version, and the file stays unusable.
 */
struct fpgad_dma_version {
	__u32 abi_version;	/* in: FPGAD_DMA_ABI_VERSION of the caller;
				 * out: the version the file speaks */
	__u32 features;		/* out: FPGAD_DMA_FEAT_* */
	__u32 driver_version;	/* in: ignored (a reply may be reused);
				 * out: the driver's FPGAD_DMA_ABI_VERSION
				 * (0.3 on; 0 before) */
	__u32 reserved;		/* in/out: zero */
};

/* FPGAD_DMA_IOC_INFO - what the card and the driver offer. */
struct fpgad_dma_info {
	__u32 h2c_channels;	/* out: host-to-card engines */
	__u32 c2h_channels;	/* out: card-to-host engines */
	__u32 link_gen;		/* out: negotiated PCIe generation, 0 = not PCIe */
	__u32 link_width;	/* out: negotiated lanes, 0 = not PCIe */
	__u64 card_memory;	/* out: bytes of card address space that
				 * card_addr may span, 0 = unknown */
	__u32 align;		/* out: the engine's address alignment:
				 * SUBMIT's card_addr and the host address
				 * of its first byte must be multiples of
				 * it (EINVAL); length need not */
	__u32 max_inflight;	/* out: outstanding transfers per file */
	__u64 max_transfer;	/* out: largest length of one SUBMIT */
	__u16 vendor;		/* out: PCI vendor id */
	__u16 device;		/* out: PCI device id */
	__u32 pci_domain;	/* out */
	__u8 pci_bus;		/* out */
	__u8 pci_devfn;		/* out */
	__u16 reserved0;	/* out: zero */
	__u32 default_timeout_ms; /* out: timeout of a SUBMIT with 0, plus
				 * length / timeout_bytes_per_ms */
	char engine[16];	/* out: "xdma" or "edu", NUL terminated */
	__u64 timeout_bytes_per_ms; /* out: a quarter of the link's raw rate
				 * (PCIe Gen1 x1 when not known) */
	__u64 reserved[3];	/* out: zero */
};

/*
 * FPGAD_DMA_IOC_PIN_HOST - pin [addr, addr + length) of the caller's memory
 * (writable mappings only: the card may write into it).  Any alignment is
 * accepted; page-aligned memory gives the fewest DMA segments.
 * The pages are charged to the caller's locked memory (RLIMIT_MEMLOCK, as
 * mlock() and VFIO do) until the pin is released, unless it has
 * CAP_IPC_LOCK.
 * Errors: EINVAL (length 0 or too large), EFAULT (unmapped), ENOMEM (out
 * of memory, or beyond RLIMIT_MEMLOCK).
 */
struct fpgad_dma_pin_host {
	__u64 addr;		/* in: user virtual address */
	__u64 length;		/* in: bytes */
	__u32 flags;		/* in: zero */
	__u32 reserved;		/* in: zero */
	__u64 handle;		/* out */
};

/*
 * FPGAD_DMA_IOC_PIN_DMABUF - attach the dma-buf @fd to the card, pin it and
 * map it for DMA; the pin covers [offset, offset + length) of the buffer
 * (length 0: to its end).  The driver keeps its own reference: the caller
 * may close @fd afterwards.  Peer-to-peer (GPU memory) is allowed.
 * Errors: EBADF (not a dma-buf), EINVAL (range outside the buffer), and
 * whatever the exporter returns from attach, pin or map.
 */
struct fpgad_dma_pin_dmabuf {
	__s32 fd;		/* in: dma-buf file descriptor */
	__u32 flags;		/* in: zero */
	__u64 offset;		/* in: into the buffer */
	__u64 length;		/* in: bytes, 0 = to the end */
	__u64 handle;		/* out */
};

/*
 * FPGAD_DMA_IOC_PIN_NVP2P - pin GPU memory by CUDA device address with
 * nvidia_p2p_get_pages.  @gpu_addr and @length must be multiples of 64 KiB.
 * When the GPU memory is freed under the pin, the pin turns dead: SUBMITs
 * that use it fail with ENOLINK; UNPIN still releases it.
 * Errors: EOPNOTSUPP in builds without NVIDIA_SRC=, ENOLINK (the GPU
 * memory was freed while it was being pinned).
 */
struct fpgad_dma_pin_nvp2p {
	__u64 gpu_addr;		/* in: CUDA device virtual address */
	__u64 length;		/* in: bytes */
	__u32 flags;		/* in: zero */
	__u32 reserved;		/* in: zero */
	__u64 handle;		/* out */
};

/* FPGAD_DMA_IOC_UNPIN - release a pin.  Errors: ENOENT, EBUSY. */
struct fpgad_dma_unpin {
	__u64 handle;		/* in */
};

/*
 * FPGAD_DMA_IOC_SUBMIT - queue one transfer of @length bytes between
 * [offset, offset + length) of the pin @handle and card address @card_addr.
 * Errors: ENOENT (handle), EINVAL (range outside the pin or the card,
 * length 0 or above max_transfer, channel), EAGAIN (max_inflight reached),
 * ENOLINK (pin revoked by its exporter), EIO (the channel is wedged: RESET
 * it, see "Model" 6).
 */
struct fpgad_dma_submit {
	__u32 channel;		/* in: engine index within @direction */
	__u32 direction;	/* in: FPGAD_DMA_H2C or FPGAD_DMA_C2H */
	__u64 handle;		/* in: from a PIN ioctl */
	__u64 offset;		/* in: bytes into the pinned region */
	__u64 card_addr;	/* in: card address */
	__u64 length;		/* in: bytes */
	__u64 cookie;		/* in: copied into the completion */
	__u32 timeout_ms;	/* in: 0 = default_timeout_ms */
	__u32 flags;		/* in: zero */
};

/*
 * One completion, as read(2) returns it.  @status is 0 or a negative errno:
 * -ETIMEDOUT (stopped after the timeout), -EIO (the engine reported an
 * error), -ECANCELED (RESET or close), -ENODEV (card removed), -ENOLINK
 * (pin revoked before or while the transfer ran).
 */
#define FPGAD_DMA_COMPLETION_WEDGED (1u << 0)	/* the engine did not stop:
						 * the channel is wedged */

struct fpgad_dma_completion {
	__u64 cookie;		/* out: from the SUBMIT */
	__s32 status;		/* out: 0 or -errno */
	__u32 flags;		/* out: FPGAD_DMA_COMPLETION_* */
	__u64 length;		/* out: bytes moved (0 unless status is 0) */
	__u64 t_start_ns;	/* out: CLOCK_MONOTONIC when the engine started */
	__u64 t_end_ns;		/* out: CLOCK_MONOTONIC when it finished */
	__u32 channel;		/* out: from the SUBMIT */
	__u32 direction;	/* out: from the SUBMIT */
};

/*
 * FPGAD_DMA_IOC_RESET - see "Model" 7.  Errors: EINVAL (channel), EIO
 * (wedged and the function cannot be reset), EAGAIN (try again).
 */
struct fpgad_dma_reset {
	__u32 channel;		/* in */
	__u32 direction;	/* in */
};

/*
 * FPGAD_DMA_IOC_P2P_PATH - the PCI path between the card and the PCI
 * device @peer (a GPU) and the kernel's verdict on peer-to-peer DMA
 * between them.  fpgad runs without privileges and PCI config space past
 * the first 64 bytes (where the ACS capability lives) needs CAP_SYS_ADMIN,
 * so the driver reads it.  It walks the path the way the kernel's
 * pci_p2pdma_distance() does: up from each device through its upstream
 * bridges to the lowest bridge above both (the common bridge, flagged
 * FPGAD_P2P_HOP_COMMON) or, when there is none, to the root complex (a
 * FPGAD_P2P_HOP_HOST_BRIDGE hop, two when the two sit under different host
 * bridges).  @hops lists the bridges from the card's parent up, then from
 * the top down to the peer's parent; the two devices themselves are not
 * hops.  ACS_REDIRECT is set when a hop, the card or the peer has request
 * redirect, completion redirect or egress control enabled (what the kernel
 * checks).  The hops' raw ACS registers (acs_cap, acs_ctrl) are config
 * space past 64 bytes: they are filled in for a CAP_SYS_ADMIN caller only
 * and read zero for others, who get the verdict and the hop flags.
 *
 * What the kernel forces: @distance, SUPPORTED and HOST_BRIDGE_OK come from
 * pci_p2pdma_distance() (peer as provider, card as client).  A kernel built
 * without CONFIG_PCI_P2PDMA (Debian's, for one) has no such walk: there
 * @distance is -1, SUPPORTED and HOST_BRIDGE_OK are clear whatever the
 * path, and FPGAD_P2P_NO_P2PDMA says so; judge by the hops.  (Exporters
 * such as NVIDIA's map peer memory themselves, without that walk.)
 *
 * Errors: ENODEV (no PCI device has the peer address, or the card was
 * removed), EINVAL (non-zero reserved field, or the peer is the card),
 * E2BIG (the path has more than FPGAD_P2P_MAX_HOPS hops: @n_hops is set to
 * the number needed, nothing else is written).
 */
#define FPGAD_P2P_MAX_HOPS	16

/* Hop types. */
#define FPGAD_P2P_HOP_ROOT_PORT		1	/* PCIe root port */
#define FPGAD_P2P_HOP_UPSTREAM		2	/* switch upstream port */
#define FPGAD_P2P_HOP_DOWNSTREAM	3	/* switch downstream port */
#define FPGAD_P2P_HOP_BRIDGE		4	/* any other bridge (PCI,
						 * PCIe-to-PCI) */
#define FPGAD_P2P_HOP_HOST_BRIDGE	5	/* the root complex: the path
						 * crosses it; bus is its root
						 * bus, devfn 0 */

/* Hop flags. */
#define FPGAD_P2P_HOP_ACS	0x1	/* has an ACS capability; acs_cap and
					 * acs_ctrl are valid */
#define FPGAD_P2P_HOP_REDIRECT	0x2	/* ACS redirects peer TLPs upstream
					 * here (RR, CR or EC set in ctrl) */
#define FPGAD_P2P_HOP_COMMON	0x4	/* the lowest bridge above both */

struct fpgad_dma_p2p_hop {
	__u32 domain;		/* out: PCI address of the bridge */
	__u8 bus;		/* out */
	__u8 devfn;		/* out */
	__u8 type;		/* out: FPGAD_P2P_HOP_* type */
	__u8 flags;		/* out: FPGAD_P2P_HOP_* flags */
	__u16 acs_cap;		/* out: PCI_ACS_CAP, 0 without the capability
				 * or without CAP_SYS_ADMIN */
	__u16 acs_ctrl;		/* out: PCI_ACS_CTRL, the same */
	__u32 reserved;		/* out: zero */
};				/* 16 bytes */

/* Verdict bits. */
#define FPGAD_P2P_SUPPORTED		0x1	/* pci_p2pdma_distance() >= 0:
						 * the kernel would map it */
#define FPGAD_P2P_VIA_HOST_BRIDGE	0x2	/* no common switch: TLPs
						 * cross the root complex */
#define FPGAD_P2P_HOST_BRIDGE_OK	0x4	/* ... and the kernel's host
						 * bridge whitelist allows it */
#define FPGAD_P2P_ACS_REDIRECT		0x8	/* a bridge on the path
						 * redirects peer TLPs upstream */
#define FPGAD_P2P_OTHER_DOMAIN		0x10	/* under different host
						 * bridges or PCI domains */
#define FPGAD_P2P_NO_P2PDMA		0x20	/* the kernel has no
						 * CONFIG_PCI_P2PDMA: distance,
						 * SUPPORTED, HOST_BRIDGE_OK
						 * unknown */

struct fpgad_dma_p2p_path {
	__u32 peer_domain;	/* in: the peer's PCI address */
	__u8 peer_bus;		/* in */
	__u8 peer_devfn;	/* in */
	__u16 reserved0;	/* in: zero */
	__s32 distance;		/* out: pci_p2pdma_distance(), -1 when not
				 * supported */
	__u32 verdict;		/* out: FPGAD_P2P_* */
	__u32 n_hops;		/* out: entries used in @hops */
	__u32 reserved1;	/* in/out: zero */
	struct fpgad_dma_p2p_hop hops[FPGAD_P2P_MAX_HOPS];
				/* out: see above */
};

#define FPGAD_DMA_IOC_VERSION \
	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x00, struct fpgad_dma_version)
#define FPGAD_DMA_IOC_INFO \
	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x01, struct fpgad_dma_info)
#define FPGAD_DMA_IOC_PIN_HOST \
	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x02, struct fpgad_dma_pin_host)
#define FPGAD_DMA_IOC_PIN_DMABUF \
	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x03, struct fpgad_dma_pin_dmabuf)
#define FPGAD_DMA_IOC_PIN_NVP2P \
	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x04, struct fpgad_dma_pin_nvp2p)
#define FPGAD_DMA_IOC_UNPIN \
	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x05, struct fpgad_dma_unpin)
#define FPGAD_DMA_IOC_SUBMIT \
	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x06, struct fpgad_dma_submit)
#define FPGAD_DMA_IOC_RESET \
	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x07, struct fpgad_dma_reset)
#define FPGAD_DMA_IOC_P2P_PATH \
	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x08, struct fpgad_dma_p2p_path)

/* The layout, field by field: what an ABI version promises. */
#if !defined(__cplusplus) && (defined(__KERNEL__) || \
	(defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L))
#ifdef __KERNEL__
#include <linux/stddef.h>
#else
#include <stddef.h>
#endif
#define FPGAD_DMA_AT(s, f, off) \
	_Static_assert(offsetof(struct s, f) == (off), #s "." #f " at " #off)
#define FPGAD_DMA_SIZE(s, n) \
	_Static_assert(sizeof(struct s) == (n), #s " is " #n " bytes")

FPGAD_DMA_AT(fpgad_dma_version, abi_version, 0);
FPGAD_DMA_AT(fpgad_dma_version, features, 4);
FPGAD_DMA_AT(fpgad_dma_version, driver_version, 8);
FPGAD_DMA_AT(fpgad_dma_version, reserved, 12);
FPGAD_DMA_SIZE(fpgad_dma_version, 16);

FPGAD_DMA_AT(fpgad_dma_info, h2c_channels, 0);
FPGAD_DMA_AT(fpgad_dma_info, c2h_channels, 4);
FPGAD_DMA_AT(fpgad_dma_info, link_gen, 8);
FPGAD_DMA_AT(fpgad_dma_info, link_width, 12);
FPGAD_DMA_AT(fpgad_dma_info, card_memory, 16);
FPGAD_DMA_AT(fpgad_dma_info, align, 24);
FPGAD_DMA_AT(fpgad_dma_info, max_inflight, 28);
FPGAD_DMA_AT(fpgad_dma_info, max_transfer, 32);
FPGAD_DMA_AT(fpgad_dma_info, vendor, 40);
FPGAD_DMA_AT(fpgad_dma_info, device, 42);
FPGAD_DMA_AT(fpgad_dma_info, pci_domain, 44);
FPGAD_DMA_AT(fpgad_dma_info, pci_bus, 48);
FPGAD_DMA_AT(fpgad_dma_info, pci_devfn, 49);
FPGAD_DMA_AT(fpgad_dma_info, reserved0, 50);
FPGAD_DMA_AT(fpgad_dma_info, default_timeout_ms, 52);
FPGAD_DMA_AT(fpgad_dma_info, engine, 56);
FPGAD_DMA_AT(fpgad_dma_info, timeout_bytes_per_ms, 72);
FPGAD_DMA_AT(fpgad_dma_info, reserved, 80);
FPGAD_DMA_SIZE(fpgad_dma_info, 104);

FPGAD_DMA_AT(fpgad_dma_pin_host, addr, 0);
FPGAD_DMA_AT(fpgad_dma_pin_host, length, 8);
FPGAD_DMA_AT(fpgad_dma_pin_host, flags, 16);
FPGAD_DMA_AT(fpgad_dma_pin_host, reserved, 20);
FPGAD_DMA_AT(fpgad_dma_pin_host, handle, 24);
FPGAD_DMA_SIZE(fpgad_dma_pin_host, 32);

FPGAD_DMA_AT(fpgad_dma_pin_dmabuf, fd, 0);
FPGAD_DMA_AT(fpgad_dma_pin_dmabuf, flags, 4);
FPGAD_DMA_AT(fpgad_dma_pin_dmabuf, offset, 8);
FPGAD_DMA_AT(fpgad_dma_pin_dmabuf, length, 16);
FPGAD_DMA_AT(fpgad_dma_pin_dmabuf, handle, 24);
FPGAD_DMA_SIZE(fpgad_dma_pin_dmabuf, 32);

FPGAD_DMA_AT(fpgad_dma_pin_nvp2p, gpu_addr, 0);
FPGAD_DMA_AT(fpgad_dma_pin_nvp2p, length, 8);
FPGAD_DMA_AT(fpgad_dma_pin_nvp2p, flags, 16);
FPGAD_DMA_AT(fpgad_dma_pin_nvp2p, reserved, 20);
FPGAD_DMA_AT(fpgad_dma_pin_nvp2p, handle, 24);
FPGAD_DMA_SIZE(fpgad_dma_pin_nvp2p, 32);

FPGAD_DMA_AT(fpgad_dma_unpin, handle, 0);
FPGAD_DMA_SIZE(fpgad_dma_unpin, 8);

FPGAD_DMA_AT(fpgad_dma_submit, channel, 0);
FPGAD_DMA_AT(fpgad_dma_submit, direction, 4);
FPGAD_DMA_AT(fpgad_dma_submit, handle, 8);
FPGAD_DMA_AT(fpgad_dma_submit, offset, 16);
FPGAD_DMA_AT(fpgad_dma_submit, card_addr, 24);
FPGAD_DMA_AT(fpgad_dma_submit, length, 32);
FPGAD_DMA_AT(fpgad_dma_submit, cookie, 40);
FPGAD_DMA_AT(fpgad_dma_submit, timeout_ms, 48);
FPGAD_DMA_AT(fpgad_dma_submit, flags, 52);
FPGAD_DMA_SIZE(fpgad_dma_submit, 56);

FPGAD_DMA_AT(fpgad_dma_completion, cookie, 0);
FPGAD_DMA_AT(fpgad_dma_completion, status, 8);
FPGAD_DMA_AT(fpgad_dma_completion, flags, 12);
FPGAD_DMA_AT(fpgad_dma_completion, length, 16);
FPGAD_DMA_AT(fpgad_dma_completion, t_start_ns, 24);
FPGAD_DMA_AT(fpgad_dma_completion, t_end_ns, 32);
FPGAD_DMA_AT(fpgad_dma_completion, channel, 40);
FPGAD_DMA_AT(fpgad_dma_completion, direction, 44);
FPGAD_DMA_SIZE(fpgad_dma_completion, 48);

FPGAD_DMA_AT(fpgad_dma_reset, channel, 0);
FPGAD_DMA_AT(fpgad_dma_reset, direction, 4);
FPGAD_DMA_SIZE(fpgad_dma_reset, 8);

FPGAD_DMA_AT(fpgad_dma_p2p_hop, domain, 0);
FPGAD_DMA_AT(fpgad_dma_p2p_hop, bus, 4);
FPGAD_DMA_AT(fpgad_dma_p2p_hop, devfn, 5);
FPGAD_DMA_AT(fpgad_dma_p2p_hop, type, 6);
FPGAD_DMA_AT(fpgad_dma_p2p_hop, flags, 7);
FPGAD_DMA_AT(fpgad_dma_p2p_hop, acs_cap, 8);
FPGAD_DMA_AT(fpgad_dma_p2p_hop, acs_ctrl, 10);
FPGAD_DMA_AT(fpgad_dma_p2p_hop, reserved, 12);
FPGAD_DMA_SIZE(fpgad_dma_p2p_hop, 16);

FPGAD_DMA_AT(fpgad_dma_p2p_path, peer_domain, 0);
FPGAD_DMA_AT(fpgad_dma_p2p_path, peer_bus, 4);
FPGAD_DMA_AT(fpgad_dma_p2p_path, peer_devfn, 5);
FPGAD_DMA_AT(fpgad_dma_p2p_path, reserved0, 6);
FPGAD_DMA_AT(fpgad_dma_p2p_path, distance, 8);
FPGAD_DMA_AT(fpgad_dma_p2p_path, verdict, 12);
FPGAD_DMA_AT(fpgad_dma_p2p_path, n_hops, 16);
FPGAD_DMA_AT(fpgad_dma_p2p_path, reserved1, 20);
FPGAD_DMA_AT(fpgad_dma_p2p_path, hops, 24);
FPGAD_DMA_SIZE(fpgad_dma_p2p_path, 24 + 16 * FPGAD_P2P_MAX_HOPS);

#undef FPGAD_DMA_AT
#undef FPGAD_DMA_SIZE
#endif

#endif /* _UAPI_FPGAD_DMA_H */
