// SPDX-License-Identifier: MIT
/* size.c - sizes as people write them (size.h). */
#include <errno.h>
#include <stdlib.h>

#include "size.h"

int size_parse(const char *s, uint64_t *ret)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	errno = 0;
	if (*s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B' || *end == 'b')
		end += (end[0] == 'i' && (end[1] == 'B' || end[1] == 'b')) ? 2 : 1;
	if (*end != '\0')
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret = (uint64_t)v << shift;
	return 0;
}
