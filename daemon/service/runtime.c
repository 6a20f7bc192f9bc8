// SPDX-License-Identifier: MIT
/*
 * runtime.c - the runtime directory and its instance lock (runtime.h).
 *
 * The lock file is removed at exit while the lock is still held; a start
 * racing with that exit could lock the removed file, so after taking the
 * lock fpgad checks that the path still names the file it locked, and
 * starts over when it does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "service/runtime.h"

struct runtime {
	char dir[PATH_MAX];
	char lock_path[PATH_MAX + 16];
	int lock_fd;
	bool created;			/* fpgad made the directory */
};

/* The pid another fpgad wrote into the lock file, or 0. */
static long holder_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* The path still names the file @fd locked. */
static bool lock_is_current(const char *path, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int take_lock(struct runtime *rt)
{
	char pid[32];
	int fd, len;

	for (unsigned tries = 0; tries < 16; tries++) {
		fd = open(rt->lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0) {
			log_err("runtime directory %s: cannot open %s: %s", rt->dir,
				rt->lock_path, strerror(errno));
			return -errno;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int e = errno;
			long other = holder_pid(fd);

			close(fd);
			if (e != EWOULDBLOCK) {
				log_err("runtime directory %s: cannot lock %s: %s",
					rt->dir, rt->lock_path, strerror(e));
				return -e;
			}
			if (other > 0)
				log_err("runtime directory %s is in use by another fpgad (pid %ld holds %s); not starting",
					rt->dir, other, rt->lock_path);
			else
				log_err("runtime directory %s is in use by another fpgad (it holds %s); not starting",
					rt->dir, rt->lock_path);
			return -EBUSY;
		}
		if (lock_is_current(rt->lock_path, fd))
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		log_err("runtime directory %s: %s keeps being replaced", rt->dir,
			rt->lock_path);
		return -EAGAIN;
	}
	rt->lock_fd = fd;
	len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len)
		log_warn("runtime directory %s: cannot write the pid into %s: %s",
			 rt->dir, rt->lock_path, strerror(errno));
	return 0;
}

int runtime_open(const char *dir, struct runtime **ret_rt)
{
	struct runtime *rt = calloc(1, sizeof(*rt));
	struct stat st;
	int r;

	if (!rt)
		return -ENOMEM;
	rt->lock_fd = -1;
	snprintf(rt->dir, sizeof(rt->dir), "%s", dir);
	snprintf(rt->lock_path, sizeof(rt->lock_path), "%s/%s", dir,
		 RUNTIME_LOCK_FILE);
	if (mkdir(dir, 0755) == 0) {
		rt->created = true;
	} else if (errno != EEXIST) {
		r = -errno;
		log_err("runtime directory %s: %s", dir, strerror(errno));
		goto fail;
	} else if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		r = -ENOTDIR;
		log_err("runtime directory %s: exists and is not a directory", dir);
		goto fail;
	}
	r = take_lock(rt);
	if (r < 0)
		goto fail;
	*ret_rt = rt;
	return 0;
fail:
	runtime_close(rt);
	return r;
}

void runtime_close(struct runtime *rt)
{
	if (!rt)
		return;
	if (rt->lock_fd >= 0) {
		/* Still locked: nobody else can be using the file now. */
		unlink(rt->lock_path);
		close(rt->lock_fd);
	}
	if (rt->created && rmdir(rt->dir) < 0 && errno != ENOTEMPTY &&
	    errno != EEXIST)
		log_warn("runtime directory %s: cannot remove it: %s", rt->dir,
			 strerror(errno));
	free(rt);
}
