// SPDX-License-Identifier: MIT
/*
 * channel.c - fpgad.Channel: a leased channel (an fpgad_channel).  Taking
 * frames (wait, buffer, iteration) with the GIL let go while blocked and
 * Ctrl-C honoured, h2c submission, and closing: at once when no frame of
 * the channel is exported, else when the last export goes, so that no
 * tensor or view is left over an unmapped ring.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "pyfpgad.h"

PyTypeObject *pyfpgad_channel_type;

/*
 * A blocking wait gives the GIL back and looks at signals this often.  With
 * reconnect on, a slice that ends while fpgad leases the channel again
 * leaves nothing half done: libfpgad asks again in the next one.
 */
#define CHANNEL_SLICE_MS 100

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The CUDA device of @ch's ring in this process (DLPack's device). */
static void channel_device(struct pyfpgad_channel *ch)
{
	int r;

	ch->device_type = PYFPGAD_DEV_CPU;
	ch->device_id = 0;
	if (ch->info.memory != FPGAD_MEMORY_CUDA)
		return;
	ch->device_type = PYFPGAD_DEV_CUDA;
	r = pyfpgad_cuda_ordinal(fpgad_slot_data(ch->ch, 0), ch->info.gpu_bus_id);
	/* Without an answer, fpgad's ordinal: right unless they differ. */
	ch->device_id = r >= 0 ? r : (ch->info.gpu >= 0 ? ch->info.gpu : 0);
}

/* Size the per-slot table for @ch's current ring. */
static int channel_held_table(struct pyfpgad_channel *ch)
{
	struct pyfpgad_frame **held;

	held = PyMem_Calloc(ch->info.slots ? ch->info.slots : 1, sizeof(*held));
	if (!held) {
		PyErr_NoMemory();
		return -1;
	}
	PyMem_Free(ch->held);
	ch->held = held;
	return 0;
}

struct pyfpgad_channel *pyfpgad_channel_open(struct pyfpgad_client *cl, const char *name,
					     unsigned flags, bool newest, unsigned poll_us)
{
	struct pyfpgad_channel *ch;
	fpgad_channel *c = NULL;
	char what[64];
	int r;

	PyOS_snprintf(what, sizeof(what), "open %s", name);
	PYFPGAD_CLIENT_CALL(cl, r, fpgad_channel_open(cl->c, name, flags, &c), what);
	if (r < 0)
		return NULL;
	/* Nobody else has the new channel yet: no lock needed. */
	fpgad_channel_set_newest(c, newest);
	fpgad_channel_set_poll(c, poll_us);

	ch = (struct pyfpgad_channel *)PyType_GenericAlloc(pyfpgad_channel_type, 0);
	if (!ch)
		goto fail;
	ch->ch = c;
	fpgad_channel_get_info(c, &ch->info);
	ch->h2c = strcmp(ch->info.direction, "h2c") == 0;
	channel_device(ch);
	if (channel_held_table(ch) < 0 || pyfpgad_client_add_channel(cl, ch) < 0) {
		ch->ch = NULL;
		goto fail;
	}
	Py_INCREF((PyObject *)cl);
	ch->cl = cl;
	return ch;

fail:
	Py_XDECREF((PyObject *)ch);
	pyfpgad_client_lock(cl);
	fpgad_channel_close(c);
	pyfpgad_client_unlock(cl);
	return NULL;
}

void pyfpgad_channel_forget_frames(struct pyfpgad_channel *ch)
{
	for (uint32_t i = 0; ch->held && i < ch->info.slots; i++) {
		struct pyfpgad_frame *fr = ch->held[i];

		if (fr)
			fr->state = PYFPGAD_DONE;
		ch->held[i] = NULL;
	}
}

void pyfpgad_channel_maybe_close(struct pyfpgad_channel *ch)
{
	struct pyfpgad_client *cl = ch->cl;

	if (!ch->closing || ch->exported || !ch->ch)
		return;
	/* fpgad_channel_close() releases what is still held. */
	pyfpgad_channel_forget_frames(ch);
	pyfpgad_client_lock(cl);
	fpgad_channel_close(ch->ch);
	pyfpgad_client_unlock(cl);
	ch->ch = NULL;
	pyfpgad_client_channel_gone(cl, ch);
}

