// SPDX-License-Identifier: MIT
/*
 * sim_faults.c - the simulated card's fault injection (sim.h): which
 * faults are due, and the test knob SIM_FAULTS_ENV that sets them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/sim/sim.h"

static const struct {
	const char *name;
	size_t offset;
} kinds[] = {
	{ "timeout", offsetof(struct sim_faults, timeout) },
	{ "error", offsetof(struct sim_faults, error) },
	{ "corrupt", offsetof(struct sim_faults, corrupt) },
	{ "hang", offsetof(struct sim_faults, hang) },
	{ "seed", offsetof(struct sim_faults, seed) },
};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))
#define FORM "KIND=N[,KIND=N...] with N a whole number and KIND timeout, error, corrupt or hang (one fault in every N transfers, 0 = never) or seed (which byte a corrupt fault flips)"

int sim_faults_parse(const char *s, struct sim_faults *ret, char *err,
		     size_t errlen)
{
	struct sim_faults f = { .seed = SIM_FAULTS_SEED };
	unsigned seen = 0;
	const char *p = s;

	while (p && *p) {
		size_t len = strcspn(p, ","), name_len = strcspn(p, "=,");
		const char *value = p + name_len + 1;
		unsigned long v;
		unsigned k;
		char *end;

		for (k = 0; k < N_KINDS; k++)
			if (strlen(kinds[k].name) == name_len &&
			    !strncmp(p, kinds[k].name, name_len))
				break;
		if (k == N_KINDS) {
			snprintf(err, errlen, "'%.*s' is not a kind: want %s",
				 (int)len, p, FORM);
			return -EINVAL;
		}
		if (name_len == len) {
			snprintf(err, errlen, "'%.*s' has no value: want %s",
				 (int)len, p, FORM);
			return -EINVAL;
		}
		if (seen & (1u << k)) {
			snprintf(err, errlen, "%s is given twice", kinds[k].name);
			return -EINVAL;
		}
		seen |= 1u << k;
		errno = 0;
		v = strtoul(value, &end, 10);
		if (value[0] < '0' || value[0] > '9' || end != p + len || errno ||
		    v > ~0u) {
			snprintf(err, errlen, "%s: '%.*s' is not a whole number from 0 to %u",
				 kinds[k].name, (int)(p + len - value), value, ~0u);
			return -EINVAL;
		}
		*(unsigned *)((char *)&f + kinds[k].offset) = (unsigned)v;
		p += len;
		if (*p == ',' && !*++p) {
			snprintf(err, errlen, "a trailing ',': want %s", FORM);
			return -EINVAL;
		}
	}
	*ret = f;
	return 0;
}

int sim_faults_from_env(struct sim_faults *ret, char *err, size_t errlen)
{
	const char *s = getenv(SIM_FAULTS_ENV);
	char why[384];
	int r = sim_faults_parse(s, ret, why, sizeof(why));

	if (r < 0)
		snprintf(err, errlen, "environment %s='%s': %s", SIM_FAULTS_ENV,
			 s, why);
	return r;
}

enum sim_fault sim_fault_next(struct device_queue *q)
{
	const struct sim_faults *f = &q->dev->faults;
	uint64_t n = ++q->started;

	if (f->hang && n % f->hang == 0)
		return SIM_FAULT_HANG;
	if (f->timeout && n % f->timeout == 0)
		return SIM_FAULT_TIMEOUT;
	if (f->error && n % f->error == 0)
		return SIM_FAULT_ERROR;
	if (f->corrupt && n % f->corrupt == 0)
		return SIM_FAULT_CORRUPT;
	return SIM_FAULT_NONE;
}
