// SPDX-License-Identifier: MIT
/* identity.c - a peer's process, container and pod (identity.h). */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "control/identity.h"

/* The first run of 64 hex digits in @s (a container id), into @out. */
static bool container_id(const char *s, char *out)
{
	for (const char *p = s; *p; p++) {
		size_t n = 0;

		while (isxdigit((unsigned char)p[n]) && !isupper((unsigned char)p[n]))
			n++;
		if (n == 64 && (p == s || !isxdigit((unsigned char)p[-1]))) {
			memcpy(out, p, 64);
			out[64] = '\0';
			return true;
		}
		if (n)
			p += n - 1;
	}
	return false;
}

/*
 * The pod UID after "pod" in @s: 36 characters of hex and '-' (cgroupfs)
 * or '_' (the systemd driver writes '_' for '-'), as a UUID with '-'.
 */
static bool pod_uid(const char *s, char *out)
{
	for (const char *p = strstr(s, "pod"); p; p = strstr(p + 3, "pod")) {
		const char *u = p + 3;
		size_t n = 0;

		for (; n < 36; n++) {
			bool dash = n == 8 || n == 13 || n == 18 || n == 23;

			if (dash ? u[n] != '-' && u[n] != '_' : !isxdigit((unsigned char)u[n]))
				break;
		}
		if (n != 36 || isxdigit((unsigned char)u[36]))
			continue;
		for (size_t i = 0; i < 36; i++)
			out[i] = u[i] == '_' ? '-' : (char)tolower((unsigned char)u[i]);
		out[36] = '\0';
		return true;
	}
	return false;
}

void identity_from_cgroup(const char *text, struct identity *ret)
{
	char line[1024];
	const char *p = text, *nl;

	ret->container[0] = ret->pod[0] = '\0';
	/* v2's one line "0::PATH", or v1's "N:CONTROLLERS:PATH" lines. */
	for (; p && *p; p = nl ? nl + 1 : NULL) {
		const char *path;
		size_t len;

		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (len >= sizeof(line))
			continue;
		memcpy(line, p, len);
		line[len] = '\0';
		path = strchr(line, ':');
		path = path ? strchr(path + 1, ':') : NULL;
		if (!path)
			continue;
		path++;
		if (!ret->container[0])
			container_id(path, ret->container);
		if (!ret->pod[0] && strstr(path, "kubepods"))
			pod_uid(path, ret->pod);
		if (ret->container[0] && ret->pod[0])
			return;
	}
}

/* The first @len - 1 bytes of @path into @buf, without a final newline. */
static bool read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return n > 0;
}

void identity_read(pid_t pid, struct identity *ret)
{
	char path[64], text[4096];

	*ret = (struct identity){ 0 };
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (!read_small(path, ret->process, sizeof(ret->process)))
		ret->process[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (read_small(path, text, sizeof(text)))
		identity_from_cgroup(text, ret);
}

const char *identity_name(const struct identity *id, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!id->process[0] && !id->container[0] && !id->pod[0])
		return buf;
	snprintf(buf, len, ", %s%s%s%s%.12s", id->process[0] ? id->process : "?",
		 id->pod[0] ? " in pod " : "", id->pod,
		 id->container[0] ? (id->pod[0] ? ", container " : " in container ") : "",
		 id->container);
	return buf;
}
