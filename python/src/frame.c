// SPDX-License-Identifier: MIT
/*
 * frame.c - fpgad.Frame: a frame (or an h2c buffer) held in a ring slot.
 * Its metadata, its release (at once, deferred while views of it are
 * alive, or ordered on a CUDA stream), its exports' accounting, and the
 * buffer protocol that host-memory frames offer.
 */
#include <errno.h>
#include <string.h>

#include "pyfpgad.h"

PyTypeObject *pyfpgad_frame_type;

struct pyfpgad_frame *pyfpgad_frame_new(struct pyfpgad_channel *ch,
					const struct fpgad_frame *f)
{
	struct pyfpgad_frame *fr;

	fr = (struct pyfpgad_frame *)PyType_GenericAlloc(pyfpgad_frame_type, 0);
	if (!fr) {
		/* Nobody else will give the slot back. */
		pyfpgad_client_lock(ch->cl);
		fpgad_frame_release(ch->ch, f);
		pyfpgad_client_unlock(ch->cl);
		return NULL;
	}
	Py_INCREF((PyObject *)ch);
	fr->ch = ch;
	fr->f = *f;
	fr->gen = ch->gen;
	fr->state = PYFPGAD_HELD;
	if (f->slot < ch->info.slots)
		ch->held[f->slot] = fr;
	return fr;
}

/* Whether @fr's slot is still this process's at the C level. */
static bool frame_in_ring(const struct pyfpgad_frame *fr)
{
	return fr->state != PYFPGAD_DONE && fr->ch->ch && fr->gen == fr->ch->gen;
}

bool pyfpgad_frame_check_live(struct pyfpgad_frame *fr)
{
	if (fr->state == PYFPGAD_HELD && frame_in_ring(fr))
		return true;
	if (fr->gen != fr->ch->gen)
		pyfpgad_raise_state(pyfpgad_released_error,
				    "frame %llu is gone: fpgad restarted and the ring was replaced",
				    (unsigned long long)fr->f.seq);
	else
		pyfpgad_raise_state(pyfpgad_released_error,
				    "frame %llu was released: its slot is no longer yours",
				    (unsigned long long)fr->f.seq);
	return false;
}

uint64_t pyfpgad_frame_extent(const struct pyfpgad_frame *fr)
{
	return fr->ch->h2c ? fr->ch->info.slot_size : fr->f.length;
}

bool pyfpgad_frame_readonly(const struct pyfpgad_frame *fr)
{
	return !fr->ch->h2c;
}

/* The slot is no longer held: forget it in the channel's table. */
static void frame_done(struct pyfpgad_frame *fr)
{
	struct pyfpgad_channel *ch = fr->ch;

	fr->state = PYFPGAD_DONE;
	if (fr->f.slot < ch->info.slots && ch->held && ch->held[fr->f.slot] == fr)
		ch->held[fr->f.slot] = NULL;
}

int pyfpgad_frame_release_now(struct pyfpgad_frame *fr)
{
	struct pyfpgad_channel *ch = fr->ch;
	int r = 0;

	if (!frame_in_ring(fr)) {
		fr->state = PYFPGAD_DONE;
		return 0;
	}
	pyfpgad_client_lock(ch->cl);
	r = fpgad_frame_release(ch->ch, &fr->f);
	pyfpgad_client_unlock(ch->cl);
	frame_done(fr);
	/* The lease is gone, and the frame with it. */
	return r == -EPIPE ? 0 : r;
}

void pyfpgad_frame_export_get(struct pyfpgad_frame *fr)
{
	if (fr->exports++ == 0)
		fr->ch->exported++;
}

void pyfpgad_frame_export_put(struct pyfpgad_frame *fr)
{
	struct pyfpgad_channel *ch = fr->ch;

	if (--fr->exports)
		return;
	ch->exported--;
	if (fr->state == PYFPGAD_PENDING && pyfpgad_frame_release_now(fr) < 0) {
		PyErr_SetString(PyExc_RuntimeWarning,
				"fpgad: a frame's deferred release failed");
		PyErr_WriteUnraisable((PyObject *)fr);
	}
	pyfpgad_channel_maybe_close(ch);
}