static PyObject *channel_close(PyObject *self, PyObject *unused)
{
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;

	(void)unused;
	if (ch->closing)
		Py_RETURN_NONE;
	ch->closing = true;
	for (uint32_t i = 0; ch->held && i < ch->info.slots; i++) {
		struct pyfpgad_frame *fr = ch->held[i];

		if (!fr)
			continue;
		if (fr->exports) {
			/* Its views keep the slot until they go. */
			if (fr->state == PYFPGAD_HELD)
				fr->state = PYFPGAD_PENDING;
		} else {
			/* Failures mean the lease is gone already. */
			pyfpgad_frame_release_now(fr);
		}
	}
	pyfpgad_channel_maybe_close(ch);
	Py_RETURN_NONE;
}

static bool channel_usable(struct pyfpgad_channel *ch)
{
	if (ch->ch && !ch->closing)
		return true;
	pyfpgad_raise_state(pyfpgad_closed_error, "channel %s is closed", ch->info.name);
	return false;
}

/* The ring was replaced (fpgad came back): frames of the old one are gone. */
static int channel_new_ring(struct pyfpgad_channel *ch)
{
	uint32_t old_slots = ch->info.slots;

	pyfpgad_channel_forget_frames(ch);
	ch->gen++;
	fpgad_channel_get_info(ch->ch, &ch->info);
	channel_device(ch);
	if (ch->info.slots != old_slots)
		return channel_held_table(ch);
	return 0;
}

/*
 * Take the next frame (or empty h2c buffer): wait up to @timeout_s seconds
 * (< 0: forever).  Iterating, a closed channel ends the iteration (NULL
 * without an exception) and a reconnect is ridden through.
 */
static PyObject *channel_take(struct pyfpgad_channel *ch, double timeout_s, bool iterating)
{
	struct pyfpgad_client *cl = ch->cl;
	uint64_t deadline = 0;
	struct fpgad_frame f;
	bool blocked;
	int r, slice;

	if (timeout_s > 0)
		deadline = now_ns() + (uint64_t)(timeout_s * 1e9);
	for (;;) {
		if (!ch->ch || ch->closing) {
			if (iterating)
				return NULL;
			return pyfpgad_raise_state(pyfpgad_closed_error, "channel %s is closed",
						   ch->info.name);
		}
		pyfpgad_client_lock(cl);
		if (!ch->ch) {
			pyfpgad_client_unlock(cl);
			continue;
		}
		/* A reopened ring would unmap the old one under live views. */
		blocked = pyfpgad_client_reconnect_blocked(cl, ch);
		if (blocked)
			fpgad_set_reconnect(cl->c, false);
		slice = timeout_s == 0 ? 0 : CHANNEL_SLICE_MS;
		if (deadline) {
			uint64_t now = now_ns();
			uint64_t left = deadline > now ? deadline - now : 0;

			if (left < (uint64_t)slice * 1000000u)
				slice = (int)((left + 999999u) / 1000000u);
		}
		/* A frame already there is taken without letting the GIL go. */
		r = fpgad_frame_wait(ch->ch, &f, 0);
		if (r == -ETIMEDOUT && slice > 0) {
			Py_BEGIN_ALLOW_THREADS
			r = fpgad_frame_wait(ch->ch, &f, slice);
			Py_END_ALLOW_THREADS
		}
		if (blocked)
			fpgad_set_reconnect(cl->c, true);
		if (r == 0) {
			pyfpgad_client_unlock(cl);
			break;
		}
		if (r == -ETIMEDOUT) {
			pyfpgad_client_unlock(cl);
			if (PyErr_CheckSignals() < 0)
				return NULL;
			if (timeout_s < 0 || (deadline && now_ns() < deadline))
				continue;
			return pyfpgad_raise(r, "wait", "no frame within the timeout");
		}
		if (r == -ESTALE) {
			pyfpgad_client_unlock(cl);
			if (channel_new_ring(ch) < 0)
				return NULL;
			if (iterating)
				continue;
			return pyfpgad_raise(r, "wait",
					     "fpgad came back and the channel was leased again: "
					     "every frame held before is gone");
		}
		if (r == -EPIPE && blocked) {
			pyfpgad_client_unlock(cl);
			return pyfpgad_raise(r, "wait",
					     "the lease ended (fpgad stopped?); frames of the old ring "
					     "still have live views (tensors, arrays): drop them and "
					     "wait again to reconnect");
		}
		pyfpgad_raise_client(cl, r, "wait");
		pyfpgad_client_unlock(cl);
		return NULL;
	}
	if (ch->closing) {
		/* Closed by another thread while this one waited. */
		if (ch->ch) {
			pyfpgad_client_lock(cl);
			fpgad_frame_release(ch->ch, &f);
			pyfpgad_client_unlock(cl);
		}
		if (iterating)
			return NULL;
		return pyfpgad_raise_state(pyfpgad_closed_error, "channel %s is closed",
					   ch->info.name);
	}
	return (PyObject *)pyfpgad_frame_new(ch, &f);
}

