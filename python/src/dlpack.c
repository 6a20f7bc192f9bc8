// SPDX-License-Identifier: MIT
/*
 * dlpack.c - frames as DLPack tensors: the DLPack structures (from the
 * public DLPack specification, 0.8 unversioned and 1.x versioned), the
 * capsules __dlpack__ returns, and the deleter that lets go of the frame
 * once the consuming framework is done with the tensor.
 */
#include <stdlib.h>
#include <string.h>

#include "pyfpgad.h"

/* --- the DLPack ABI ----------------------------------------------------------- */

typedef struct {
	int32_t device_type;	/* DLDeviceType: kDLCPU 1, kDLCUDA 2 */
	int32_t device_id;
} DLDevice;

typedef struct {
	uint8_t code;		/* kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4,
				   kDLComplex 5, kDLBool 6 */
	uint8_t bits;
	uint16_t lanes;
} DLDataType;

typedef struct {
	void *data;
	DLDevice device;
	int32_t ndim;
	DLDataType dtype;
	int64_t *shape;
	int64_t *strides;	/* in elements */
	uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
	DLTensor dl_tensor;
	void *manager_ctx;
	void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct {
	uint32_t major;
	uint32_t minor;
} DLPackVersion;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1ull << 0)

typedef struct DLManagedTensorVersioned {
	DLPackVersion version;
	void *manager_ctx;
	void (*deleter)(struct DLManagedTensorVersioned *self);
	uint64_t flags;
	DLTensor dl_tensor;
} DLManagedTensorVersioned;

_Static_assert(sizeof(DLDevice) == 8, "DLDevice");
_Static_assert(sizeof(DLDataType) == 4, "DLDataType");
_Static_assert(sizeof(DLTensor) == 48, "DLTensor");
_Static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) == 32, "versioned layout");

#define CAPSULE_NAME "dltensor"
#define CAPSULE_NAME_VERSIONED "dltensor_versioned"
#define DLPACK_MAJOR 1
#define DLPACK_MINOR 0

/* --- export -------------------------------------------------------------------- */

/* One allocation: the managed tensor, then shape and strides. */
struct export_block {
	union {
		DLManagedTensor plain;
		DLManagedTensorVersioned versioned;
	} t;
	int64_t dims[2 * PYFPGAD_MAX_DIMS];
};

/*
 * The framework is done with the tensor (from any thread): let go of the
 * frame under the GIL.  At interpreter exit the frame is left alone: the
 * process's end ends the lease.
 */
static void export_done(struct export_block *b, struct pyfpgad_frame *fr)
{
	if (fr && Py_IsInitialized()) {
		PyGILState_STATE g = PyGILState_Ensure();

		pyfpgad_frame_export_put(fr);
		Py_DECREF((PyObject *)fr);
		PyGILState_Release(g);
	}
	free(b);
}

static void deleter_plain(DLManagedTensor *t)
{
	export_done((struct export_block *)t, t->manager_ctx);
}

static void deleter_versioned(DLManagedTensorVersioned *t)
{
	export_done((struct export_block *)t, t->manager_ctx);
}

/* An unconsumed capsule dies: it still owns the tensor. */
static void capsule_destructor(PyObject *cap)
{
	PyObject *type, *value, *tb;

	PyErr_Fetch(&type, &value, &tb);
	if (PyCapsule_IsValid(cap, CAPSULE_NAME)) {
		DLManagedTensor *t = PyCapsule_GetPointer(cap, CAPSULE_NAME);

		if (t && t->deleter)
			t->deleter(t);
	} else if (PyCapsule_IsValid(cap, CAPSULE_NAME_VERSIONED)) {
		DLManagedTensorVersioned *t = PyCapsule_GetPointer(cap, CAPSULE_NAME_VERSIONED);

		if (t && t->deleter)
			t->deleter(t);
	}
	PyErr_Restore(type, value, tb);
}

