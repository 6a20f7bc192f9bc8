// SPDX-License-Identifier: MIT
/* fuzz_config.c - libFuzzer: config_load() on arbitrary file contents. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

__attribute__((destructor)) static void remove_file(void)
{
	if (path[0])
		unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char err[512];
	FILE *f;

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fpgad-fuzz-config.%d", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	if (config_load(path, &cfg, err, sizeof(err)) == 0 &&
	    (cfg.n_channels == 0 || cfg.n_channels > CONFIG_MAX_CHANNELS))
		__builtin_trap();
	return 0;
}
