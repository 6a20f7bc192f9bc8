// SPDX-License-Identifier: MIT
/* errmap.c - nng error codes as errno values (see errmap.h). */
#include <errno.h>
#include <nng/nng.h>

#include "errmap.h"

int errmap_nng(int e)
{
	switch (e) {
	case 0: return 0;
	case NNG_ENOMEM: return -ENOMEM;
	case NNG_EINVAL: return -EINVAL;
	case NNG_EBUSY: return -EBUSY;
	case NNG_ETIMEDOUT: return -ETIMEDOUT;
	case NNG_ECONNREFUSED: return -ECONNREFUSED;
	case NNG_ECLOSED: return -EPIPE;
	case NNG_EAGAIN: return -EAGAIN;
	case NNG_ENOTSUP: return -EOPNOTSUPP;
	case NNG_EADDRINUSE: return -EADDRINUSE;
	case NNG_ESTATE: return -EPROTO;
	case NNG_ENOENT: return -ENOENT;
	case NNG_EPROTO: return -EPROTO;
	case NNG_EUNREACHABLE: return -EHOSTUNREACH;
	case NNG_EADDRINVAL: return -EADDRNOTAVAIL;
	case NNG_EPERM: return -EACCES;
	case NNG_EMSGSIZE: return -EMSGSIZE;
	case NNG_ECONNABORTED: return -ECONNABORTED;
	case NNG_ECONNRESET: return -ECONNRESET;
	case NNG_ECONNSHUT: return -ECONNRESET;
	case NNG_ECANCELED: return -ECANCELED;
	case NNG_ENOFILES: return -EMFILE;
	case NNG_ENOSPC: return -ENOSPC;
	case NNG_EEXIST: return -EEXIST;
	case NNG_ECRYPTO: case NNG_EPEERAUTH: return -EACCES;
	default: return -EIO;
	}
}
