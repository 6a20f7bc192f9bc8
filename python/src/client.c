// SPDX-License-Identifier: MIT
/*
 * client.c - fpgad._fpgad._Client: one connection to fpgad (an
 * fpgad_client), its queries as plain dicts (fpgad/__init__.py makes
 * dataclasses of them), channel leases, and the lock that keeps libfpgad
 * calls on one connection one at a time.
 */
#include <string.h>

#include "channel_counters.h"
#include "pyfpgad.h"

PyTypeObject *pyfpgad_client_type;

void pyfpgad_client_lock(struct pyfpgad_client *cl)
{
	if (PyThread_acquire_lock(cl->lock, NOWAIT_LOCK))
		return;
	Py_BEGIN_ALLOW_THREADS
	PyThread_acquire_lock(cl->lock, WAIT_LOCK);
	Py_END_ALLOW_THREADS
}

void pyfpgad_client_unlock(struct pyfpgad_client *cl)
{
	PyThread_release_lock(cl->lock);
}

bool pyfpgad_client_reconnect_blocked(const struct pyfpgad_client *cl,
				      const struct pyfpgad_channel *ch)
{
	return cl->reconnect && ch->exported > 0;
}

int pyfpgad_client_add_channel(struct pyfpgad_client *cl, struct pyfpgad_channel *ch)
{
	if (cl->n_chans == cl->cap_chans) {
		unsigned cap = cl->cap_chans ? cl->cap_chans * 2 : 4;
		struct pyfpgad_channel **n = PyMem_Realloc(cl->chans, cap * sizeof(*n));

		if (!n) {
			PyErr_NoMemory();
			return -1;
		}
		cl->chans = n;
		cl->cap_chans = cap;
	}
	cl->chans[cl->n_chans++] = ch;
	return 0;
}

static void client_disconnect(struct pyfpgad_client *cl)
{
	fpgad_client *c = cl->c;

	cl->c = NULL;
	if (!c)
		return;
	pyfpgad_client_lock(cl);
	fpgad_disconnect(c);
	pyfpgad_client_unlock(cl);
}

void pyfpgad_client_channel_gone(struct pyfpgad_client *cl, struct pyfpgad_channel *ch)
{
	for (unsigned i = 0; i < cl->n_chans; i++) {
		if (cl->chans[i] == ch) {
			cl->chans[i] = cl->chans[--cl->n_chans];
			break;
		}
	}
	if (cl->closing && cl->n_chans == 0)
		client_disconnect(cl);
}

static bool client_check(struct pyfpgad_client *cl)
{
	if (cl->c && !cl->closing)
		return true;
	pyfpgad_raise_state(pyfpgad_closed_error, "client is closed");
	return false;
}

static PyObject *client_close(PyObject *self, PyObject *unused)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;

	(void)unused;
	if (cl->closing)
		Py_RETURN_NONE;
	cl->closing = true;
	/* Closing a channel may remove it from the list: walk a copy. */
	while (cl->n_chans) {
		struct pyfpgad_channel *ch = cl->chans[cl->n_chans - 1];
		unsigned before = cl->n_chans;
		PyObject *r;

		Py_INCREF((PyObject *)ch);
		r = PyObject_CallMethod((PyObject *)ch, "close", NULL);
		Py_DECREF((PyObject *)ch);
		Py_XDECREF(r);
		if (!r)
			return NULL;
		/* Still open at the C level (exported frames): leave it. */
		if (cl->n_chans == before)
			break;
	}
	if (cl->n_chans == 0)
		client_disconnect(cl);
	Py_RETURN_NONE;
}

static PyObject *summary_dict(const struct fpgad_channel_summary *s)
{
	return Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:O,s:s,s:I,s:K,s:K,s:K,s:K,s:I}",
			     "name", s->name, "direction", s->direction,
			     "source", s->source, "state", s->state,
			     "memory", s->memory,
			     "integrated", s->integrated ? Py_True : Py_False,
			     "mode", s->mode, "slots", s->slots,
			     "slot_size", (unsigned long long)s->slot_size,
			     "frame_size", (unsigned long long)s->frame_size,
			     "frames", (unsigned long long)s->frames,
			     "drops", (unsigned long long)s->drops, "leases", s->leases);
}

/* An id, a count or a string fpgad could not read (0, ""): None. */
static PyObject *known_u64(uint64_t v)
{
	if (!v)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLongLong(v);
}

static PyObject *known_str(const char *s)
{
	if (!s[0])
		Py_RETURN_NONE;
	return PyUnicode_FromString(s);
}

/* An AER count of card @c: 0 is a count; None when it has none. */
static PyObject *aer_count(const struct fpgad_card *c, uint64_t v)
{
	if (!c->aer)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLongLong(v);
}

