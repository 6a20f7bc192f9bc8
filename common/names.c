// SPDX-License-Identifier: MIT
/* names.c - the one channel-name check (see names.h). */
#include <string.h>

#include "names.h"

bool name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= NAME_MAX_CHANNEL)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
	return true;
}
