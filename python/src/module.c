// SPDX-License-Identifier: MIT
/*
 * module.c - the fpgad._fpgad module: its functions (connect, version,
 * default_url), the hook through which fpgad/__init__.py hands over its
 * exception classes, and the one place a negative errno becomes one of
 * them.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pyfpgad.h"

PyObject *pyfpgad_error;
PyObject *pyfpgad_released_error;
PyObject *pyfpgad_closed_error;
/* errno -> fpgad.Error subclass, from fpgad/__init__.py. */
static PyObject *errno_classes;

PyObject *pyfpgad_raise(int err, const char *what, const char *msg)
{
	PyObject *cls = pyfpgad_error, *key, *text, *exc;

	if (err < 0)
		err = -err;
	if (!cls) {
		PyErr_Format(PyExc_OSError, "%s: %s", what, strerror(err));
		return NULL;
	}
	key = PyLong_FromLong(err);
	if (!key)
		return NULL;
	if (errno_classes) {
		PyObject *c = PyDict_GetItemWithError(errno_classes, key);

		if (c)
			cls = c;
		else if (PyErr_Occurred())
			goto fail;
	}
	text = PyUnicode_FromFormat("%s: %s", what, msg && msg[0] ? msg : strerror(err));
	if (!text)
		goto fail;
	exc = PyObject_CallFunctionObjArgs(cls, key, text, NULL);
	Py_DECREF(text);
	if (exc) {
		PyErr_SetObject(cls, exc);
		Py_DECREF(exc);
	}
fail:
	Py_DECREF(key);
	return NULL;
}

PyObject *pyfpgad_raise_client(struct pyfpgad_client *cl, int err, const char *what)
{
	return pyfpgad_raise(err, what, cl && cl->c ? fpgad_errmsg(cl->c) : NULL);
}

PyObject *pyfpgad_raise_state(PyObject *cls, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	PyErr_SetString(cls ? cls : PyExc_ValueError, buf);
	return NULL;
}

static void set_ref(PyObject **slot, PyObject *o)
{
	PyObject *old = *slot;

	Py_INCREF(o);
	*slot = o;
	Py_XDECREF(old);
}

static PyObject *mod_init(PyObject *self, PyObject *args)
{
	PyObject *base, *map, *released, *closed;

	(void)self;
	if (!PyArg_ParseTuple(args, "OO!OO:_init", &base, &PyDict_Type, &map,
			      &released, &closed))
		return NULL;
	set_ref(&pyfpgad_error, base);
	set_ref(&errno_classes, map);
	set_ref(&pyfpgad_released_error, released);
	set_ref(&pyfpgad_closed_error, closed);
	Py_RETURN_NONE;
}

static PyObject *mod_version(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyUnicode_FromString(fpgad_version());
}

static PyObject *mod_default_url(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyUnicode_FromString(fpgad_default_url());
}

static PyObject *mod_connect(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "url", "timeout_ms", "reconnect", "card", NULL };
	const char *url = NULL, *card = NULL;
	char card_url[PATH_MAX + 8];
	int timeout_ms = 5000, reconnect = 0, r;
	struct pyfpgad_client *cl;
	fpgad_client *c = NULL;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|zipz:connect", kwlist, &url,
					 &timeout_ms, &reconnect, &card))
		return NULL;
	if (url && card)
		return PyErr_Format(PyExc_ValueError, "give url or card, not both");
	if (card && fpgad_card_url(card, card_url, sizeof(card_url)) == 0)
		url = card_url;
	if (timeout_ms < -1)
		return PyErr_Format(PyExc_ValueError,
				    "timeout_ms must be -1 (none) or >= 0, not %d", timeout_ms);
	Py_BEGIN_ALLOW_THREADS
	r = card ? fpgad_connect_card(card, &c) : fpgad_connect(url, &c);
	Py_END_ALLOW_THREADS
	if (r < 0) {
		/* libfpgad's words for this thread's failed connect name the URL. */
		const char *why = fpgad_errmsg(NULL);
		char what[300];

		/* libfpgad's reason names the card, or says what to do. */
		if (why[0])
			return pyfpgad_raise(r, "connect", why);
		snprintf(what, sizeof(what), "connect to %s", url ? url : fpgad_default_url());
		return pyfpgad_raise(r, what, NULL);
	}
	cl = (struct pyfpgad_client *)PyType_GenericAlloc(pyfpgad_client_type, 0);
	if (!cl)
		goto fail;
	cl->lock = PyThread_allocate_lock();
	if (!cl->lock) {
		PyErr_NoMemory();
		goto fail;
	}
	cl->url = PyUnicode_FromString(url ? url : fpgad_default_url());
	if (!cl->url)
		goto fail;
	fpgad_set_timeout(c, timeout_ms);
	fpgad_set_reconnect(c, reconnect);
	cl->reconnect = reconnect;
	cl->c = c;
	return (PyObject *)cl;

fail:
	/* The client's dealloc would disconnect; c is not its yet. */
	Py_XDECREF((PyObject *)cl);
	fpgad_disconnect(c);
	return NULL;
}

static PyMethodDef mod_methods[] = {
	{ "_init", mod_init, METH_VARARGS,
	  "_init(error, errno_classes, released_error, closed_error): exception classes." },
	{ "version", mod_version, METH_NOARGS, "libfpgad's version, e.g. \"0.1.0\"." },
	{ "default_url", mod_default_url, METH_NOARGS,
	  "The URL connect() uses without one: $FPGAD_URL, else the default." },
	{ "connect", (PyCFunction)(void (*)(void))mod_connect,
	  METH_VARARGS | METH_KEYWORDS,
	  "connect(url=None, timeout_ms=5000, reconnect=False) -> _Client\n\n"
	  "Low-level connect; use fpgad.connect()." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef mod_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "fpgad._fpgad",
	.m_doc = "libfpgad for Python: clients, channels and zero-copy frames.",
	.m_size = -1,
	.m_methods = mod_methods,
};

PyMODINIT_FUNC PyInit__fpgad(void);

PyMODINIT_FUNC PyInit__fpgad(void)
{
	PyObject *m = PyModule_Create(&mod_def);

	if (!m)
		return NULL;
	if (pyfpgad_client_init_type(m) < 0 || pyfpgad_channel_init_type(m) < 0 ||
	    pyfpgad_frame_init_type(m) < 0 || pyfpgad_view_init_type(m) < 0 ||
	    PyModule_AddIntConstant(m, "FRAME_F_ERROR", FPGAD_FRAME_F_ERROR) < 0 ||
	    PyModule_AddIntConstant(m, "FRAME_F_TRUNCATED", FPGAD_FRAME_F_TRUNCATED) < 0 ||
	    PyModule_AddIntConstant(m, "FRAME_F_DROPPED_BEFORE",
				    FPGAD_FRAME_F_DROPPED_BEFORE) < 0 ||
	    PyModule_AddStringConstant(m, "DEFAULT_URL", FPGAD_DEFAULT_URL) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