/* The card of Status, with fpgactl status --json's names and nulls. */
static PyObject *card_dict(const struct fpgad_card *c)
{
	PyObject *numa = c->numa_node >= 0 ? PyLong_FromLong(c->numa_node) :
			 Py_NewRef(Py_None);

	/* N: the dict takes each reference; a NULL one fails the whole. */
	return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,"
			     "s:N,s:N,s:N}",
			     "pci_address", known_str(c->pci_address),
			     "vendor_id", known_u64(c->vendor_id),
			     "device_id", known_u64(c->device_id),
			     "subsystem_vendor_id", known_u64(c->subsystem_vendor_id),
			     "subsystem_device_id", known_u64(c->subsystem_device_id),
			     "link_gen", known_u64(c->link_gen),
			     "link_width", known_u64(c->link_width),
			     "max_link_gen", known_u64(c->max_link_gen),
			     "max_link_width", known_u64(c->max_link_width),
			     "numa_node", numa,
			     "driver", known_str(c->driver),
			     "module_version", known_str(c->module_version),
			     "simulates", known_str(c->simulates),
			     "aer_correctable", aer_count(c, c->aer_correctable),
			     "aer_nonfatal", aer_count(c, c->aer_nonfatal),
			     "aer_fatal", aer_count(c, c->aer_fatal));
}

static PyObject *client_status(PyObject *self, PyObject *unused)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;
	struct fpgad_status *s = NULL;
	PyObject *chans = NULL, *card = NULL, *d = NULL;
	int r;

	(void)unused;
	if (!client_check(cl))
		return NULL;
	PYFPGAD_CLIENT_CALL(cl, r, fpgad_status_get(cl->c, &s), "status");
	if (r < 0)
		return NULL;
	chans = PyList_New(0);
	if (!chans)
		goto out;
	for (uint32_t i = 0; i < s->n_channels; i++) {
		PyObject *c = summary_dict(&s->channels[i]);

		if (!c || PyList_Append(chans, c) < 0) {
			Py_XDECREF(c);
			goto out;
		}
		Py_DECREF(c);
	}
	card = card_dict(&s->card);
	if (!card)
		goto out;
	d = Py_BuildValue("{s:s,s:K,s:s,s:s,s:s,s:I,s:I,s:s,s:s,s:s,s:s,s:O,s:O,"
			  "s:K,s:s,s:I,s:I,s:K,s:K,s:K,s:K,s:K}",
			  "version", s->version, "uptime_ms", (unsigned long long)s->uptime_ms,
			  "backend", s->backend, "mode", s->mode, "mode_reason", s->mode_reason,
			  "clients", s->clients, "pid", s->pid, "gpu_sharing", s->gpu_sharing,
			  "gpu_sharing_note", s->gpu_sharing_note, "numa", s->numa,
			  "gpu_choice", s->gpu_choice, "channels", chans, "card", card,
			  "card_memory", (unsigned long long)s->card_memory,
			  "transfer_engines", s->transfer_engines,
			  "transfer_queues", s->transfer_queues,
			  "transfer_buffers", s->transfer_buffers,
			  "transfer_registered", (unsigned long long)s->transfer_registered,
			  "transfers", (unsigned long long)s->transfers,
			  "transfer_bytes", (unsigned long long)s->transfer_bytes,
			  "transfer_errors", (unsigned long long)s->transfer_errors,
			  "transfer_refused", (unsigned long long)s->transfer_refused);
out:
	Py_XDECREF(card);
	Py_XDECREF(chans);
	fpgad_status_free(s);
	return d;
}

