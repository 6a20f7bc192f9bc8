// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fpgad_p2p.c - FPGAD_DMA_IOC_P2P_PATH: the PCI path between the card and
 * a peer device (a GPU), the ACS state of every bridge on it, and the
 * kernel's verdict on peer-to-peer DMA between the two.
 *
 * The walk is the one pci_p2pdma_distance() makes (drivers/pci/p2pdma.c):
 * up from each device through pci_upstream_bridge() to the lowest bridge
 * above both, or, when there is none, through the root complex.  ACS
 * redirect is what pci_bridge_has_acs_redir() looks at: request redirect,
 * completion redirect or egress control enabled in the ACS control
 * register, read live from config space.  @distance and the SUPPORTED and
 * HOST_BRIDGE_OK bits come from pci_p2pdma_distance() itself; a kernel
 * without CONFIG_PCI_P2PDMA has only its stub, which the verdict says.
 */
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>

#include "fpgad_drv.h"

#define FPGAD_P2P_ACS_REDIR	(PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC)

/* The ACS capability of @dev: false without one. */
static bool fpgad_p2p_acs(struct pci_dev *dev, u16 *ret_cap, u16 *ret_ctrl)
{
	int pos = pci_find_ext_capability(dev, PCI_EXT_CAP_ID_ACS);
	u16 cap = 0, ctrl = 0;

	if (!pos)
		return false;
	pci_read_config_word(dev, pos + PCI_ACS_CAP, &cap);
	pci_read_config_word(dev, pos + PCI_ACS_CTRL, &ctrl);
	*ret_cap = cap;
	*ret_ctrl = ctrl;
	return true;
}

static bool fpgad_p2p_redirects(struct pci_dev *dev)
{
	u16 cap, ctrl;

	return fpgad_p2p_acs(dev, &cap, &ctrl) && (ctrl & FPGAD_P2P_ACS_REDIR);
}

static u8 fpgad_p2p_type(struct pci_dev *bridge)
{
	if (!pci_is_pcie(bridge))
		return FPGAD_P2P_HOP_BRIDGE;
	switch (pci_pcie_type(bridge)) {
	case PCI_EXP_TYPE_ROOT_PORT:
		return FPGAD_P2P_HOP_ROOT_PORT;
	case PCI_EXP_TYPE_UPSTREAM:
		return FPGAD_P2P_HOP_UPSTREAM;
	case PCI_EXP_TYPE_DOWNSTREAM:
		return FPGAD_P2P_HOP_DOWNSTREAM;
	default:
		return FPGAD_P2P_HOP_BRIDGE;
	}
}

/* Hops are written while they fit and counted always. */
struct fpgad_p2p_walk {
	struct fpgad_dma_p2p_path *p;
	u32 n;
};

static struct fpgad_dma_p2p_hop *fpgad_p2p_next(struct fpgad_p2p_walk *w)
{
	struct fpgad_dma_p2p_hop *h = NULL;

	if (w->n < FPGAD_P2P_MAX_HOPS) {
		h = &w->p->hops[w->n];
		memset(h, 0, sizeof(*h));
	}
	w->n++;
	return h;
}

static void fpgad_p2p_add_bridge(struct fpgad_p2p_walk *w,
				 struct pci_dev *bridge, u8 flags)
{
	struct fpgad_dma_p2p_hop *h = fpgad_p2p_next(w);
	u16 cap, ctrl;

	if (fpgad_p2p_acs(bridge, &cap, &ctrl)) {
		flags |= FPGAD_P2P_HOP_ACS;
		if (ctrl & FPGAD_P2P_ACS_REDIR) {
			flags |= FPGAD_P2P_HOP_REDIRECT;
			w->p->verdict |= FPGAD_P2P_ACS_REDIRECT;
		}
		if (h) {
			h->acs_cap = cap;
			h->acs_ctrl = ctrl;
		}
	}
	if (!h)
		return;
	h->domain = pci_domain_nr(bridge->bus);
	h->bus = bridge->bus->number;
	h->devfn = bridge->devfn;
	h->type = fpgad_p2p_type(bridge);
	h->flags = flags;
}

static void fpgad_p2p_add_host(struct fpgad_p2p_walk *w, struct pci_bus *root)
{
	struct fpgad_dma_p2p_hop *h = fpgad_p2p_next(w);

	if (!h)
		return;
	h->domain = pci_domain_nr(root);
	h->bus = root->number;
	h->type = FPGAD_P2P_HOP_HOST_BRIDGE;
}

