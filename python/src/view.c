// SPDX-License-Identifier: MIT
/*
 * view.c - fpgad.FrameView: a frame seen with a data type, a shape and a
 * byte offset (Frame.view()), for DLPack and, in host memory, the buffer
 * protocol.  It keeps its frame alive and follows its release rules.
 */
#include <stdio.h>
#include <string.h>

#include "pyfpgad.h"

PyTypeObject *pyfpgad_view_type;

struct dtype_info {
	const char *name;
	uint8_t code, bits;
	const char *format;	/* struct module format, "" when it has none */
};

static const struct dtype_info dtypes[] = {
	{ "uint8", 1, 8, "B" },		{ "int8", 0, 8, "b" },
	{ "uint16", 1, 16, "H" },	{ "int16", 0, 16, "h" },
	{ "uint32", 1, 32, "I" },	{ "int32", 0, 32, "i" },
	{ "uint64", 1, 64, "Q" },	{ "int64", 0, 64, "q" },
	{ "float16", 2, 16, "e" },	{ "float32", 2, 32, "f" },
	{ "float64", 2, 64, "d" },	{ "bfloat16", 4, 16, "" },
	{ "complex64", 5, 64, "Zf" },	{ "complex128", 5, 128, "Zd" },
	{ "bool", 6, 8, "?" },
};

/* The dtype named by @o: a str, a numpy/torch dtype or scalar type. */
static const struct dtype_info *dtype_parse(PyObject *o)
{
	PyObject *name;
	const char *s;

	if (PyUnicode_Check(o)) {
		Py_INCREF(o);
		name = o;
	} else if (PyType_Check(o)) {
		name = PyObject_GetAttrString(o, "__name__");
	} else {
		name = PyObject_Str(o);
	}
	if (!name)
		return NULL;
	s = PyUnicode_AsUTF8AndSize(name, NULL);
	if (!s) {
		Py_DECREF(name);
		return NULL;
	}
	if (!strncmp(s, "torch.", 6))
		s += 6;
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
		if (!strcmp(s, dtypes[i].name)) {
			Py_DECREF(name);
			return &dtypes[i];
		}
	}
	PyErr_Format(PyExc_TypeError,
		     "view(): unknown dtype %R: one of uint8-64, int8-64, float16, "
		     "float32, float64, bfloat16, complex64, complex128, bool", name);
	Py_DECREF(name);
	return NULL;
}

/* @shape (None, an int or a sequence, one -1 allowed) over @avail elements. */
static int shape_parse(PyObject *shape, uint64_t avail, struct pyfpgad_view *v)
{
	PyObject *seq;
	uint64_t known = 1;
	int infer = -1;
	Py_ssize_t n;

	if (shape == Py_None) {
		v->ndim = 1;
		v->shape[0] = (Py_ssize_t)avail;
		return 0;
	}
	if (PyLong_Check(shape))
		seq = PyTuple_Pack(1, shape);
	else
		seq = PySequence_Tuple(shape);
	if (!seq)
		return -1;
	n = PyTuple_Size(seq);
	if (n < 1 || n > PYFPGAD_MAX_DIMS) {
		PyErr_Format(PyExc_ValueError, "view(): shape needs 1 to %d dimensions",
			     PYFPGAD_MAX_DIMS);
		goto fail;
	}
	v->ndim = (int)n;
	for (Py_ssize_t i = 0; i < n; i++) {
		long long d = PyLong_AsLongLong(PyTuple_GetItem(seq, i));

		if (d == -1 && PyErr_Occurred())
			goto fail;
		if (d == -1 && infer < 0) {
			infer = (int)i;
			v->shape[i] = 0;
			continue;
		}
		if (d < 0) {
			PyErr_SetString(PyExc_ValueError,
					"view(): dimensions are >= 0, with at most one -1");
			goto fail;
		}
		v->shape[i] = (Py_ssize_t)d;
		if (d && known > avail / (uint64_t)d)
			known = avail + 1;	/* too large: caught below */
		else
			known *= (uint64_t)d;
	}
	if (infer >= 0) {
		if (!known || avail % known) {
			PyErr_Format(PyExc_ValueError,
				     "view(): %llu elements do not divide into the shape",
				     (unsigned long long)avail);
			goto fail;
		}
		v->shape[infer] = (Py_ssize_t)(avail / known);
		known = avail;
	}
	if (known > avail) {
		PyErr_Format(PyExc_ValueError,
			     "view(): the shape needs more than the %llu elements there",
			     (unsigned long long)avail);
		goto fail;
	}
	Py_DECREF(seq);
	return 0;
fail:
	Py_DECREF(seq);
	return -1;
}

PyObject *pyfpgad_view_new(struct pyfpgad_frame *fr, PyObject *dtype, PyObject *shape,
			   unsigned long long offset)
{
	const struct dtype_info *dt = dtype_parse(dtype);
	uint64_t extent = pyfpgad_frame_extent(fr), elems = 1;
	struct pyfpgad_view *v;
	Py_ssize_t stride;

	if (!dt || !pyfpgad_frame_check_live(fr))
		return NULL;
	if (offset > extent || offset % (dt->bits / 8))
		return PyErr_Format(PyExc_ValueError,
				    "view(): offset %llu is not a multiple of %u within %llu bytes",
				    offset, dt->bits / 8, (unsigned long long)extent);
	v = (struct pyfpgad_view *)PyType_GenericAlloc(pyfpgad_view_type, 0);
	if (!v)
		return NULL;
	v->itemsize = dt->bits / 8;
	if (shape_parse(shape, (extent - offset) / (uint64_t)v->itemsize, v) < 0) {
		Py_DECREF((PyObject *)v);
		return NULL;
	}
	Py_INCREF((PyObject *)fr);
	v->fr = fr;
	v->offset = offset;
	v->code = dt->code;
	v->bits = dt->bits;
	snprintf(v->format, sizeof(v->format), "%s", dt->format);
	stride = v->itemsize;
	for (int i = v->ndim - 1; i >= 0; i--) {
		v->strides[i] = stride;
		stride *= v->shape[i];
		elems *= (uint64_t)v->shape[i];
	}
	v->nbytes = elems * (uint64_t)v->itemsize;
	return (PyObject *)v;
}