/* Seconds from None (forever) or a number >= 0. */
static int parse_timeout(PyObject *arg, double *ret)
{
	double t;

	if (!arg || arg == Py_None) {
		*ret = -1;
		return 0;
	}
	t = PyFloat_AsDouble(arg);
	if (t == -1 && PyErr_Occurred())
		return -1;
	if (!(t >= 0) || isinf(t)) {
		PyErr_SetString(PyExc_ValueError, "timeout must be None or a finite number >= 0");
		return -1;
	}
	*ret = t;
	return 0;
}

static PyObject *channel_wait(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "timeout", NULL };
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;
	PyObject *timeout = Py_None;
	double t;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:wait", kwlist, &timeout) ||
	    parse_timeout(timeout, &t) < 0 || !channel_usable(ch))
		return NULL;
	return channel_take(ch, t, false);
}

static PyObject *channel_buffer(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "timeout", NULL };
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;
	PyObject *timeout = Py_None;
	double t;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:buffer", kwlist, &timeout) ||
	    parse_timeout(timeout, &t) < 0 || !channel_usable(ch))
		return NULL;
	if (!ch->h2c)
		return PyErr_Format(PyExc_ValueError,
				    "buffer(): channel %s is c2h: take its frames with wait()",
				    ch->info.name);
	return channel_take(ch, t, false);
}

static PyObject *channel_submit(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "buffer", "length", "stream", NULL };
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;
	struct pyfpgad_client *cl = ch->cl;
	unsigned long long length;
	PyObject *obj, *stream = Py_None;
	struct pyfpgad_frame *fr;
	void *s = NULL;
	int r;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "OK|O:submit", kwlist, &obj, &length,
					 &stream) ||
	    !channel_usable(ch))
		return NULL;
	if (!PyObject_TypeCheck(obj, pyfpgad_frame_type))
		return PyErr_Format(PyExc_TypeError,
				    "submit(): buffer must be a Frame from buffer()");
	fr = (struct pyfpgad_frame *)obj;
	if (fr->ch != ch)
		return PyErr_Format(PyExc_ValueError, "submit(): the buffer is of another channel");
	if (!ch->h2c)
		return PyErr_Format(PyExc_ValueError, "submit(): channel %s is c2h", ch->info.name);
	if (length < 1 || length > ch->info.slot_size)
		return PyErr_Format(PyExc_ValueError,
				    "submit(): length %llu is not 1 to the slot size %llu", length,
				    (unsigned long long)ch->info.slot_size);
	if (!pyfpgad_frame_check_live(fr))
		return NULL;
	if (stream != Py_None && pyfpgad_stream_arg(stream, &s) < 0)
		return NULL;
	pyfpgad_client_lock(cl);
	if (stream == Py_None)
		r = fpgad_frame_submit(ch->ch, &fr->f, length);
	else
		r = fpgad_frame_submit_async(ch->ch, &fr->f, length, s);
	if (r < 0) {
		pyfpgad_raise_client(cl, r, "submit");
		pyfpgad_client_unlock(cl);
		return NULL;
	}
	pyfpgad_client_unlock(cl);
	fr->state = PYFPGAD_DONE;
	if (ch->held[fr->f.slot] == fr)
		ch->held[fr->f.slot] = NULL;
	Py_RETURN_NONE;
}

