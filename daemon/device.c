// SPDX-License-Identifier: MIT
/* device.c - the table of device backends. */
#include <stddef.h>

#include "device.h"

const struct device_ops *device_ops_for(enum backend_kind kind)
{
	switch (kind) {
	case BACKEND_SIM:
		return &device_sim_ops;
	case BACKEND_XDMA:
		return &device_xdma_ops;
	}
	return NULL;
}