static PyObject *client_clients(PyObject *self, PyObject *unused)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;
	struct fpgad_client_list *l = NULL;
	PyObject *list = NULL;
	int r;

	(void)unused;
	if (!client_check(cl))
		return NULL;
	PYFPGAD_CLIENT_CALL(cl, r, fpgad_clients_get(cl->c, &l), "clients");
	if (r < 0)
		return NULL;
	list = PyList_New(0);
	for (uint32_t i = 0; list && i < l->n_clients; i++) {
		const struct fpgad_client_info *ci = &l->clients[i];
		PyObject *leases = PyList_New(0), *d = NULL;

		for (uint32_t j = 0; leases && j < ci->n_leases && j < 16; j++) {
			PyObject *n = PyUnicode_FromString(ci->leases[j]);

			if (!n || PyList_Append(leases, n) < 0)
				Py_CLEAR(leases);
			Py_XDECREF(n);
		}
		if (leases)
			d = Py_BuildValue("{s:I,s:I,s:I,s:K,s:O,s:O}", "pid", ci->pid,
					  "uid", ci->uid, "gid", ci->gid, "connected_ms",
					  (unsigned long long)ci->connected_ms, "remote",
					  ci->remote ? Py_True : Py_False, "leases", leases);
		Py_XDECREF(leases);
		if (!d || PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	fpgad_clients_free(l);
	return list;
}

/* d[key] = an int of @v; -1 with the exception set. */
static int dict_set_u64(PyObject *d, const char *key, uint64_t v)
{
	PyObject *o = PyLong_FromUnsignedLongLong(v);
	int r = o ? PyDict_SetItemString(d, key, o) : -1;

	Py_XDECREF(o);
	return r;
}

static PyObject *client_stats(PyObject *self, PyObject *args)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;
	struct fpgad_channel_stats s;
	PyObject *d;
	const char *name;
	char what[64];
	int r;

	if (!PyArg_ParseTuple(args, "s:stats", &name) || !client_check(cl))
		return NULL;
	PyOS_snprintf(what, sizeof(what), "stats %s", name);
	PYFPGAD_CLIENT_CALL(cl, r, fpgad_channel_stats(cl->c, name, &s), what);
	if (r < 0)
		return NULL;
	/* fpgactl stats --json's names; N: known_str's reference is the dict's. */
	d = Py_BuildValue("{s:s,s:s,s:s,s:K,s:d,s:K,s:K,s:N,s:N}", "channel", name,
			  "state", s.state, "mode", s.mode,
			  "dma_ns_total", (unsigned long long)s.dma_ns_total,
			  "queued_avg", s.queued_avg,
			  "latency_ns_total", (unsigned long long)s.latency_ns_total,
			  "latency_frames", (unsigned long long)s.latency_frames,
			  "integrity", known_str(s.integrity),
			  "last_error", known_str(s.last_error));
#define COUNTER_ITEM(f, h)						\
	if (d && dict_set_u64(d, #f, s.f) < 0)				\
		Py_CLEAR(d);
	CHANNEL_COUNTERS(COUNTER_ITEM)
#undef COUNTER_ITEM
	return d;
}

static PyObject *client_reset(PyObject *self, PyObject *args)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;
	const char *name;
	char what[64];
	int r;

	if (!PyArg_ParseTuple(args, "s:reset", &name) || !client_check(cl))
		return NULL;
	PyOS_snprintf(what, sizeof(what), "reset %s", name);
	PYFPGAD_CLIENT_CALL(cl, r, fpgad_channel_reset(cl->c, name), what);
	if (r < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *topo_end(const struct fpgad_topo_end *e)
{
	return Py_BuildValue("{s:s,s:O,s:i,s:s,s:s,s:i,s:s}", "address", e->address,
			     "found", e->found ? Py_True : Py_False, "numa_node", e->numa_node,
			     "host_bridge", e->host_bridge, "root_port", e->root_port,
			     "iommu_group", e->iommu_group, "iommu", e->iommu);
}

static PyObject *topo_gpu(const struct fpgad_topo_gpu *g)
{
	PyObject *end = topo_end(&g->gpu), *d;

	if (!end)
		return NULL;
	d = Py_BuildValue("{s:O,s:s,s:s,s:s,s:s,s:s,s:O,s:i,s:s}", "gpu", end,
			  "path_class", g->path_class, "verdict", g->verdict,
			  "reason", g->reason, "common_bridge", g->common_bridge,
			  "acs_bridge", g->acs_bridge, "kernel", g->kernel ? Py_True : Py_False,
			  "distance", g->distance, "warning", g->warning);
	Py_DECREF(end);
	return d;
}

static PyObject *topo_channel(const struct fpgad_topo_channel *c)
{
	return Py_BuildValue("{s:s,s:s,s:s,s:s,s:d,s:d}", "name", c->name, "gpu", c->gpu,
			     "mode", c->mode, "mode_reason", c->mode_reason,
			     "gpudirect_bps", c->gpudirect_bps, "bounce_bps", c->bounce_bps);
}

/* A list of @n dicts made by @make from the elements of @base. */
static PyObject *dict_list(const void *base, size_t size, uint32_t n,
			   PyObject *(*make)(const void *))
{
	PyObject *list = PyList_New(0);

	for (uint32_t i = 0; list && i < n; i++) {
		PyObject *d = make((const char *)base + i * size);

		if (!d || PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	return list;
}

static PyObject *make_gpu(const void *p)
{
	return topo_gpu(p);
}

static PyObject *make_channel(const void *p)
{
	return topo_channel(p);
}

static PyObject *client_topology(PyObject *self, PyObject *unused)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;
	struct fpgad_topology *t = NULL;
	PyObject *card = NULL, *gpus = NULL, *chans = NULL, *d = NULL;
	int r;

	(void)unused;
	if (!client_check(cl))
		return NULL;
	PYFPGAD_CLIENT_CALL(cl, r, fpgad_topology_get(cl->c, &t), "topology");
	if (r < 0)
		return NULL;
	card = topo_end(&t->card_end);
	gpus = dict_list(t->gpus, sizeof(*t->gpus), t->n_gpus, make_gpu);
	chans = dict_list(t->channels, sizeof(*t->channels), t->n_channels, make_channel);
	if (card && gpus && chans)
		d = Py_BuildValue("{s:s,s:O,s:O,s:O,s:s,s:s,s:s,s:O,s:O}", "card", t->card,
				  "card_end", card, "simulated", t->simulated ? Py_True : Py_False,
				  "vm", t->vm ? Py_True : Py_False, "vm_reason", t->vm_reason,
				  "sysfs", t->sysfs, "warning", t->warning, "gpus", gpus,
				  "channels", chans);
	Py_XDECREF(card);
	Py_XDECREF(gpus);
	Py_XDECREF(chans);
	fpgad_topology_free(t);
	return d;
}

static PyObject *client_open(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "name", "shared", "newest", "poll_us", NULL };
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;
	int shared = 0, newest = 0;
	unsigned int poll_us = 0;
	const char *name;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "s|ppI:open", kwlist, &name, &shared,
					 &newest, &poll_us) ||
	    !client_check(cl))
		return NULL;
	return (PyObject *)pyfpgad_channel_open(cl, name, shared ? FPGAD_OPEN_SHARED : 0,
						newest, poll_us);
}

static PyObject *client_get_server(PyObject *self, void *closure)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;

	(void)closure;
	if (!client_check(cl))
		return NULL;
	return PyUnicode_FromString(fpgad_server_software(cl->c));
}