static PyObject *channel_events(PyObject *self, PyObject *unused)
{
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;
	uint32_t e;

	(void)unused;
	if (!channel_usable(ch))
		return NULL;
	pyfpgad_client_lock(ch->cl);
	e = fpgad_channel_events(ch->ch);
	pyfpgad_client_unlock(ch->cl);
	return PyLong_FromUnsignedLong(e);
}

static PyObject *channel_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	Py_INCREF(self);
	return self;
}

static PyObject *channel_exit(PyObject *self, PyObject *args)
{
	PyObject *r = channel_close(self, NULL);

	(void)args;
	if (!r)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_FALSE;
}

static PyObject *channel_iter(PyObject *self)
{
	Py_INCREF(self);
	return self;
}

static PyObject *channel_next(PyObject *self)
{
	return channel_take((struct pyfpgad_channel *)self, -1, true);
}

static PyObject *get_str(PyObject *self, void *closure)
{
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;

	return PyUnicode_FromString((const char *)&ch->info + (size_t)closure);
}

static PyObject *get_u64(PyObject *self, void *closure)
{
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;
	uint64_t v;

	memcpy(&v, (const char *)&ch->info + (size_t)closure, sizeof(v));
	return PyLong_FromUnsignedLongLong(v);
}

static PyObject *get_slots(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLong(((struct pyfpgad_channel *)self)->info.slots);
}

static PyObject *get_gpu(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromLong(((struct pyfpgad_channel *)self)->info.gpu);
}

static PyObject *get_memory(PyObject *self, void *closure)
{
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;

	(void)closure;
	return PyUnicode_FromString(ch->info.memory == FPGAD_MEMORY_CUDA ? "cuda" : "host");
}

static PyObject *get_device(PyObject *self, void *closure)
{
	(void)closure;
	return pyfpgad_dlpack_device((struct pyfpgad_channel *)self);
}

static PyObject *get_closed(PyObject *self, void *closure)
{
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;

	(void)closure;
	return PyBool_FromLong(ch->closing || !ch->ch);
}

static PyObject *get_exported(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLong(((struct pyfpgad_channel *)self)->exported);
}

static PyObject *get_host_copies(PyObject *self, void *closure)
{
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;

	(void)closure;
	return PyLong_FromUnsignedLongLong(ch->ch ? fpgad_channel_host_copies(ch->ch) : 0);
}

#define INFO_OFF(field) ((void *)offsetof(struct fpgad_channel_info, field))