static struct pci_bus *fpgad_p2p_root(struct pci_dev *dev)
{
	struct pci_bus *bus = dev->bus;

	while (!pci_is_root_bus(bus))
		bus = bus->parent;
	return bus;
}

/* The lowest bridge above both @card and @peer, or NULL. */
static struct pci_dev *fpgad_p2p_common(struct pci_dev *card,
					struct pci_dev *peer)
{
	struct pci_dev *a, *b;

	for (a = pci_upstream_bridge(peer); a; a = pci_upstream_bridge(a))
		for (b = pci_upstream_bridge(card); b; b = pci_upstream_bridge(b))
			if (a == b)
				return a;
	return NULL;
}

/* The bridge @k levels above @dev's parent (0: the parent). */
static struct pci_dev *fpgad_p2p_up(struct pci_dev *dev, unsigned int k)
{
	dev = pci_upstream_bridge(dev);
	while (dev && k--)
		dev = pci_upstream_bridge(dev);
	return dev;
}

/*
 * Fill @p's out fields for the peer it names.  0; -ENODEV (no such
 * device); -EINVAL (the peer is the card); -E2BIG with only @p->n_hops
 * meaningful.
 */
int fpgad_p2p_path(struct pci_dev *card, struct fpgad_dma_p2p_path *p,
		   bool raw_acs)
{
	struct fpgad_p2p_walk w = { .p = p };
	struct pci_dev *peer, *common, *br;
	struct pci_bus *root_card, *root_peer;
	unsigned int below = 0, k;
	int ret = 0;

	peer = pci_get_domain_bus_and_slot(p->peer_domain, p->peer_bus,
					   p->peer_devfn);
	if (!peer)
		return -ENODEV;
	if (peer == card) {
		ret = -EINVAL;
		goto out;
	}

	p->verdict = 0;
	common = fpgad_p2p_common(card, peer);
	/* Up from the card to the common bridge, or to the root complex. */
	for (br = pci_upstream_bridge(card); br; br = pci_upstream_bridge(br)) {
		fpgad_p2p_add_bridge(&w, br, br == common ?
				     FPGAD_P2P_HOP_COMMON : 0);
		if (br == common)
			break;
	}
	if (!common) {
		p->verdict |= FPGAD_P2P_VIA_HOST_BRIDGE;
		root_card = fpgad_p2p_root(card);
		root_peer = fpgad_p2p_root(peer);
		fpgad_p2p_add_host(&w, root_card);
		if (root_peer != root_card) {
			p->verdict |= FPGAD_P2P_OTHER_DOMAIN;
			fpgad_p2p_add_host(&w, root_peer);
		}
	}
	/* Then down to the peer's parent: its bridges below @common, top first. */
	for (br = pci_upstream_bridge(peer); br && br != common;
	     br = pci_upstream_bridge(br))
		below++;
	for (k = below; k-- > 0;)
		fpgad_p2p_add_bridge(&w, fpgad_p2p_up(peer, k), 0);

	/* The kernel counts the devices' own ACS too. */
	if (fpgad_p2p_redirects(card) || fpgad_p2p_redirects(peer))
		p->verdict |= FPGAD_P2P_ACS_REDIRECT;

	p->n_hops = w.n;
	if (w.n > FPGAD_P2P_MAX_HOPS) {
		ret = -E2BIG;
		goto out;
	}
	/* Config space past 64 bytes is CAP_SYS_ADMIN's: flags only. */
	for (k = 0; k < w.n && !raw_acs; k++) {
		p->hops[k].acs_cap = 0;
		p->hops[k].acs_ctrl = 0;
	}
	p->distance = pci_p2pdma_distance(peer, &card->dev, false);
	if (p->distance < 0)
		p->distance = -1;
	if (!IS_ENABLED(CONFIG_PCI_P2PDMA))
		p->verdict |= FPGAD_P2P_NO_P2PDMA;
	else if (p->distance >= 0)
		p->verdict |= FPGAD_P2P_SUPPORTED |
			      (common ? 0 : FPGAD_P2P_HOST_BRIDGE_OK);
out:
	pci_dev_put(peer);
	return ret;
}