static PyObject *client_get_url(PyObject *self, void *closure)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;

	(void)closure;
	Py_INCREF(cl->url);
	return cl->url;
}

static PyObject *client_get_closed(PyObject *self, void *closure)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;

	(void)closure;
	return PyBool_FromLong(cl->closing || !cl->c);
}

static void client_dealloc(PyObject *self)
{
	struct pyfpgad_client *cl = (struct pyfpgad_client *)self;
	PyTypeObject *tp = Py_TYPE(self);
	freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);

	/* Channels hold a reference: none is open any more. */
	if (cl->c && cl->lock)
		client_disconnect(cl);
	if (cl->lock)
		PyThread_free_lock(cl->lock);
	PyMem_Free(cl->chans);
	Py_XDECREF(cl->url);
	tp_free(self);
	Py_DECREF(tp);
}

static PyMethodDef client_methods[] = {
	{ "close", client_close, METH_NOARGS,
	  "Close every channel and disconnect (once no frame view is alive)." },
	{ "status", client_status, METH_NOARGS, "fpgad's status, as a dict." },
	{ "clients", client_clients, METH_NOARGS, "Connected processes, as dicts." },
	{ "stats", client_stats, METH_VARARGS, "stats(name): a channel's counters, as a dict." },
	{ "reset", client_reset, METH_VARARGS, "reset(name): clear a FAILED channel." },
	{ "topology", client_topology, METH_NOARGS, "The card against every GPU, as a dict." },
	{ "open", (PyCFunction)(void (*)(void))client_open, METH_VARARGS | METH_KEYWORDS,
	  "open(name, shared=False, newest=False, poll_us=0) -> Channel" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef client_getset[] = {
	{ "server_software", client_get_server, NULL, "fpgad's software string.", NULL },
	{ "url", client_get_url, NULL, "The URL connected to.", NULL },
	{ "closed", client_get_closed, NULL, "Whether close() was called.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot client_slots[] = {
	{ Py_tp_doc, "A connection to fpgad (use fpgad.connect())." },
	{ Py_tp_dealloc, client_dealloc },
	{ Py_tp_methods, client_methods },
	{ Py_tp_getset, client_getset },
	{ 0, NULL },
};

static PyType_Spec client_spec = {
	.name = "fpgad._fpgad._Client",
	.basicsize = sizeof(struct pyfpgad_client),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = client_slots,
};

int pyfpgad_client_init_type(PyObject *m)
{
	pyfpgad_client_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &client_spec, NULL);
	if (!pyfpgad_client_type)
		return -1;
	Py_INCREF((PyObject *)pyfpgad_client_type);
	return PyModule_AddObject(m, "_Client", (PyObject *)pyfpgad_client_type);
}
