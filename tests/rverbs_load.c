// SPDX-License-Identifier: GPL-2.0
/*
 * Module syscalls on rverbs.ko, with the exact errors the kernel gives.
 *
 * The path of the module is taken from $RVERBS_KO.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"

static int load(void)
{
	const char *path = getenv("RVERBS_KO");
	int fd, ret;

	if (!path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

static int unload(void)
{
	return syscall(SYS_delete_module, "rverbs", O_NONBLOCK) ? -errno : 0;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

FIXTURE(loaded) {
	int dummy;
};

FIXTURE_SETUP(loaded)
{
	/* rverbs.ko uses ib_core's symbols; finit_module loads no dependency. */
	ASSERT_EQ(0, system("modprobe ib_core"));
	unload();
	ASSERT_EQ(0, load());
}

FIXTURE_TEARDOWN(loaded)
{
	unload();
}

TEST_F(loaded, second_load_fails_with_eexist)
{
	ASSERT_EQ(-EEXIST, load());
}

/*
 * The version is the build's (scripts/version.sh), not a constant: debugfs
 * must say what modinfo says, which the kernel shows in sysfs.
 */
TEST_F(loaded, version_file_reads_modinfo_version_and_newline)
{
	char buf[128], want[128];
	int n;

	n = read_file("/sys/module/rverbs/version", want, sizeof(want));
	ASSERT_LT(1, n);
	ASSERT_EQ('\n', want[n - 1]);
	ASSERT_EQ(n, read_file("/sys/kernel/debug/rverbs/version", buf, sizeof(buf)));
	ASSERT_STREQ(want, buf);
}

TEST_F(loaded, version_file_is_read_only_for_root)
{
	struct stat st;

	ASSERT_EQ(0, stat("/sys/kernel/debug/rverbs/version", &st));
	ASSERT_EQ(0400U, st.st_mode & 07777);
}

TEST_F(loaded, unload_removes_debugfs_directory)
{
	struct stat st;

	ASSERT_EQ(0, stat("/sys/kernel/debug/rverbs", &st));
	ASSERT_EQ(0, unload());
	ASSERT_EQ(-1, stat("/sys/kernel/debug/rverbs", &st));
	ASSERT_EQ(ENOENT, errno);
}

TEST(unload_when_not_loaded_fails_with_enoent)
{
	unload();
	ASSERT_EQ(-ENOENT, unload());
}

TEST_HARNESS_MAIN