static PyGetSetDef channel_getset[] = {
	{ "name", get_str, NULL, "The channel's name.", INFO_OFF(name) },
	{ "direction", get_str, NULL, "\"c2h\" (frames) or \"h2c\" (buffers for the card).",
	  INFO_OFF(direction) },
	{ "mode", get_str, NULL, "Transfer mode: \"host\", \"gpudirect\" or \"bounce\".",
	  INFO_OFF(mode) },
	{ "gpu_bus_id", get_str, NULL, "PCI bus id of the ring's GPU, \"\" when none or unknown.",
	  INFO_OFF(gpu_bus_id) },
	{ "memory", get_memory, NULL, "Where the ring lives: \"host\" or \"cuda\".", NULL },
	{ "slots", get_slots, NULL, "Ring slots.", NULL },
	{ "slot_size", get_u64, NULL, "Bytes between slots (an h2c buffer's capacity).",
	  INFO_OFF(slot_size) },
	{ "frame_size", get_u64, NULL, "The card's frame size in bytes.", INFO_OFF(frame_size) },
	{ "gpu", get_gpu, NULL, "fpgad's CUDA ordinal of the ring's GPU, -1 in host memory.",
	  NULL },
	{ "device", get_device, NULL,
	  "The DLPack device of its frames: (1, 0) host, (2, ordinal) CUDA.", NULL },
	{ "closed", get_closed, NULL, "Whether close() was called.", NULL },
	{ "exported", get_exported, NULL,
	  "Frames with live views (DLPack tensors, buffer views) right now.", NULL },
	{ "host_copies", get_host_copies, NULL,
	  "Copies to host memory made for verify() of GPU frames.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef channel_methods[] = {
	{ "wait", (PyCFunction)(void (*)(void))channel_wait, METH_VARARGS | METH_KEYWORDS,
	  "wait(timeout=None) -> Frame\n\n"
	  "The next frame (c2h) or empty buffer (h2c), waiting up to timeout seconds\n"
	  "(None: forever; 0: do not wait).  Raises fpgad.TimeoutError, LeaseLostError\n"
	  "(fpgad stopped or died), ReconnectedError (with reconnect=True: fpgad came\n"
	  "back and the channel was leased again; frames held before are gone)." },
	{ "buffer", (PyCFunction)(void (*)(void))channel_buffer, METH_VARARGS | METH_KEYWORDS,
	  "buffer(timeout=None) -> Frame\n\n"
	  "h2c: an empty buffer of slot_size bytes to fill (DLPack, or the buffer\n"
	  "protocol in host memory, writable), then hand over with submit()." },
	{ "submit", (PyCFunction)(void (*)(void))channel_submit, METH_VARARGS | METH_KEYWORDS,
	  "submit(buffer, length, stream=None)\n\n"
	  "h2c: hand length bytes of buffer to the card.  With stream (see\n"
	  "Frame.release), it goes when the GPU work queued there before is done.\n"
	  "The buffer is the card's from then on: tensors of it must not be written." },
	{ "events", channel_events, METH_NOARGS,
	  "events() -> int: FPGAD_EVENT_* bits fpgad raised since the last call." },
	{ "close", channel_close, METH_NOARGS,
	  "End the lease: frames without views are released now; with views alive\n"
	  "the lease and the mapping end when the last view goes." },
	{ "__enter__", channel_enter, METH_NOARGS, NULL },
	{ "__exit__", channel_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static void channel_dealloc(PyObject *self)
{
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;
	PyTypeObject *tp = Py_TYPE(self);
	freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);

	/* Frames hold a reference: none is alive, so none is exported. */
	ch->closing = true;
	if (ch->cl)
		pyfpgad_channel_maybe_close(ch);
	PyMem_Free(ch->held);
	Py_XDECREF((PyObject *)ch->cl);
	tp_free(self);
	Py_DECREF(tp);
}

static PyObject *channel_repr(PyObject *self)
{
	struct pyfpgad_channel *ch = (struct pyfpgad_channel *)self;

	return PyUnicode_FromFormat("<fpgad.Channel %s %s %s/%s, %u slots of %llu bytes%s>",
				    ch->info.name, ch->info.direction,
				    ch->info.memory == FPGAD_MEMORY_CUDA ? "cuda" : "host",
				    ch->info.mode, ch->info.slots,
				    (unsigned long long)ch->info.slot_size,
				    ch->closing ? ", closed" : "");
}

static PyType_Slot channel_slots[] = {
	{ Py_tp_doc, "A leased channel (Client.open()).  A context manager: leaving it\n"
		     "ends the lease.  Iterating yields frames until the channel is closed." },
	{ Py_tp_dealloc, channel_dealloc },
	{ Py_tp_repr, channel_repr },
	{ Py_tp_methods, channel_methods },
	{ Py_tp_getset, channel_getset },
	{ Py_tp_iter, channel_iter },
	{ Py_tp_iternext, channel_next },
	{ 0, NULL },
};

static PyType_Spec channel_spec = {
	.name = "fpgad.Channel",
	.basicsize = sizeof(struct pyfpgad_channel),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = channel_slots,
};

int pyfpgad_channel_init_type(PyObject *m)
{
	pyfpgad_channel_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &channel_spec, NULL);
	if (!pyfpgad_channel_type)
		return -1;
	Py_INCREF((PyObject *)pyfpgad_channel_type);
	return PyModule_AddObject(m, "Channel", (PyObject *)pyfpgad_channel_type);
}
