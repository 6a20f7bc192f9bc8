/* SPDX-License-Identifier: MIT */
/*
 * names.h - what a channel name may be, for the config file, the control
 * protocol and the library alike: 1 to NAME_MAX_CHANNEL - 1 letters,
 * digits, '_' or '-'.
 */
#ifndef FPGAD_COMMON_NAMES_H
#define FPGAD_COMMON_NAMES_H

#include <stdbool.h>

#define NAME_MAX_CHANNEL 32	/* bytes, with the terminating NUL */

bool name_valid(const char *name);

#endif
