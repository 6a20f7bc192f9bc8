/* SPDX-License-Identifier: MIT */
/*
 * pyfpgad.h - the CPython extension fpgad._fpgad over libfpgad: its three
 * object types (client, channel, frame, plus typed views of a frame) and
 * the rules that tie their lifetimes together.
 *
 * Built on the limited API of Python 3.11 (an abi3 module), so one build
 * imports on 3.11 and every later 3.x.
 *
 * Ownership, all under the GIL:
 *   frame export (DLPack capsule or buffer view) -> frame -> channel -> client
 * each arrow a strong reference.  A channel's ring stays mapped, and its
 * lease held, while any frame of it has a live export; a frame's slot goes
 * back to fpgad on a plain release() only once its last export is gone
 * (the release is deferred until then).  libfpgad calls on one client are
 * serialized by the client's lock, which is never waited for with the
 * GIL held.
 */
#ifndef PYFPGAD_H
#define PYFPGAD_H

#define PY_SSIZE_T_CLEAN
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#include <Python.h>
#include <pythread.h>

#include <stdbool.h>
#include <stdint.h>

#include "fpgad.h"

#define PYFPGAD_MAX_DIMS 8

/* Where a frame's bytes live, as DLPack names devices. */
enum pyfpgad_device { PYFPGAD_DEV_CPU = 1, PYFPGAD_DEV_CUDA = 2 };

struct pyfpgad_client;
struct pyfpgad_channel;

struct pyfpgad_client {
	PyObject_HEAD
	fpgad_client *c;		/* NULL once disconnected */
	PyThread_type_lock lock;	/* one libfpgad call at a time */
	bool closing;			/* close() called: disconnect when no
					   channel is open at the C level */
	bool reconnect;
	unsigned n_chans;
	unsigned cap_chans;
	struct pyfpgad_channel **chans;	/* open channels, borrowed */
	PyObject *url;
};

struct pyfpgad_channel {
	PyObject_HEAD
	struct pyfpgad_client *cl;	/* strong */
	fpgad_channel *ch;		/* NULL once closed at the C level */
	struct fpgad_channel_info info;
	bool h2c;
	bool closing;			/* close() called */
	int device_type;		/* enum pyfpgad_device */
	int device_id;			/* this process's CUDA ordinal, or 0 */
	uint64_t gen;			/* ring generation: bumped on -ESTALE */
	unsigned exported;		/* frames with live exports */
	struct pyfpgad_frame **held;	/* per slot, borrowed; info.slots */
};

enum pyfpgad_frame_state {
	PYFPGAD_HELD,		/* ours: views may be made */
	PYFPGAD_PENDING,	/* release() called while exported: the slot
				   goes back when the last export does */
	PYFPGAD_DONE,		/* released, submitted, or gone with its ring */
};

struct pyfpgad_frame {
	PyObject_HEAD
	struct pyfpgad_channel *ch;	/* strong */
	struct fpgad_frame f;
	uint64_t gen;
	enum pyfpgad_frame_state state;
	unsigned exports;		/* DLPack tensors and buffer views alive */
};

/* A typed view: dtype, shape and byte offset over one frame. */
struct pyfpgad_view {
	PyObject_HEAD
	struct pyfpgad_frame *fr;	/* strong */
	uint64_t offset;
	uint8_t code, bits;		/* DLPack data type */
	char format[4];			/* struct module format, "" if none */
	int ndim;
	Py_ssize_t itemsize;
	Py_ssize_t shape[PYFPGAD_MAX_DIMS];
	Py_ssize_t strides[PYFPGAD_MAX_DIMS];
	uint64_t nbytes;
};

/* The exception classes, set by fpgad/__init__.py through _init(). */
extern PyObject *pyfpgad_error;		/* fpgad.Error */
extern PyObject *pyfpgad_released_error;	/* fpgad.ReleasedError */
extern PyObject *pyfpgad_closed_error;	/* fpgad.ClosedError */

extern PyTypeObject *pyfpgad_client_type;
extern PyTypeObject *pyfpgad_channel_type;
extern PyTypeObject *pyfpgad_frame_type;
extern PyTypeObject *pyfpgad_view_type;

/* module.c */
/* Raise the fpgad.Error subclass for -@err, with @what and fpgad's message. */
PyObject *pyfpgad_raise(int err, const char *what, const char *msg);
/* The same with the client's fpgad_errmsg(). */
PyObject *pyfpgad_raise_client(struct pyfpgad_client *cl, int err, const char *what);
/* Raise fpgad.ReleasedError (or ClosedError) with a formatted message. */
PyObject *pyfpgad_raise_state(PyObject *cls, const char *fmt, ...);