static PyObject *view_dlpack(PyObject *self, PyObject *args, PyObject *kwds)
{
	struct pyfpgad_view *v = (struct pyfpgad_view *)self;

	return pyfpgad_dlpack_call(v->fr, args, kwds, v->offset, v->code, v->bits, v->ndim,
				   v->shape);
}

static PyObject *view_dlpack_device(PyObject *self, PyObject *unused)
{
	(void)unused;
	return pyfpgad_dlpack_device(((struct pyfpgad_view *)self)->fr->ch);
}

static int view_getbuffer(PyObject *self, Py_buffer *buf, int flags)
{
	struct pyfpgad_view *v = (struct pyfpgad_view *)self;

	if (!v->format[0]) {
		buf->obj = NULL;
		PyErr_SetString(PyExc_BufferError,
				"bfloat16 has no buffer-protocol format: use DLPack");
		return -1;
	}
	return pyfpgad_getbuffer(v->fr, self, buf, flags, v->offset, v->nbytes, v->itemsize,
				 v->format, v->ndim, v->shape, v->strides);
}

static void view_releasebuffer(PyObject *self, Py_buffer *buf)
{
	(void)buf;
	pyfpgad_frame_export_put(((struct pyfpgad_view *)self)->fr);
}

static PyObject *view_get_shape(PyObject *self, void *closure)
{
	struct pyfpgad_view *v = (struct pyfpgad_view *)self;
	PyObject *t = PyTuple_New(v->ndim);

	(void)closure;
	for (int i = 0; t && i < v->ndim; i++) {
		PyObject *d = PyLong_FromSsize_t(v->shape[i]);

		if (!d || PyTuple_SetItem(t, i, d) < 0) {
			Py_CLEAR(t);
			break;
		}
	}
	return t;
}

static PyObject *view_get_dtype(PyObject *self, void *closure)
{
	struct pyfpgad_view *v = (struct pyfpgad_view *)self;

	(void)closure;
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (dtypes[i].code == v->code && dtypes[i].bits == v->bits)
			return PyUnicode_FromString(dtypes[i].name);
	Py_RETURN_NONE;
}

static PyObject *view_get_offset(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLongLong(((struct pyfpgad_view *)self)->offset);
}

static PyObject *view_get_nbytes(PyObject *self, void *closure)
{
	(void)closure;
	return PyLong_FromUnsignedLongLong(((struct pyfpgad_view *)self)->nbytes);
}

static PyObject *view_get_frame(PyObject *self, void *closure)
{
	PyObject *fr = (PyObject *)((struct pyfpgad_view *)self)->fr;

	(void)closure;
	Py_INCREF((PyObject *)fr);
	return fr;
}

static PyGetSetDef view_getset[] = {
	{ "shape", view_get_shape, NULL, "The shape, a tuple.", NULL },
	{ "dtype", view_get_dtype, NULL, "The element type's name.", NULL },
	{ "offset", view_get_offset, NULL, "Byte offset into the frame.", NULL },
	{ "nbytes", view_get_nbytes, NULL, "Bytes covered.", NULL },
	{ "frame", view_get_frame, NULL, "The Frame viewed.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyMethodDef view_methods[] = {
	{ "__dlpack__", (PyCFunction)(void (*)(void))view_dlpack, METH_VARARGS | METH_KEYWORDS,
	  "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)" },
	{ "__dlpack_device__", view_dlpack_device, METH_NOARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static void view_dealloc(PyObject *self)
{
	struct pyfpgad_view *v = (struct pyfpgad_view *)self;
	PyTypeObject *tp = Py_TYPE(self);
	freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);

	Py_XDECREF((PyObject *)v->fr);
	tp_free(self);
	Py_DECREF(tp);
}

static PyType_Slot view_slots[] = {
	{ Py_tp_doc, "A typed view of a frame (Frame.view()): DLPack, and the buffer\n"
		     "protocol in host memory.  It follows its frame: made after the\n"
		     "frame's release, a tensor or buffer raises ReleasedError." },
	{ Py_tp_dealloc, view_dealloc },
	{ Py_tp_methods, view_methods },
	{ Py_tp_getset, view_getset },
	{ Py_bf_getbuffer, view_getbuffer },
	{ Py_bf_releasebuffer, view_releasebuffer },
	{ 0, NULL },
};

static PyType_Spec view_spec = {
	.name = "fpgad.FrameView",
	.basicsize = sizeof(struct pyfpgad_view),
	.flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
	.slots = view_slots,
};

int pyfpgad_view_init_type(PyObject *m)
{
	pyfpgad_view_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &view_spec, NULL);
	if (!pyfpgad_view_type)
		return -1;
	Py_INCREF((PyObject *)pyfpgad_view_type);
	return PyModule_AddObject(m, "FrameView", (PyObject *)pyfpgad_view_type);
}