int pyfpgad_stream_arg(PyObject *o, void **ret_stream)
{
	unsigned long long addr;
	PyObject *v = NULL;
	void *s;

	if (PyLong_Check(o)) {
		Py_INCREF(o);
		v = o;
	} else if (PyObject_HasAttrString(o, "__cuda_stream__")) {
		PyObject *t = PyObject_CallMethod(o, "__cuda_stream__", NULL);

		if (!t)
			return -1;
		if (PyTuple_Check(t) && PyTuple_Size(t) == 2) {
			v = PyTuple_GetItem(t, 1);
			Py_XINCREF(v);
		}
		Py_DECREF(t);
	} else if (PyObject_HasAttrString(o, "cuda_stream")) {
		v = PyObject_GetAttrString(o, "cuda_stream");
	} else if (PyObject_HasAttrString(o, "ptr")) {
		v = PyObject_GetAttrString(o, "ptr");
	}
	if (!v || !PyLong_Check(v)) {
		Py_XDECREF(v);
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError,
					"stream must be an int (a cudaStream_t), a torch.cuda.Stream, "
					"a cupy Stream, or have __cuda_stream__, cuda_stream or ptr");
		return -1;
	}
	addr = PyLong_AsUnsignedLongLong(v);
	Py_DECREF(v);
	if (addr == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_SetString(PyExc_ValueError, "stream: not an address (negative or too large)");
		return -1;
	}
	s = (void *)(uintptr_t)addr;
	*ret_stream = s;
	return 0;
}

static PyObject *frame_release(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "stream", NULL };
	struct pyfpgad_frame *fr = (struct pyfpgad_frame *)self;
	struct pyfpgad_channel *ch = fr->ch;
	PyObject *stream = Py_None;
	void *s = NULL;
	int r;

	if (args && !PyArg_ParseTupleAndKeywords(args, kwds, "|O:release", kwlist, &stream))
		return NULL;
	if (fr->state != PYFPGAD_HELD)
		Py_RETURN_NONE;
	if (!frame_in_ring(fr)) {
		fr->state = PYFPGAD_DONE;
		Py_RETURN_NONE;
	}
	if (stream == Py_None) {
		if (fr->exports) {
			fr->state = PYFPGAD_PENDING;
			Py_RETURN_NONE;
		}
		r = pyfpgad_frame_release_now(fr);
		if (r < 0)
			return pyfpgad_raise(r, "release", NULL);
		Py_RETURN_NONE;
	}
	if (pyfpgad_stream_arg(stream, &s) < 0)
		return NULL;
	pyfpgad_client_lock(ch->cl);
	r = fpgad_frame_release_async(ch->ch, &fr->f, s);
	if (r < 0) {
		pyfpgad_raise_client(ch->cl, r, "release on a stream");
		pyfpgad_client_unlock(ch->cl);
		return NULL;
	}
	pyfpgad_client_unlock(ch->cl);
	frame_done(fr);
	Py_RETURN_NONE;
}

static PyObject *frame_verify(PyObject *self, PyObject *unused)
{
	struct pyfpgad_frame *fr = (struct pyfpgad_frame *)self;
	struct pyfpgad_channel *ch = fr->ch;
	int r;

	(void)unused;
	if (!pyfpgad_frame_check_live(fr))
		return NULL;
	pyfpgad_client_lock(ch->cl);
	Py_BEGIN_ALLOW_THREADS
	r = fpgad_frame_verify(ch->ch, &fr->f);
	Py_END_ALLOW_THREADS
	pyfpgad_client_unlock(ch->cl);
	if (r == 0)
		Py_RETURN_TRUE;
	if (r == -EBADMSG)
		Py_RETURN_FALSE;
	return pyfpgad_raise(r, "verify",
			     r == -ENODATA ? "the frame carries no CRC to check" : NULL);
}

static PyObject *frame_write(PyObject *self, PyObject *args)
{
	struct pyfpgad_frame *fr = (struct pyfpgad_frame *)self;
	struct pyfpgad_channel *ch = fr->ch;
	Py_buffer src;
	int r;

	if (!PyArg_ParseTuple(args, "y*:write", &src))
		return NULL;
	if (!ch->h2c) {
		PyBuffer_Release(&src);
		return PyErr_Format(PyExc_ValueError, "write(): frames of c2h channel %s are read-only",
				    ch->info.name);
	}
	if ((uint64_t)src.len > ch->info.slot_size) {
		PyBuffer_Release(&src);
		return PyErr_Format(PyExc_ValueError, "write(): %zd bytes do not fit a slot of %llu",
				    src.len, (unsigned long long)ch->info.slot_size);
	}
	if (!pyfpgad_frame_check_live(fr)) {
		PyBuffer_Release(&src);
		return NULL;
	}
	pyfpgad_client_lock(ch->cl);
	Py_BEGIN_ALLOW_THREADS
	r = fpgad_frame_write(ch->ch, &fr->f, src.buf, (uint64_t)src.len);
	Py_END_ALLOW_THREADS
	pyfpgad_client_unlock(ch->cl);
	PyBuffer_Release(&src);
	if (r < 0)
		return pyfpgad_raise(r, "write", NULL);
	return PyLong_FromSsize_t(src.len);
}