PyObject *pyfpgad_dlpack_export(struct pyfpgad_frame *fr, uint64_t offset, uint8_t code,
				uint8_t bits, int ndim, const Py_ssize_t *shape,
				bool versioned)
{
	struct pyfpgad_channel *ch = fr->ch;
	struct export_block *b;
	DLTensor *dl;
	PyObject *cap;
	int64_t stride = 1;

	if (!pyfpgad_frame_check_live(fr))
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return PyErr_NoMemory();
	dl = versioned ? &b->t.versioned.dl_tensor : &b->t.plain.dl_tensor;
	dl->data = (char *)fr->f.data + offset;
	dl->device.device_type = ch->device_type;
	dl->device.device_id = ch->device_id;
	dl->ndim = ndim;
	dl->dtype.code = code;
	dl->dtype.bits = bits;
	dl->dtype.lanes = 1;
	dl->shape = b->dims;
	dl->strides = b->dims + PYFPGAD_MAX_DIMS;
	for (int i = ndim - 1; i >= 0; i--) {
		dl->shape[i] = shape[i];
		dl->strides[i] = stride;
		stride *= shape[i] > 0 ? shape[i] : 1;
	}
	dl->byte_offset = 0;
	if (versioned) {
		b->t.versioned.version.major = DLPACK_MAJOR;
		b->t.versioned.version.minor = DLPACK_MINOR;
		b->t.versioned.manager_ctx = fr;
		b->t.versioned.deleter = deleter_versioned;
		/*
		 * Read-only where the mapping is (c2h host memory: a write would
		 * fault).  GPU slots can be written, so consumers that refuse
		 * read-only tensors still take them; writing one is a bug all
		 * the same.
		 */
		if (pyfpgad_frame_readonly(fr) && ch->device_type == PYFPGAD_DEV_CPU)
			b->t.versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
	} else {
		b->t.plain.manager_ctx = fr;
		b->t.plain.deleter = deleter_plain;
	}
	cap = PyCapsule_New(b, versioned ? CAPSULE_NAME_VERSIONED : CAPSULE_NAME,
			    capsule_destructor);
	if (!cap) {
		free(b);
		return NULL;
	}
	Py_INCREF((PyObject *)fr);
	pyfpgad_frame_export_get(fr);
	return cap;
}

/* An int from a 2-tuple's item @i, or -1 with an exception. */
static long tuple_int(PyObject *t, Py_ssize_t i)
{
	PyObject *o = PyTuple_GetItem(t, i);

	return o ? PyLong_AsLong(o) : -1;
}

PyObject *pyfpgad_dlpack_call(struct pyfpgad_frame *fr, PyObject *args, PyObject *kwds,
			      uint64_t offset, uint8_t code, uint8_t bits, int ndim,
			      const Py_ssize_t *shape)
{
	static char *kwlist[] = { "stream", "max_version", "dl_device", "copy", NULL };
	PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None;
	PyObject *copy = Py_None;
	bool versioned = false;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOO:__dlpack__", kwlist, &stream,
					 &max_version, &dl_device, &copy))
		return NULL;
	/* Frames are complete when taken: no stream has to wait for them. */
	if (stream != Py_None && !PyLong_Check(stream))
		return PyErr_Format(PyExc_TypeError, "__dlpack__: stream must be None or an int");
	if (max_version != Py_None) {
		long major;

		if (!PyTuple_Check(max_version) || PyTuple_Size(max_version) != 2)
			return PyErr_Format(PyExc_TypeError,
					    "__dlpack__: max_version must be (major, minor)");
		major = tuple_int(max_version, 0);
		if (major == -1 && PyErr_Occurred())
			return NULL;
		versioned = major >= DLPACK_MAJOR;
	}
	if (dl_device != Py_None) {
		long type, id;

		if (!PyTuple_Check(dl_device) || PyTuple_Size(dl_device) != 2)
			return PyErr_Format(PyExc_TypeError,
					    "__dlpack__: dl_device must be (type, id)");
		type = tuple_int(dl_device, 0);
		id = tuple_int(dl_device, 1);
		if (PyErr_Occurred())
			return NULL;
		if (type != fr->ch->device_type || id != fr->ch->device_id)
			return PyErr_Format(PyExc_BufferError,
					    "__dlpack__: the frame is on device (%d, %d), not (%ld, %ld): "
					    "fpgad exports in place only",
					    fr->ch->device_type, fr->ch->device_id, type, id);
	}
	if (copy == Py_True)
		return PyErr_Format(PyExc_BufferError,
				    "__dlpack__: copy=True: fpgad exports in place only");
	return pyfpgad_dlpack_export(fr, offset, code, bits, ndim, shape, versioned);
}

PyObject *pyfpgad_dlpack_device(const struct pyfpgad_channel *ch)
{
	return Py_BuildValue("(ii)", ch->device_type, ch->device_id);
}
