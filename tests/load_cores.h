/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the load workers of rverbs_takeover_load.sh (ah_probe -L,
 * uverbs_hold -L): which core served each create and each destroy, read
 * from the livepatch's sysfs before and after the call, so that objects
 * made under one core and destroyed under the other are counted; and the
 * worker's progress, published in a file the test paces its switches by.
 *
 * The livepatch's consistency model makes the reading exact.  Each task
 * runs one core at a time: during a switch its /proc patch_state says
 * which (1 the livepatch's functions, the Rust core; 0 the C core), and it
 * changes at most once per switch, never inside the patched function;
 * between switches (-1) the livepatch, if there and enabled, is in force
 * for every task.  A call that read the same core before and after ran in
 * that core (unless a whole switch back and forth began and ended within
 * it, which the test's pacing, many calls per switch, rules out); a call
 * during which the task changed core is counted as unknown.
 */
#ifndef _RVERBS_TESTS_LOAD_CORES_H
#define _RVERBS_TESTS_LOAD_CORES_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOAD_LP "/sys/kernel/livepatch/rverbs_takeover/"

/* The first byte of a livepatch attribute, 0 if it cannot be read. */
static inline char load_lp_attr(const char *name, int *absent)
{
	char path[96], c = 0;
	int fd;

	snprintf(path, sizeof(path), LOAD_LP "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*absent = errno == ENOENT;
		return 0;
	}
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c;
}

/* This thread's /proc patch_state: -1, 0 or 1; -2 if it cannot be read. */
static inline int load_patch_state(void)
{
	char buf[8] = "";
	int fd = open("/proc/thread-self/patch_state", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -2;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -2;
	if (buf[0] == '-')
		return buf[1] == '1' ? -1 : -2;
	return buf[0] == '0' ? 0 : buf[0] == '1' ? 1 : -2;
}

/* The core this thread runs now: 'R' the Rust core, 'C' the C core, '?'. */
static inline char load_core_now(void)
{
	int absent = 0, state = load_patch_state();
	char enabled;

	if (state == 0)
		return 'C';
	if (state == 1)
		return 'R';
	if (state != -1)
		return '?';
	/* No switch under way: the livepatch, enabled, is every task's. */
	enabled = load_lp_attr("enabled", &absent);
	if (load_patch_state() != -1)
		return '?';	/* a switch began meanwhile */
	if (absent || enabled == '0')
		return 'C';
	return enabled == '1' ? 'R' : '?';
}

/* The core that served a call, from the readings before and after it. */
static inline char load_core_of(char before, char after)
{
	return before == after ? before : '?';
}

struct load_cores {
	long same, c_to_rust, rust_to_c, unknown;
	long spanned;	/* calls during which the state changed */
	int count_fd;	/* -C FILE: the progress, or -1 */
};

/* An object made under MADE and gone under GONE. */
static inline void load_cores_count(struct load_cores *x, char made, char gone)
{
	if (made == '?' || gone == '?')
		x->unknown++;
	else if (made == gone)
		x->same++;
	else if (made == 'C')
		x->c_to_rust++;
	else
		x->rust_to_c++;
}

static inline int load_cores_open(struct load_cores *x, const char *count_file)
{
	memset(x, 0, sizeof(*x));
	x->count_fd = -1;
	if (!count_file)
		return 0;
	x->count_fd = open(count_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return x->count_fd < 0 ? -errno : 0;
}

/* The progress: N, at the start of the file, in a line of fixed width. */
static inline void load_cores_progress(struct load_cores *x, long n)
{
	char line[24];

	if (x->count_fd < 0)
		return;
	snprintf(line, sizeof(line), "%22ld\n", n);
	if (pwrite(x->count_fd, line, 23, 0) != 23)
		x->count_fd = -1;
}

static inline void load_cores_print(const struct load_cores *x)
{
	printf("crossings: same %ld c_to_rust %ld rust_to_c %ld unknown %ld spanned %ld\n",
	       x->same, x->c_to_rust, x->rust_to_c, x->unknown, x->spanned);
}

#endif