static PyObject *frame_view(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "dtype", "shape", "offset", NULL };
	PyObject *dtype, *shape = Py_None;
	unsigned long long offset = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OK:view", kwlist, &dtype, &shape,
					 &offset))
		return NULL;
	return pyfpgad_view_new((struct pyfpgad_frame *)self, dtype, shape, offset);
}

static PyObject *frame_dlpack(PyObject *self, PyObject *args, PyObject *kwds)
{
	struct pyfpgad_frame *fr = (struct pyfpgad_frame *)self;
	Py_ssize_t n = (Py_ssize_t)pyfpgad_frame_extent(fr);

	return pyfpgad_dlpack_call(fr, args, kwds, 0, 1, 8, 1, &n);
}

static PyObject *frame_dlpack_device(PyObject *self, PyObject *unused)
{
	(void)unused;
	return pyfpgad_dlpack_device(((struct pyfpgad_frame *)self)->ch);
}

static PyObject *frame_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	Py_INCREF(self);
	return self;
}

static PyObject *frame_exit(PyObject *self, PyObject *args)
{
	PyObject *r = frame_release(self, NULL, NULL);

	(void)args;
	if (!r)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_FALSE;
}

int pyfpgad_getbuffer(struct pyfpgad_frame *fr, PyObject *exporter, Py_buffer *view,
		      int flags, uint64_t offset, uint64_t nbytes, Py_ssize_t itemsize,
		      const char *format, int ndim, Py_ssize_t *shape, Py_ssize_t *strides)
{
	struct pyfpgad_channel *ch = fr->ch;
	bool ro = pyfpgad_frame_readonly(fr);

	view->obj = NULL;
	if (!pyfpgad_frame_check_live(fr))
		return -1;
	if (ch->device_type != PYFPGAD_DEV_CPU) {
		PyErr_Format(PyExc_BufferError,
			     "frame in GPU memory (channel %s): take it with DLPack "
			     "(torch.from_dlpack, cupy.from_dlpack)", ch->info.name);
		return -1;
	}
	if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && ro) {
		PyErr_Format(PyExc_BufferError, "frames of c2h channel %s are read-only",
			     ch->info.name);
		return -1;
	}
	view->buf = (char *)fr->f.data + offset;
	view->len = (Py_ssize_t)nbytes;
	view->readonly = ro;
	view->itemsize = itemsize;
	view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? (char *)format : NULL;
	view->ndim = ndim;
	if (!shape) {
		shape = &view->len;
		strides = &view->itemsize;
	}
	view->shape = (flags & PyBUF_ND) == PyBUF_ND ? shape : NULL;
	view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? strides : NULL;
	view->suboffsets = NULL;
	view->internal = NULL;
	Py_INCREF(exporter);
	view->obj = exporter;
	pyfpgad_frame_export_get(fr);
	return 0;
}

static int frame_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
	struct pyfpgad_frame *fr = (struct pyfpgad_frame *)self;

	return pyfpgad_getbuffer(fr, self, view, flags, 0, pyfpgad_frame_extent(fr), 1, "B", 1,
				 NULL, NULL);
}

static void frame_releasebuffer(PyObject *self, Py_buffer *view)
{
	(void)view;
	pyfpgad_frame_export_put((struct pyfpgad_frame *)self);
}

#define FRAME_U64(field) ((void *)offsetof(struct fpgad_frame, field))

static PyObject *get_u64(PyObject *self, void *closure)
{
	struct pyfpgad_frame *fr = (struct pyfpgad_frame *)self;
	uint64_t v;

	memcpy(&v, (const char *)&fr->f + (size_t)closure, sizeof(v));
	return PyLong_FromUnsignedLongLong(v);
}

static PyObject *get_slot(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLong(((struct pyfpgad_frame *)self)->f.slot);
}

static PyObject *get_flags(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLong(((struct pyfpgad_frame *)self)->f.flags);
}

