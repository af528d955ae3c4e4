/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The load loops' progress (ah_probe -L, uverbs_hold -L): with
 * RVERBS_PROGRESS=FILE in the environment, the number of create+destroy
 * pairs done so far is kept in FILE, one fixed-width line rewritten in
 * place after each pair, so that a test can pace itself by work done (read
 * the line, wait for it to grow) instead of by time.
 */
#ifndef RVERBS_LOAD_PROGRESS_H
#define RVERBS_LOAD_PROGRESS_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int progress_fd = -1;

static inline void progress_open(void)
{
	const char *file = getenv("RVERBS_PROGRESS");

	if (file)
		progress_fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
}

static inline void progress_note(long pairs)
{
	char line[24];
	int len;

	if (progress_fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%20ld\n", pairs);
	if (pwrite(progress_fd, line, len, 0) != len)
		progress_fd = -1;
}

#endif /* RVERBS_LOAD_PROGRESS_H */
