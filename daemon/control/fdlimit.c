// SPDX-License-Identifier: MIT
/*
 * fdlimit.c - fpgad's descriptor limit (fdlimit.h): RLIMIT_NOFILE raised
 * to its hard limit at start, so that local clients, their rings and the
 * device never run out of descriptors before the configured limits do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "control/fdlimit.h"
#include "log.h"

static unsigned long nr_open(void)
{
	unsigned long v = 1024 * 1024;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 1024 * 1024;
		fclose(f);
	}
	return v;
}

unsigned long fdlimit_raise(void)
{
	struct rlimit rl;
	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	want = rl.rlim_max;
	if (want == RLIM_INFINITY || want > nr_open())
		want = nr_open();
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rlim_t was = rl.rlim_cur;

		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0) {
			log_info("descriptors: RLIMIT_NOFILE raised from %llu to %llu",
				 (unsigned long long)was, (unsigned long long)want);
		} else {
			log_warn("descriptors: cannot raise RLIMIT_NOFILE from %llu to %llu: %s",
				 (unsigned long long)was, (unsigned long long)want,
				 strerror(errno));
			rl.rlim_cur = was;
		}
	}
	return rl.rlim_cur == RLIM_INFINITY ? nr_open() : (unsigned long)rl.rlim_cur;
}