static PyObject *get_flag(PyObject *self, void *closure)
{
	return PyBool_FromLong(((struct pyfpgad_frame *)self)->f.flags & (uintptr_t)closure);
}

static PyObject *get_ptr(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromVoidPtr(((struct pyfpgad_frame *)self)->f.data);
}

static PyObject *get_nbytes(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLongLong(pyfpgad_frame_extent((struct pyfpgad_frame *)self));
}

static PyObject *get_state(PyObject *self, void *closure)
{
	struct pyfpgad_frame *fr = (struct pyfpgad_frame *)self;

	(void)closure;
	if (fr->state == PYFPGAD_HELD && !frame_in_ring(fr))
		fr->state = PYFPGAD_DONE;
	return PyUnicode_FromString(fr->state == PYFPGAD_HELD ? "held" :
				    fr->state == PYFPGAD_PENDING ? "pending" : "released");
}

static PyObject *get_exports(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLong(((struct pyfpgad_frame *)self)->exports);
}

static PyObject *get_channel(PyObject *self, void *closure)
{
	PyObject *ch = (PyObject *)((struct pyfpgad_frame *)self)->ch;

	(void)closure;
	Py_INCREF(ch);
	return ch;
}

static PyGetSetDef frame_getset[] = {
	{ "seq", get_u64, NULL, "The card's frame number; a gap means lost frames.",
	  FRAME_U64(seq) },
	{ "slot", get_slot, NULL, "The ring slot it occupies.", NULL },
	{ "flags", get_flags, NULL, "FRAME_F_* bits.", NULL },
	{ "error", get_flag, NULL, "The card or fpgad flagged it bad (FRAME_F_ERROR).",
	  (void *)(uintptr_t)FPGAD_FRAME_F_ERROR },
	{ "truncated", get_flag, NULL, "Cut short by the slot (FRAME_F_TRUNCATED).",
	  (void *)(uintptr_t)FPGAD_FRAME_F_TRUNCATED },
	{ "dropped_before", get_flag, NULL, "Frames were lost just before it: see lost.",
	  (void *)(uintptr_t)FPGAD_FRAME_F_DROPPED_BEFORE },
	{ "length", get_u64, NULL, "Valid bytes (0 for an h2c buffer).", FRAME_U64(length) },
	{ "nbytes", get_nbytes, NULL,
	  "Bytes its views cover: length, or slot_size for an h2c buffer.", NULL },
	{ "t_dma_start_ns", get_u64, NULL, "DMA start, CLOCK_MONOTONIC ns.",
	  FRAME_U64(t_dma_start_ns) },
	{ "t_dma_end_ns", get_u64, NULL, "DMA end, CLOCK_MONOTONIC ns.", FRAME_U64(t_dma_end_ns) },
	{ "t_publish_ns", get_u64, NULL, "When fpgad published it, CLOCK_MONOTONIC ns.",
	  FRAME_U64(t_publish_ns) },
	{ "t_sender_start_ns", get_u64, NULL,
	  "When the sender started the frame, ns of the sender's clock (PTP time when\n"
	  "it runs PTP); 0 when the source gives none (the sim, the XDMA card).",
	  FRAME_U64(t_sender_start_ns) },
	{ "t_sender_end_ns", get_u64, NULL,
	  "When the sender ended the frame, as t_sender_start_ns.",
	  FRAME_U64(t_sender_end_ns) },
	{ "skipped", get_u64, NULL, "Older frames released unread (newest=True).",
	  FRAME_U64(skipped) },
	{ "lost", get_u64, NULL, "Frames missing just before this one, as this process saw them.",
	  FRAME_U64(lost) },
	{ "ptr", get_ptr, NULL, "Address of its first byte (host, or CUDA device pointer).",
	  NULL },
	{ "state", get_state, NULL,
	  "\"held\"; \"pending\" (released while views are alive: the slot goes back\n"
	  "when they do); \"released\".", NULL },
	{ "exports", get_exports, NULL, "Live DLPack tensors and buffer views of it.", NULL },
	{ "channel", get_channel, NULL, "The Channel it came from.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef frame_methods[] = {
	{ "release", (PyCFunction)(void (*)(void))frame_release, METH_VARARGS | METH_KEYWORDS,
	  "release(stream=None)\n\n"
	  "Give the slot back to fpgad.  Without a stream: now, or, while DLPack\n"
	  "tensors or buffer views of the frame are alive, when the last of them\n"
	  "goes (state \"pending\"), so a view never sees the slot reused.  With a\n"
	  "stream (an int cudaStream_t address, torch.cuda.Stream, cupy Stream, or an\n"
	  "object with __cuda_stream__, cuda_stream or ptr): when the GPU reaches\n"
	  "this point of the stream; the CPU does not wait, and GPU work queued on\n"
	  "any stream after that must not read the frame.  New views raise\n"
	  "ReleasedError either way.  Releasing twice does nothing." },
	{ "verify", frame_verify, METH_NOARGS,
	  "verify() -> bool\n\n"
	  "Check the payload against the CRC-32C in the sim frame header: True\n"
	  "when it matches.  GPU frames are copied to the host for it.  Raises\n"
	  "NoDataError when the frame carries no CRC." },
	{ "write", frame_write, METH_VARARGS,
	  "write(data) -> int\n\n"
	  "h2c: copy bytes-like data into the buffer from its start (host or GPU\n"
	  "memory); returns the bytes written." },
	{ "view", (PyCFunction)(void (*)(void))frame_view, METH_VARARGS | METH_KEYWORDS,
	  "view(dtype, shape=None, offset=0) -> FrameView\n\n"
	  "A typed view of the frame for DLPack (and the buffer protocol in host\n"
	  "memory): dtype a name (\"float32\"), numpy or torch dtype; shape an int\n"
	  "or a tuple, one -1 allowed, default all that fits after offset." },
	{ "__dlpack__", (PyCFunction)(void (*)(void))frame_dlpack, METH_VARARGS | METH_KEYWORDS,
	  "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n\n"
	  "A DLPack capsule of the frame in place: uint8, nbytes long." },
	{ "__dlpack_device__", frame_dlpack_device, METH_NOARGS,
	  "(1, 0) for host memory, (2, ordinal) for CUDA memory." },
	{ "__enter__", frame_enter, METH_NOARGS, NULL },
	{ "__exit__", frame_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyObject *frame_repr(PyObject *self)
{
	struct pyfpgad_frame *fr = (struct pyfpgad_frame *)self;
	PyObject *st = get_state(self, NULL), *r;

	if (!st)
		return NULL;
	r = PyUnicode_FromFormat("<fpgad.Frame %s seq %llu slot %u, %llu bytes, %U>",
				 fr->ch->info.name, (unsigned long long)fr->f.seq, fr->f.slot,
				 (unsigned long long)pyfpgad_frame_extent(fr), st);
	Py_DECREF(st);
	return r;
}

static void frame_dealloc(PyObject *self)
{
	struct pyfpgad_frame *fr = (struct pyfpgad_frame *)self;
	PyTypeObject *tp = Py_TYPE(self);
	freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);

	/* Exports hold a reference: none is alive.  An unreleased frame goes back. */
	if (fr->ch) {
		if (pyfpgad_frame_release_now(fr) < 0)
			PyErr_Clear();
		Py_DECREF((PyObject *)fr->ch);
	}
	tp_free(self);
	Py_DECREF(tp);
}

static PyType_Slot frame_slots[] = {
	{ Py_tp_doc, "A frame held in a ring slot (Channel.wait()), or an h2c buffer\n"
		     "(Channel.buffer()).  A context manager: leaving it releases it.\n"
		     "torch.from_dlpack(frame) / cupy.from_dlpack(frame) see the slot in\n"
		     "place as uint8; in host memory, memoryview(frame) and\n"
		     "numpy.frombuffer(frame, numpy.uint8) too (read-only for c2h).  A frame\n"
		     "that is garbage collected unreleased is released." },
	{ Py_tp_dealloc, frame_dealloc },
	{ Py_tp_repr, frame_repr },
	{ Py_tp_methods, frame_methods },
	{ Py_tp_getset, frame_getset },
	{ Py_bf_getbuffer, frame_getbuffer },
	{ Py_bf_releasebuffer, frame_releasebuffer },
	{ 0, NULL },
};

static PyType_Spec frame_spec = {
	.name = "fpgad.Frame",
	.basicsize = sizeof(struct pyfpgad_frame),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = frame_slots,
};

int pyfpgad_frame_init_type(PyObject *m)
{
	pyfpgad_frame_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &frame_spec, NULL);
	if (!pyfpgad_frame_type)
		return -1;
	Py_INCREF((PyObject *)pyfpgad_frame_type);
	return PyModule_AddObject(m, "Frame", (PyObject *)pyfpgad_frame_type);
}