/* client.c */
int pyfpgad_client_init_type(PyObject *m);
/* Take the client's lock, letting the GIL go while waiting for it. */
void pyfpgad_client_lock(struct pyfpgad_client *cl);
void pyfpgad_client_unlock(struct pyfpgad_client *cl);

/*
 * @r = @call, a blocking libfpgad call on @cl's handle, made with the
 * client locked and the GIL released; a failure raises the exception for
 * @what with fpgad's own words, read while the lock is still held.
 */
#define PYFPGAD_CLIENT_CALL(cl, r, call, what)				\
	do {								\
		pyfpgad_client_lock(cl);				\
		Py_BEGIN_ALLOW_THREADS					\
		(r) = (call);						\
		Py_END_ALLOW_THREADS					\
		if ((r) < 0)						\
			pyfpgad_raise_client((cl), (r), (what));	\
		pyfpgad_client_unlock(cl);				\
	} while (0)
int pyfpgad_client_add_channel(struct pyfpgad_client *cl, struct pyfpgad_channel *ch);
/* @ch closed at the C level; disconnects a closing client with none left. */
void pyfpgad_client_channel_gone(struct pyfpgad_client *cl, struct pyfpgad_channel *ch);
/* Whether reconnect is on and @ch has exports a reopened ring would strand. */
bool pyfpgad_client_reconnect_blocked(const struct pyfpgad_client *cl,
				      const struct pyfpgad_channel *ch);

/* channel.c */
int pyfpgad_channel_init_type(PyObject *m);
struct pyfpgad_channel *pyfpgad_channel_open(struct pyfpgad_client *cl, const char *name,
					     unsigned flags, bool newest, unsigned poll_us);
/* Close at the C level if closing and nothing is exported any more. */
void pyfpgad_channel_maybe_close(struct pyfpgad_channel *ch);
/* Mark every frame @ch holds as gone (ring replaced or closed). */
void pyfpgad_channel_forget_frames(struct pyfpgad_channel *ch);

/* frame.c */
int pyfpgad_frame_init_type(PyObject *m);
struct pyfpgad_frame *pyfpgad_frame_new(struct pyfpgad_channel *ch,
					const struct fpgad_frame *f);
/* Whether views may be made of @fr; raises when not. */
bool pyfpgad_frame_check_live(struct pyfpgad_frame *fr);
/* Bytes a view of @fr may cover: the frame's length, a buffer's slot. */
uint64_t pyfpgad_frame_extent(const struct pyfpgad_frame *fr);
bool pyfpgad_frame_readonly(const struct pyfpgad_frame *fr);
void pyfpgad_frame_export_get(struct pyfpgad_frame *fr);
/* An export went away: may run a deferred release and channel close. */
void pyfpgad_frame_export_put(struct pyfpgad_frame *fr);
/* Give the slot back now (sync), marking the frame DONE; 0 or -errno. */
int pyfpgad_frame_release_now(struct pyfpgad_frame *fr);
/*
 * A CUDA stream from @o: an int (a cudaStream_t's address), an object with
 * __cuda_stream__() (the CUDA stream protocol), a cuda_stream attribute
 * (torch.cuda.Stream) or a ptr attribute (cupy.cuda.Stream).
 */
int pyfpgad_stream_arg(PyObject *o, void **ret_stream);
/* The buffer protocol for frames and views (host memory only). */
int pyfpgad_getbuffer(struct pyfpgad_frame *fr, PyObject *exporter, Py_buffer *view,
		      int flags, uint64_t offset, uint64_t nbytes, Py_ssize_t itemsize,
		      const char *format, int ndim, Py_ssize_t *shape, Py_ssize_t *strides);

/* view.c */
int pyfpgad_view_init_type(PyObject *m);
PyObject *pyfpgad_view_new(struct pyfpgad_frame *fr, PyObject *dtype, PyObject *shape,
			   unsigned long long offset);

/* dlpack.c */
/*
 * A DLPack capsule over @nbytes of @fr at @offset: @ndim dimensions of
 * @shape, of DLPack type (@code, @bits); versioned (DLPack 1.x) or not.
 */
PyObject *pyfpgad_dlpack_export(struct pyfpgad_frame *fr, uint64_t offset, uint8_t code,
				uint8_t bits, int ndim, const Py_ssize_t *shape,
				bool versioned);
/* Parse __dlpack__'s keywords (stream, max_version, dl_device, copy). */
PyObject *pyfpgad_dlpack_call(struct pyfpgad_frame *fr, PyObject *args, PyObject *kwds,
			      uint64_t offset, uint8_t code, uint8_t bits, int ndim,
			      const Py_ssize_t *shape);
PyObject *pyfpgad_dlpack_device(const struct pyfpgad_channel *ch);

/* cuda_ordinal.c */
/* This process's CUDA ordinal of the device holding @ptr; -errno. */
int pyfpgad_cuda_ordinal(const void *ptr, const char *bus_id);

#endif
