// SPDX-License-Identifier: GPL-2.0
/*
 * uverbs_fuzz - a seeded, differential fuzzer of the uverbs commands that
 * reach ib_core's AH and XRCD verbs (rdma_create_user_ah,
 * rdma_destroy_ah_user, ib_alloc_xrcd_user, ib_dealloc_xrcd_user) and of
 * the commands around them, on the raw interface: write() of the legacy
 * command ABI of <rdma/ib_user_verbs.h> and the RDMA_VERBS_IOCTL methods
 * that rdma-core (libibverbs) uses around AHs and XRCDs, no libibverbs.
 *
 *   uverbs_fuzz [-q] [-v] [-B] [-n COUNT] [-s SEED] [-w GID] DEV SGID_INDEX GID...
 *
 * Runs COUNT commands (20000 by default) on 1 to 3 files of DEV's uverbs
 * device, each chosen by a PRNG (splitmix64) from SEED (by default from the
 * clock) and the command's index, so that a run is the same command
 * sequence again as long as the kernel answers the same: GET_CONTEXT,
 * QUERY_DEVICE, QUERY_PORT, ALLOC_PD, DEALLOC_PD, CREATE_AH, DESTROY_AH,
 * OPEN_XRCD, CLOSE_XRCD, the ioctl methods UVERBS_METHOD_AH_DESTROY,
 * UVERBS_METHOD_XRCD_DESTROY and UVERBS_METHOD_PD_DESTROY (IOCTL_*_DESTROY:
 * rdma-core's ibv_destroy_ah, ibv_close_xrcd, ibv_dealloc_pd),
 * UVERBS_METHOD_GET_CONTEXT (IOCTL_GET_CONTEXT: how rdma-core opens a
 * context), UVERBS_METHOD_QUERY_PORT and UVERBS_METHOD_QUERY_GID_ENTRY
 * (IOCTL_QUERY_PORT, IOCTL_QUERY_GID_ENTRY: ibv_query_port,
 * ibv_query_gid_ex), and REOPEN (close a file with whatever lives on it,
 * open it again).  Each field is random within what the command accepts
 * and beyond it; handles are live ones of the file (from the fuzzer's own
 * bookkeeping of what the kernel accepted), stale, of another file, of
 * another type, or random; port numbers and GID indexes are valid, out of
 * range or wider than their type; lengths are right, short, long (zero or
 * non-zero bytes past the command), empty or inconsistent; response
 * buffers are valid, NULL, unmapped, read-only, in kernel space, run into
 * an unmapped page, short or long.  An ioctl is sent as rdma-core would,
 * mostly, else with a bad header (length, reserved fields, driver id,
 * object, method), attributes missing, repeated or unknown (mandatory or
 * not), one attribute of the wrong length, with reserved bits, a value
 * wider than 32 bits or a non-canonical pointer, or the whole of it
 * unmapped or running into an unmapped page.
 *
 * A command known to leak in the kernel itself is never sent, unless -B:
 * the ioctl GET_CONTEXT to a file that has a context.  ib_core's handler of
 * UVERBS_METHOD_GET_CONTEXT (uverbs_std_types_device.c) frees the new
 * context when ib_init_ucontext() fails without rdma_restrack_put(), which
 * the write() command's error path has (uverbs_cmd.c): each such call
 * leaks a reference to the calling task, and with it the task_struct, its
 * signal_struct and credentials (kmemleak on the debug lane, 7.2.13).  The
 * write() GET_CONTEXT is sent instead.
 *
 * The output is one line per command, "<index> <command> <outcome>", the
 * outcome "ok" or the errno's name, nothing that may differ between two
 * runs on a device in the same state (no handle, no response): two runs
 * with the same seed, one with ib_core's C core and one with the Rust core
 * (rverbs' takeover), must print exactly the same (tests/rverbs_fuzz.sh).
 * The first line is "# seed S"; the last ones say how many objects could
 * not be destroyed at the end ("# live at end: 0") and what each command
 * gave.  -q prints, instead of a line per command, an FNV-1a digest of
 * these lines and the count of each outcome; -v appends to each line what
 * was sent (no values either).
 *
 * Reproduce a run: the same SEED on the same device state, e.g.
 *   SEED=12345 tests/rverbs_fuzz.sh         (in the VM, C and Rust)
 *   uverbs_fuzz -v -s 12345 rxe0 1 ::ffff:192.0.2.2 ::ffff:239.1.1.1
 *
 * GID... are destinations the caller knows to resolve at once (a neighbour
 * that answers, a local address, multicast).  The fuzzer adds its own of
 * kinds that never wait for a neighbour: multicast (ff0e::/16,
 * ::ffff:224.0.0.0/4), ::, ::1, random addresses of 2000::/3 outside
 * 2001:db8::/32 (no route), and fe80::/64 only from a source GID that
 * cannot resolve it through the IP stack (RoCE v1, IPv4 or no GID; the
 * source GID table is read from sysfs).  Never another IPv4 address: with
 * the source bound to the netdev, an unreachable IPv4 destination is
 * assumed on-link and ARP takes seconds to time out.  With -w GID, a
 * destination that never answers (an on-link address nobody has): a few
 * CREATE_AHs (3 in 1,000, at most 2 a run, at least the first of the
 * second half) go there instead, and with the
 * IPv4 source GID wait ib_core's 1000 ms for the neighbour, then fail with
 * ETIMEDOUT ("# CREATE_AH to the destination that never answers: N").
 *
 * A command the kernel answers against the bookkeeping is printed as
 * "# surprise <index> <command>: ..." (a destroy of a live object that
 * finds nothing, a destroy of nothing that succeeds, a PD busy with no AH
 * on it, a new object whose handle is not the lowest free one: something
 * the bookkeeping does not know holds it, such as an object a failed
 * create left behind, ...).  So is a CREATE_AH whose outcome is not the one
 * the C contract gives it (ah_oracle(): for the plain commands whose
 * outcome the attribute, the file's objects and the GID table decide
 * alone, an oracle independent of both cores; "# CREATE_AH checked
 * against the contract: N" counts them; -O tells it the wrong outcome, to
 * prove a mismatch fails the run).  Exit status: 0 when the run completed,
 * every object left
 * was destroyed at the end and nothing surprised; 1 otherwise; 2 on a
 * usage or set-up error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "uverbs_raw.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define MAX_FDS		3
#define MAX_LIVE	128	/* live objects of a file, all types */
#define MAX_STALE	32	/* destroyed handles of a file remembered */
#define MAX_GIDS	16	/* caller's destinations */
#define MAX_WAITS	2	/* CREATE_AHs to -w's destination, at most */
#define MAX_PORT	255
#define GID_TBL		256	/* sgid_index is a __u8 */
#define MAX_ERRNO	160	/* outcomes counted by errno up to this */

/* Live objects of one type on one file, at most: a create beyond destroys. */
#define CAP_PD		8
#define CAP_AH		64
#define CAP_XRCD	16

/* An ioctl's header and @n attributes, in __u64s. */
#define IOCTL_WORDS(n)	\
	((sizeof(struct ib_uverbs_ioctl_hdr) + (n) * sizeof(struct ib_uverbs_attr)) / 8)

/* A write() that returned less than it was given: never expected. */
#define RET_SHORT	1

enum otype { T_PD, T_AH, T_XRCD, T_NR };

static const char *const type_names[T_NR] = { "pd", "ah", "xrcd" };

enum cmd {
	C_GET_CONTEXT,
	C_QUERY_DEVICE,
	C_QUERY_PORT,
	C_ALLOC_PD,
	C_DEALLOC_PD,
	C_CREATE_AH,
	C_DESTROY_AH,
	C_OPEN_XRCD,
	C_CLOSE_XRCD,
	C_IOCTL_AH_DESTROY,
	C_IOCTL_XRCD_DESTROY,
	C_IOCTL_PD_DESTROY,
	C_IOCTL_GET_CONTEXT,
	C_IOCTL_QUERY_PORT,
	C_IOCTL_QUERY_GID_ENTRY,
	C_REOPEN,		/* the last: choose_cmd() falls to it */
	C_NR
};

static const char *const cmd_names[C_NR] = {
	"GET_CONTEXT", "QUERY_DEVICE", "QUERY_PORT", "ALLOC_PD", "DEALLOC_PD",
	"CREATE_AH", "DESTROY_AH", "OPEN_XRCD", "CLOSE_XRCD",
	"IOCTL_AH_DESTROY", "IOCTL_XRCD_DESTROY", "IOCTL_PD_DESTROY", "IOCTL_GET_CONTEXT",
	"IOCTL_QUERY_PORT", "IOCTL_QUERY_GID_ENTRY", "REOPEN",
};

/* How often each command is chosen, per mille (they add up to 1000). */
static const unsigned int cmd_weights[C_NR] = {
	[C_GET_CONTEXT] = 15,
	[C_QUERY_DEVICE] = 25,
	[C_QUERY_PORT] = 30,
	[C_ALLOC_PD] = 80,
	[C_DEALLOC_PD] = 35,
	[C_CREATE_AH] = 270,
	[C_DESTROY_AH] = 150,
	[C_OPEN_XRCD] = 100,
	[C_CLOSE_XRCD] = 70,
	[C_IOCTL_AH_DESTROY] = 65,
	[C_IOCTL_XRCD_DESTROY] = 50,
	[C_IOCTL_PD_DESTROY] = 30,
	[C_IOCTL_GET_CONTEXT] = 10,
	[C_IOCTL_QUERY_PORT] = 25,
	[C_IOCTL_QUERY_GID_ENTRY] = 40,
	[C_REOPEN] = 5,
};

struct obj {
	__u32 handle;
	enum otype type;
	__u32 pd;		/* AH: the handle of its PD */
	unsigned int nah;	/* PD: its live AHs */
};

struct stale {
	__u32 handle;
	enum otype type;
};

/* One file of the uverbs device and what the kernel holds on it. */
struct ufd {
	int fd;
	int async_fd;
	bool ctx;
	unsigned int n;
	struct obj live[MAX_LIVE];
	unsigned int nstale;
	struct stale stale[MAX_STALE];
};

/* A source GID table entry, from sysfs. */
enum gid_state { GID_NONE, GID_V1, GID_V2, GID_OTHER };

struct gid_ent {
	enum gid_state state;
	__u8 gid[16];
};

struct rng {
	__u64 s;
};

static struct {
	const char *dev;
	__u64 seed;
	unsigned int count;
	bool quiet;
	bool verbose;
	bool kernel_leaks;
	bool plant_oracle;	/* -O: the oracle told wrong, to prove it is heard */
	unsigned long oracle_checked;
	unsigned int gid_tbl_sz[MAX_PORT + 1];
	int sgid;
	unsigned int ngids;
	__u8 gids[MAX_GIDS][16];
	bool have_silent;	/* -w: a destination that never answers */
	__u8 silent[16];
	unsigned int waits;	/* CREATE_AHs sent to it */
	bool port_exists[MAX_PORT + 1];
	struct gid_ent *gid_tbl[MAX_PORT + 1];
	__u32 driver_id;
	unsigned int nfds;
	struct ufd fds[MAX_FDS];
	int files[2];		/* regular files for OPEN_XRCD */
	int closed_fd;		/* a descriptor number that is not open */
	long page;
	unsigned char *req;	/* read-write page, then an inaccessible one */
	unsigned char *resp;	/* read-write page, then an inaccessible one */
	unsigned char *rdonly;	/* read-only page */
	unsigned char *unmapped; /* a page that was unmapped */
	__u64 digest;
	unsigned long outcomes[C_NR][MAX_ERRNO + 2];
	unsigned long surprises;
	char desc[160];
	unsigned int index;
	double slowest_ms;
	unsigned int slowest;
	unsigned long slow;
} g;

/* ------------------------------------------------------------------ */
/* The PRNG: splitmix64, one stream per command.                       */

static __u64 rnext(struct rng *r)
{
	__u64 z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static __u32 rnd(struct rng *r, __u32 n)
{
	return (__u32)((rnext(r) >> 32) % n);
}

/* True with a probability of permille / 1000. */
static bool chance(struct rng *r, unsigned int permille)
{
	return rnd(r, 1000) < permille;
}

/* The stream of command @index: depends on nothing but the seed. */
static struct rng cmd_rng(unsigned int index)
{
	struct rng r = { .s = g.seed ^ (0xd1342543de82ef95ULL * ((__u64)index + 1)) };

	rnext(&r);
	return r;
}

/* ------------------------------------------------------------------ */
/* Outcomes.                                                           */

static const struct {
	int err;
	const char *name;
} errnames[] = {
	{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" },
	{ EINTR, "EINTR" }, { EIO, "EIO" }, { ENXIO, "ENXIO" },
	{ E2BIG, "E2BIG" }, { EBADF, "EBADF" }, { EAGAIN, "EAGAIN" },
	{ ENOMEM, "ENOMEM" }, { EACCES, "EACCES" }, { EFAULT, "EFAULT" },
	{ EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
	{ EINVAL, "EINVAL" }, { ENFILE, "ENFILE" }, { EMFILE, "EMFILE" },
	{ ENOTTY, "ENOTTY" }, { ENOSPC, "ENOSPC" }, { ERANGE, "ERANGE" },
	{ ENODATA, "ENODATA" }, { ENOMSG, "ENOMSG" },
	{ EPROTO, "EPROTO" }, { EBADMSG, "EBADMSG" }, { EOVERFLOW, "EOVERFLOW" },
	{ EMSGSIZE, "EMSGSIZE" }, { EPROTONOSUPPORT, "EPROTONOSUPPORT" },
	{ EOPNOTSUPP, "EOPNOTSUPP" }, { EAFNOSUPPORT, "EAFNOSUPPORT" },
	{ EADDRNOTAVAIL, "EADDRNOTAVAIL" }, { ENETDOWN, "ENETDOWN" },
	{ ENETUNREACH, "ENETUNREACH" }, { ENOBUFS, "ENOBUFS" },
	{ ETIMEDOUT, "ETIMEDOUT" }, { ECONNREFUSED, "ECONNREFUSED" },
	{ EHOSTUNREACH, "EHOSTUNREACH" },
};

/* "ok", the name of -@ret, or its number. */
static const char *outcome(int ret)
{
	static char buf[16];
	size_t i;

	if (!ret)
		return "ok";
	if (ret == RET_SHORT)
		return "SHORT_WRITE";
	for (i = 0; i < ARRAY_SIZE(errnames); i++)
		if (errnames[i].err == -ret)
			return errnames[i].name;
	snprintf(buf, sizeof(buf), "%d", -ret);
	return buf;
}

static void digest_line(const char *line)
{
	const unsigned char *p;

	for (p = (const unsigned char *)line; *p; p++) {
		g.digest ^= *p;
		g.digest *= 0x100000001b3ULL;
	}
	g.digest ^= '\n';
	g.digest *= 0x100000001b3ULL;
}

/*
 * A line of the run's output, digested; with -q, only the "# " lines are
 * printed, not the one of each command.
 */
static void out(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	digest_line(line);
	if (!g.quiet || line[0] == '#')
		puts(line);
}

static void note_surprise(enum cmd cmd, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	g.surprises++;
	out("# surprise %u %s: %s", g.index, cmd_names[cmd], what);
}

static void describe(const char *fmt, ...)
{
	size_t len = strlen(g.desc);
	va_list ap;

	if (!g.verbose || len >= sizeof(g.desc) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(g.desc + len, sizeof(g.desc) - len, fmt, ap);
	va_end(ap);
}

static void record(enum cmd cmd, int ret)
{
	int slot = !ret ? 0 : (-ret > 0 && -ret <= MAX_ERRNO) ? -ret : MAX_ERRNO + 1;

	g.outcomes[cmd][slot]++;
	if (g.verbose && g.desc[0])
		out("%u %s %s #%s", g.index, cmd_names[cmd], outcome(ret), g.desc);
	else
		out("%u %s %s", g.index, cmd_names[cmd], outcome(ret));
}

/* ------------------------------------------------------------------ */
/* The bookkeeping of what the kernel accepted.                        */

static int find_obj(const struct ufd *u, __u32 handle)
{
	unsigned int i;

	for (i = 0; i < u->n; i++)
		if (u->live[i].handle == handle)
			return i;
	return -1;
}

static unsigned int count_type(const struct ufd *u, enum otype type)
{
	unsigned int i, n = 0;

	for (i = 0; i < u->n; i++)
		n += u->live[i].type == type;
	return n;
}

/* A random live object of @type on @u, or -1 when there is none. */
static int pick_obj(struct rng *r, const struct ufd *u, enum otype type)
{
	unsigned int i, n = count_type(u, type), k;

	if (!n)
		return -1;
	k = rnd(r, n);
	for (i = 0; i < u->n; i++)
		if (u->live[i].type == type && !k--)
			return i;
	return -1;
}

/*
 * The handle uverbs gives the next object on @u: the lowest that no live
 * object has (rdma_core.c:idr_add_uobj, xa_alloc() from 0; a failed create
 * or a destroy frees its handle at once with xa_erase()).
 */
static __u32 lowest_free(const struct ufd *u)
{
	__u32 h;

	for (h = 0; find_obj(u, h) >= 0; h++)
		;
	return h;
}

static void add_obj(enum cmd cmd, struct ufd *u, __u32 handle, enum otype type, __u32 pd)
{
	int pd_i;

	if (find_obj(u, handle) >= 0) {
		note_surprise(cmd, "the new %s has the handle of a live object", type_names[type]);
		return;
	}
	/* Else an object the bookkeeping does not know holds the lowest. */
	if (handle != lowest_free(u))
		note_surprise(cmd, "the new %s does not have the lowest free handle",
			      type_names[type]);
	if (u->n == MAX_LIVE) {
		note_surprise(cmd, "more than %d live objects on a file", MAX_LIVE);
		return;
	}
	u->live[u->n++] = (struct obj){ .handle = handle, .type = type, .pd = pd };
	if (type == T_AH) {
		pd_i = find_obj(u, pd);
		if (pd_i >= 0 && u->live[pd_i].type == T_PD)
			u->live[pd_i].nah++;
	}
}

static void remember_stale(struct ufd *u, __u32 handle, enum otype type)
{
	u->stale[u->nstale++ % MAX_STALE] = (struct stale){ .handle = handle, .type = type };
}

static void del_obj(struct ufd *u, int i)
{
	struct obj o = u->live[i];
	int pd_i;

	if (o.type == T_AH) {
		pd_i = find_obj(u, o.pd);
		if (pd_i >= 0 && u->live[pd_i].type == T_PD && u->live[pd_i].nah)
			u->live[pd_i].nah--;
	}
	memmove(&u->live[i], &u->live[i + 1], (u->n - i - 1) * sizeof(u->live[0]));
	u->n--;
	remember_stale(u, o.handle, o.type);
}

/* Everything of @u is gone with its file. */
static void forget_all(struct ufd *u)
{
	while (u->n)
		del_obj(u, u->n - 1);
	u->ctx = false;
}

/*
 * A handle for a command on file @f that takes an object of @type: a live
 * one mostly, else stale, of another file, of another type, or random.
 */
static __u32 choose_handle(struct rng *r, unsigned int f, enum otype type)
{
	const struct ufd *u = &g.fds[f];
	unsigned int x = rnd(r, 100), j, other;
	int i;

	if (x < 72) {
		i = pick_obj(r, u, type);
		if (i >= 0) {
			describe(" %s=live", type_names[type]);
			return u->live[i].handle;
		}
	} else if (x < 80) {
		if (u->nstale) {
			j = rnd(r, u->nstale < MAX_STALE ? u->nstale : MAX_STALE);
			describe(" %s=stale-%s", type_names[type], type_names[u->stale[j].type]);
			return u->stale[j].handle;
		}
	} else if (x < 86) {
		if (g.nfds > 1) {
			other = (f + 1 + rnd(r, g.nfds - 1)) % g.nfds;
			i = pick_obj(r, &g.fds[other], type);
			if (i >= 0) {
				describe(" %s=foreign", type_names[type]);
				return g.fds[other].live[i].handle;
			}
		}
	} else if (x < 92) {
		other = (type + 1 + rnd(r, T_NR - 1)) % T_NR;
		i = pick_obj(r, u, other);
		if (i >= 0) {
			describe(" %s=a-%s", type_names[type], type_names[other]);
			return u->live[i].handle;
		}
	} else if (x < 96) {
		describe(" %s=random", type_names[type]);
		return (__u32)rnext(r);
	}
	describe(" %s=small", type_names[type]);
	return rnd(r, 64);
}

/* ------------------------------------------------------------------ */
/* Sending commands.                                                   */

/* A legacy write() command; body starts with the response pointer. */
struct wcmd {
	__u32 command;
	void *body;
	size_t size;		/* of the command struct (the method's req_size) */
	size_t resp_size;	/* of the core response; 0: the command has none */
	bool udata;		/* driver data may follow, in and out */
	void *resp;		/* set: where the response is, if readable there */
	bool plain;		/* set: sent as rdma-core sends it, response whole */
};

/*
 * The page unmapped at the start, while nothing maps it again (msync()
 * fails on an unmapped range); else a page below vm.mmap_min_addr, which
 * nothing maps but on purpose.  Either way a copy there faults.
 */
static unsigned char *unmapped_page(void)
{
	if (g.unmapped != (unsigned char *)g.page && !msync(g.unmapped, g.page, MS_ASYNC))
		g.unmapped = (unsigned char *)g.page;
	return g.unmapped;
}

/* Where the response goes; sets *readable when it may be read back. */
static __u64 choose_response(struct rng *r, size_t out_len, bool *readable, bool *whole)
{
	unsigned char *end = g.resp + g.page;
	unsigned int x = rnd(r, 100);
	size_t k;

	*readable = true;
	*whole = true;
	if (x < 84) {
		describe(" resp=ok");
		return (uintptr_t)g.resp;
	}
	if (x < 87) {
		describe(" resp=page-end");
		return (uintptr_t)(end - out_len);
	}
	*whole = false;
	if (x < 91 && out_len >= 4) {
		/* The last k bytes are past the page. */
		k = 4 * (1 + rnd(r, out_len / 4));
		describe(" resp=straddle-%zu", k);
		return (uintptr_t)(end - out_len + k);
	}
	*readable = false;
	x = rnd(r, 4);
	switch (x) {
	case 0:
		describe(" resp=null");
		return 0;
	case 1:
		describe(" resp=unmapped");
		return (uintptr_t)unmapped_page();
	case 2:
		describe(" resp=read-only");
		return (uintptr_t)g.rdonly;
	default:
		describe(" resp=kernel");
		return 0xffff888000000000ULL;
	}
}

static int send_write(struct rng *r, int fd, struct wcmd *c)
{
	__u64 buf[160] = {};
	struct ib_uverbs_cmd_hdr *hdr = (struct ib_uverbs_cmd_hdr *)buf;
	unsigned char *body = (unsigned char *)(hdr + 1), *p;
	size_t in_len = c->size, extra = 0, out_len = 0, total, count, k, i;
	__u32 command = c->command;
	unsigned int lm, x;
	long in_words;
	bool readable = false, whole = false, short_out = false;
	__u64 response;
	ssize_t n;

	c->resp = NULL;
	c->plain = false;
	if (c->resp_size) {
		out_len = c->resp_size + (c->udata ? 8 * rnd(r, 5) : 0);
		x = rnd(r, 100);
		if (x < 4) {
			out_len = 4 * rnd(r, c->resp_size / 4);
			short_out = true;
			describe(" out=short");
		} else if (x < 14) {
			out_len += 4 * (1 + rnd(r, 16));
			describe(" out=long");
		}
		response = choose_response(r, out_len, &readable, &whole);
		memcpy(c->body, &response, sizeof(response));
		if (readable && response + 4 <= (uintptr_t)(g.resp + g.page))
			c->resp = (void *)(uintptr_t)response;
	} else if (chance(r, 50)) {
		out_len = 4 * (1 + rnd(r, 8));
		describe(" out=unasked");
	}

	memcpy(body, c->body, c->size);
	lm = rnd(r, 100);
	c->plain = lm < 80 && (!c->resp_size || (whole && !short_out));
	if (lm < 80) {
		/* as it should be */
	} else if (lm < 84) {
		in_len = 4 * rnd(r, c->size / 4);
		describe(" in=short");
	} else if (lm < 86) {
		in_len = 0;
		describe(" in=none");
	} else if (lm < 90) {
		extra = 4 * (1 + rnd(r, 8));
		describe(" in=long-zero");
	} else if (lm < 94) {
		extra = 4 * (1 + rnd(r, 8));
		for (i = 0; i < extra; i++)
			body[c->size + i] = (unsigned char)rnext(r);
		body[c->size + rnd(r, extra)] |= 1;
		describe(" in=long-junk");
	} else if (lm < 96) {
		describe(" in=words-mismatch");
	} else if (lm < 97) {
		describe(" in=tiny-write");
	} else if (lm < 98) {
		command |= 0x100u << rnd(r, 23);
		describe(" cmd=reserved-bits");
	} else {
		describe(" in=straddle");
	}
	total = sizeof(*hdr) + in_len + extra;
	in_words = total / 4;
	if (lm >= 94 && lm < 96) {
		in_words += chance(r, 500) ? 1 + rnd(r, 3) : -(long)(1 + rnd(r, 2));
		if (in_words < 0)
			in_words = 0;
	}
	hdr->command = command;
	hdr->in_words = in_words;
	hdr->out_words = out_len / 4;
	count = total;
	if (lm == 96)
		count = 1 + rnd(r, sizeof(*hdr) - 1);

	p = g.req;
	if (lm >= 98 && total >= sizeof(*hdr) + 4) {
		/* The last k bytes of the request are past the page. */
		k = 4 * (1 + rnd(r, (total - sizeof(*hdr)) / 4));
		p = g.req + g.page - total + k;
		memcpy(p, buf, total - k);
	} else {
		memcpy(p, buf, total);
	}
	n = write(fd, p, count);
	if (n < 0)
		return -errno;
	return (size_t)n == count ? 0 : RET_SHORT;
}

/*
 * What an ioctl attribute is, for the ways to get it wrong: the kernel
 * checks each kind differently (uverbs_ioctl.c:uverbs_process_attr).
 */
enum akind {
	A_IDR,		/* a handle, inline; len must be 0 */
	A_CONST,	/* UVERBS_ATTR_CONST_IN: a value, inline, len exactly 8 */
	A_FLAGS,	/* UVERBS_ATTR_FLAGS_IN: inline, len 4 or 8 */
	A_IN,		/* a buffer in: inline up to 8 bytes, else a pointer */
	A_OUT,		/* a buffer out: always a pointer */
};

/* Attributes of a method call as it should be (GET_CONTEXT has the most). */
#define MAX_IATTRS	4

/* An ioctl method call as it should be; send_ioctl() gets it wrong at times. */
struct icmd {
	__u16 object;
	__u16 method;
	__u16 nr_ids;		/* the method's own attribute ids are below this */
	unsigned int n;
	struct ib_uverbs_attr attrs[MAX_IATTRS];
	enum akind kind[MAX_IATTRS];
};

/*
 * Add an attribute to @c.  The mandatory flag is random: it only matters
 * for an attribute the method does not have (uverbs_ioctl.c:uverbs_set_attr).
 */
static void icmd_add(struct rng *r, struct icmd *c, __u16 id, enum akind kind, __u64 data,
		     __u16 len)
{
	if (c->n == MAX_IATTRS)
		return;
	c->attrs[c->n] = (struct ib_uverbs_attr){
		.attr_id = id,
		.len = len,
		.flags = chance(r, 500) ? UVERBS_ATTR_F_MANDATORY : 0,
		.data = data,
	};
	c->kind[c->n++] = kind;
}

/*
 * An output attribute for a struct of @size bytes (a multiple of 4): of the
 * length rdma-core gives, shorter or longer, and in a buffer of the kinds a
 * write()'s response gets.  Nothing is read back from it.
 */
static void icmd_out(struct rng *r, struct icmd *c, __u16 id, size_t size)
{
	unsigned int x = rnd(r, 100);
	size_t len = size;
	bool readable, whole;
	__u64 data;

	if (x < 4) {
		len = 4 * rnd(r, size / 4);
		describe(" out=short");
	} else if (x < 14) {
		len += 4 * (1 + rnd(r, 16));
		describe(" out=long");
	}
	data = choose_response(r, len, &readable, &whole);
	icmd_add(r, c, id, A_OUT, data, len);
}

/*
 * Send @c with RDMA_VERBS_IOCTL, mostly as it is, else with something
 * wrong in the header or in one attribute, or in where it is.  A handle
 * or value made 64 bits wide is left in @c, for the bookkeeping.
 */
static int send_ioctl(struct rng *r, int fd, struct icmd *c)
{
	__u64 buf[IOCTL_WORDS(MAX_IATTRS + 1)] = {};
	struct ib_uverbs_ioctl_hdr *hdr = (struct ib_uverbs_ioctl_hdr *)buf;
	struct ib_uverbs_attr *attrs = hdr->attrs;
	unsigned int x = rnd(r, 100), n = c->n, k = n ? rnd(r, n) : 0;
	unsigned char *p = g.req;
	size_t len, off;
	long length;
	__u16 l;

	hdr->object_id = c->object;
	hdr->method_id = c->method;
	hdr->driver_id = g.driver_id;
	memcpy(attrs, c->attrs, n * sizeof(*attrs));
	/* From 93 on, one attribute is changed: a call without any is sent as it is. */
	if (!n && x >= 93)
		x = 0;
	if (x < 80) {
		/* as it should be */
	} else if (x < 82) {
		if (n > 1 && chance(r, 500)) {
			/* One left out, mandatory or not, the others there. */
			memmove(&attrs[k], &attrs[k + 1], (n - k - 1) * sizeof(*attrs));
			n--;
			describe(" attrs=drop-%u", c->attrs[k].attr_id);
		} else {
			n = 0;
			describe(" attrs=none");
		}
	} else if (x < 85) {
		/* An attribute this method does not have, first or last. */
		struct ib_uverbs_attr unknown = {
			.attr_id = c->nr_ids + rnd(r, 8),
			.flags = chance(r, 500) ? UVERBS_ATTR_F_MANDATORY : 0,
			.data = rnext(r),
		};

		if (chance(r, 500)) {
			memmove(&attrs[1], &attrs[0], n * sizeof(*attrs));
			attrs[0] = unknown;
		} else {
			attrs[n] = unknown;
		}
		n++;
		describe(" attrs=unknown%s", unknown.flags ? "-mandatory" : "");
	} else if (x < 86) {
		hdr->reserved1 = rnext(r) | 1;
		describe(" hdr=reserved1");
	} else if (x < 87) {
		hdr->reserved2 = rnd(r, 0xffffffff) + 1;
		describe(" hdr=reserved2");
	} else if (x < 88) {
		describe(" hdr=length");
	} else if (x < 89) {
		hdr->driver_id = g.driver_id + 1 + rnd(r, 64);
		describe(" hdr=driver_id");
	} else if (x < 90) {
		/* Past the last method of UVERBS_OBJECT_DEVICE too. */
		hdr->method_id = c->method + 8 + rnd(r, 8);
		describe(" hdr=method");
	} else if (x < 91) {
		/* No such object: ids of the core namespace end far below. */
		hdr->object_id = 0x0f00 + rnd(r, 0x100);
		describe(" hdr=object");
	} else if (x < 92) {
		describe(" hdr=unmapped");
	} else if (x < 93) {
		describe(" attrs=straddle");
	} else if (x < 95) {
		attrs[n++] = attrs[k];
		describe(" attrs=twice");
	} else if (x < 96) {
		l = 4 * rnd(r, 5);
		attrs[k].len = l != attrs[k].len ? l : l + 4;
		describe(" attr%u=len", attrs[k].attr_id);
	} else if (x < 97) {
		attrs[k].attr_data.reserved = 1 + rnd(r, 0xffff);
		describe(" attr%u=reserved", attrs[k].attr_id);
	} else if (x < 99) {
		switch (c->kind[k]) {
		case A_IDR:
		case A_CONST:
			/* Not a 32-bit handle or value: past the xarray, negative, too big. */
			if (chance(r, 500))
				attrs[k].data |= 1ULL << (32 + rnd(r, 31));
			else
				attrs[k].data |= 1ULL << 63;
			if (c->kind[k] == A_IDR)
				describe(" handle=64-bit");
			else
				describe(" value%u=64-bit", attrs[k].attr_id);
			break;
		case A_FLAGS:
			/* Flags above bit 31 only count when 8 bytes long. */
			attrs[k].data |= 1ULL << (32 + rnd(r, 32));
			describe(" flags%u=64-bit%s", attrs[k].attr_id,
				 attrs[k].len == 8 ? "" : "-ignored");
			break;
		default:
			/* A pointer that is not canonical. */
			attrs[k].data |= 1ULL << 63;
			describe(" ptr%u=non-canonical", attrs[k].attr_id);
			break;
		}
		c->attrs[k].data = attrs[k].data;
	} else {
		attrs[k].flags |= 0x8000;
		describe(" attr%u=flags", attrs[k].attr_id);
	}
	hdr->num_attrs = n;
	len = sizeof(*hdr) + n * sizeof(*attrs);
	length = len;
	if (x == 87)
		length += chance(r, 500) ? (long)(8 * (1 + rnd(r, 4))) : -8L;
	hdr->length = length;

	if (x == 91) {
		p = unmapped_page();
	} else if (x == 92 && n) {
		/* The header in the page, the last bytes of the attributes past it. */
		off = 4 * (1 + rnd(r, n * sizeof(*attrs) / 4));
		p = g.req + g.page - len + off;
		memcpy(p, buf, len - off);
	} else {
		memcpy(p, buf, len);
	}
	return ioctl(fd, RDMA_VERBS_IOCTL, p) ? -errno : 0;
}

/* ------------------------------------------------------------------ */
/* Address handle attributes.                                          */

static bool gid_v4mapped(const __u8 *gid)
{
	static const __u8 prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

static bool gid_multicast(const __u8 *gid)
{
	return gid[0] == 0xff || (gid_v4mapped(gid) && (gid[12] & 0xf0) == 0xe0);
}

static bool gid_link_local(const __u8 *gid)
{
	static const __u8 prefix[8] = { 0xfe, 0x80 };

	return !memcmp(gid, prefix, sizeof(prefix));
}

/*
 * Whether creating an AH from @a would make the kernel wait for a
 * neighbour that never answers: only a link-local destination of the
 * fuzzer's can (verbs.c:ib_resolve_unicast_gid_dmac resolves it through
 * the IP stack unless the source GID is RoCE v1; addr.c:rdma_resolve_ip
 * fails an IPv4 source with an IPv6 destination at once).
 */
static bool ah_may_wait(const struct ib_uverbs_ah_attr *a)
{
	const struct gid_ent *e;

	if (!a->is_global || !g.port_exists[a->port_num] || !g.gid_tbl[a->port_num])
		return false;
	if (gid_multicast(a->grh.dgid) || !gid_link_local(a->grh.dgid))
		return false;
	e = &g.gid_tbl[a->port_num][a->grh.sgid_index];
	switch (e->state) {
	case GID_NONE:
		return false;	/* cache.c:rdma_get_gid_attr fails first */
	case GID_V1:
		return false;	/* the MAC is in the GID */
	case GID_V2:
		return !gid_v4mapped(e->gid);
	default:
		return true;
	}
}

static void gen_dgid(struct rng *r, __u8 *d)
{
	unsigned int x = rnd(r, 100), i;

	memset(d, 0, 16);
	if (x < 45 && g.ngids) {
		memcpy(d, g.gids[rnd(r, g.ngids)], 16);
		describe(" dgid=given");
	} else if (x < 60) {
		d[0] = 0xff;
		d[1] = 0x0e;
		for (i = 2; i < 16; i++)
			d[i] = rnext(r);
		describe(" dgid=mcast6");
	} else if (x < 70) {
		d[10] = 0xff;
		d[11] = 0xff;
		d[12] = 0xe0 | rnd(r, 16);
		for (i = 13; i < 16; i++)
			d[i] = rnext(r);
		describe(" dgid=mcast4");
	} else if (x < 74) {
		describe(" dgid=zero");
	} else if (x < 77) {
		d[15] = 1;
		describe(" dgid=loopback");
	} else if (x < 87) {
		d[0] = 0xfe;
		d[1] = 0x80;
		for (i = 8; i < 16; i++)
			d[i] = rnext(r);
		describe(" dgid=link-local");
	} else {
		d[0] = 0x20 + rnd(r, 0x20);
		for (i = 1; i < 16; i++)
			d[i] = rnext(r);
		/* Never 2001:db8::/32: on-link in the test's network. */
		if (d[0] == 0x20 && d[1] == 0x01 && d[2] == 0x0d && d[3] == 0xb8)
			d[3] ^= 0x01;
		describe(" dgid=global");
	}
}

static void gen_ah_attr(struct rng *r, struct ib_uverbs_ah_attr *a)
{
	static const __u8 bad_ports[] = { 0, 2, 3, 255 };

	if (chance(r, 880))
		a->port_num = 1;
	else
		a->port_num = chance(r, 500) ? bad_ports[rnd(r, 4)] : rnd(r, 256);
	a->is_global = chance(r, 920) ? 1 : chance(r, 500) ? 0 : 1 + rnd(r, 255);
	if (chance(r, 850))
		a->grh.sgid_index = g.sgid;
	else
		a->grh.sgid_index = chance(r, 500) ? rnd(r, 40) : rnd(r, GID_TBL);
	a->grh.hop_limit = rnd(r, 256);
	a->grh.traffic_class = rnd(r, 256);
	a->grh.flow_label = chance(r, 700) ? rnd(r, 1 << 20) : (__u32)rnext(r);
	a->sl = chance(r, 800) ? rnd(r, 16) : rnd(r, 256);
	a->dlid = chance(r, 700) ? 0 : rnd(r, 0x10000);
	a->src_path_bits = chance(r, 800) ? 0 : rnd(r, 256);
	a->static_rate = chance(r, 800) ? 0 : rnd(r, 256);
	if (chance(r, 50)) {
		a->reserved = 1 + rnd(r, 255);
		a->grh.reserved = 1 + rnd(r, 255);
	}
	describe(" port=%s sgid=%s global=%u", a->port_num == 1 ? "1" : "other",
		 a->grh.sgid_index == g.sgid ? "given" : "other", !!a->is_global);
	gen_dgid(r, a->grh.dgid);
	/*
	 * -w: now and then, at most MAX_WAITS times a run, the destination
	 * that never answers (with the IPv4 source GID, ib_core's 1000 ms
	 * wait for its neighbour, then ETIMEDOUT); the first CREATE_AH of the
	 * run's second half if none had it before, so that a short run has
	 * one too.  From the PRNG and the command's index alone: both cores
	 * see the same commands.
	 */
	if (g.have_silent && g.waits < MAX_WAITS &&
	    (chance(r, 3) || (!g.waits && g.index >= g.count / 2))) {
		memcpy(a->grh.dgid, g.silent, 16);
		g.waits++;
		describe("->silent");
		return;
	}
	if (ah_may_wait(a)) {
		/* Multicast instead: never resolved. */
		memset(a->grh.dgid, 0, 16);
		a->grh.dgid[0] = 0xff;
		a->grh.dgid[1] = 0x0e;
		a->grh.dgid[15] = 1 + rnd(r, 255);
		describe("->mcast6");
	}
}

/* ------------------------------------------------------------------ */
/* The commands.                                                       */

static int do_get_context(struct rng *r, struct ufd *u)
{
	struct ib_uverbs_get_context c = {};
	struct wcmd w = {
		.command = IB_USER_VERBS_CMD_GET_CONTEXT,
		.body = &c,
		.size = sizeof(c),
		.resp_size = sizeof(struct ib_uverbs_get_context_resp),
		.udata = true,
	};
	int ret = send_write(r, u->fd, &w);
	__u32 async_fd;

	if (!ret) {
		if (u->ctx)
			note_surprise(C_GET_CONTEXT, "a second context on one file");
		u->ctx = true;
		if (w.resp) {
			/* async_fd comes first; the response may be unaligned */
			memcpy(&async_fd, w.resp, sizeof(async_fd));
			u->async_fd = async_fd;
		} else {
			note_surprise(C_GET_CONTEXT,
				      "succeeded with a response it cannot have written");
			u->async_fd = -1;
		}
	}
	return ret;
}

static int do_query_device(struct rng *r, struct ufd *u)
{
	struct ib_uverbs_query_device c = {};
	struct wcmd w = {
		.command = IB_USER_VERBS_CMD_QUERY_DEVICE,
		.body = &c,
		.size = sizeof(c),
		.resp_size = sizeof(struct ib_uverbs_query_device_resp),
	};

	return send_write(r, u->fd, &w);
}

static int do_query_port(struct rng *r, struct ufd *u)
{
	struct ib_uverbs_query_port c = {};
	struct wcmd w = {
		.command = IB_USER_VERBS_CMD_QUERY_PORT,
		.body = &c,
		.size = sizeof(c),
		.resp_size = sizeof(struct ib_uverbs_query_port_resp),
	};
	unsigned int x = rnd(r, 100);

	c.port_num = x < 70 ? 1 : x < 80 ? 0 : x < 88 ? 2 + rnd(r, 2) : rnd(r, 256);
	if (chance(r, 50))
		c.reserved[rnd(r, 7)] = 1 + rnd(r, 255);
	describe(" port=%s", c.port_num == 1 ? "1" : "other");
	return send_write(r, u->fd, &w);
}

/* The handle of a new object, from the response; false if unreadable. */
static bool new_handle(enum cmd cmd, const struct wcmd *w, __u32 *handle)
{
	if (!w->resp) {
		note_surprise(cmd, "succeeded with a response it cannot have written");
		return false;
	}
	memcpy(handle, w->resp, sizeof(*handle));
	return true;
}

static int do_alloc_pd(struct rng *r, struct ufd *u)
{
	struct ib_uverbs_alloc_pd c = {};
	struct wcmd w = {
		.command = IB_USER_VERBS_CMD_ALLOC_PD,
		.body = &c,
		.size = sizeof(c),
		.resp_size = sizeof(struct ib_uverbs_alloc_pd_resp),
		.udata = true,
	};
	int ret = send_write(r, u->fd, &w);
	__u32 h;

	if (!ret && new_handle(C_ALLOC_PD, &w, &h))
		add_obj(C_ALLOC_PD, u, h, T_PD, 0);
	return ret;
}

/*
 * An oracle independent of both cores for a sample of CREATE_AH: the
 * outcome the C contract gives a plain command (wcmd.plain) on a file with
 * a context, from the attribute, the file's objects (the bookkeeping) and
 * the source GID table alone, in the order ib_core checks them.  ORACLE_NONE
 * where the outcome depends on more: a unicast destination (the route, the
 * neighbour) or a RoCE v1 source (rv0 takes it, soft-RoCE's
 * rxe_av_chk_attr refuses its network type).  The differential runs check
 * every command; this checks that the cores agree with the contract, not
 * only with each other.
 */
#define ORACLE_NONE	1

static int ah_oracle(const struct ufd *u, const struct ib_uverbs_create_ah *c)
{
	const struct ib_uverbs_ah_attr *a = &c->attr;
	const struct gid_ent *e;
	int i;

	if (!u->ctx)
		return ORACLE_NONE;
	/* uverbs_cmd.c:ib_uverbs_create_ah, before the PD */
	if (!g.port_exists[a->port_num])
		return -EINVAL;
	/*
	 * rdma_core.c:lookup_get_idr_uobject: no object under the handle
	 * (the lowest free one is the new AH's, reserved empty); else
	 * rdma_lookup_get_uobject: an object of another type.
	 */
	i = find_obj(u, c->pd_handle);
	if (i < 0)
		return -ENOENT;
	if (u->live[i].type != T_PD)
		return -EINVAL;
	/* verbs.c:rdma_check_ah_attr: RoCE needs the GRH */
	if (!a->is_global)
		return -EINVAL;
	/* cache.c:rdma_get_gid_attr: past the table, then an empty entry */
	if (a->grh.sgid_index >= g.gid_tbl_sz[a->port_num])
		return -EINVAL;
	e = &g.gid_tbl[a->port_num][a->grh.sgid_index];
	if (e->state == GID_NONE)
		return -ENODATA;
	/* verbs.c:ib_resolve_eth_dmac: a multicast MAC, nothing to wait for */
	if (e->state == GID_V2 && gid_multicast(a->grh.dgid))
		return 0;
	return ORACLE_NONE;
}

static int do_create_ah(struct rng *r, unsigned int f)
{
	struct ufd *u = &g.fds[f];
	struct ib_uverbs_create_ah c = {};
	struct wcmd w = {
		.command = IB_USER_VERBS_CMD_CREATE_AH,
		.body = &c,
		.size = sizeof(c),
		.resp_size = sizeof(struct ib_uverbs_create_ah_resp),
		.udata = true,
	};
	int ret, pd_i, want;
	__u32 h;

	c.user_handle = rnext(r);
	c.pd_handle = choose_handle(r, f, T_PD);
	if (chance(r, 50))
		c.reserved = (__u32)rnext(r) | 1;
	gen_ah_attr(r, &c.attr);
	/* Before the command: the lowest free handle is free of it. */
	want = ah_oracle(u, &c);
	ret = send_write(r, u->fd, &w);
	if (w.plain && want != ORACLE_NONE) {
		g.oracle_checked++;
		if (g.plant_oracle)
			want = want ? 0 : -EINVAL;
		if (ret != want)
			note_surprise(C_CREATE_AH, "the contract gives %s, the kernel %s",
				      outcome(want), outcome(ret));
	}
	if (!ret && new_handle(C_CREATE_AH, &w, &h)) {
		pd_i = find_obj(u, c.pd_handle);
		if (pd_i < 0 || u->live[pd_i].type != T_PD)
			note_surprise(C_CREATE_AH, "an AH on a PD that is not live");
		add_obj(C_CREATE_AH, u, h, T_AH, c.pd_handle);
	}
	return ret;
}

static int do_open_xrcd(struct rng *r, struct ufd *u)
{
	static const __u32 flags[] = { 0, O_CREAT, O_EXCL, O_CREAT | O_EXCL };
	struct ib_uverbs_open_xrcd c = {};
	struct wcmd w = {
		.command = IB_USER_VERBS_CMD_OPEN_XRCD,
		.body = &c,
		.size = sizeof(c),
		.resp_size = sizeof(struct ib_uverbs_open_xrcd_resp),
		.udata = true,
	};
	unsigned int x = rnd(r, 100);
	int ret;
	__u32 h;

	if (x < 40) {
		c.fd = -1;
		describe(" file=none");
	} else if (x < 60) {
		c.fd = g.files[0];
		describe(" file=a");
	} else if (x < 75) {
		c.fd = g.files[1];
		describe(" file=b");
	} else if (x < 80) {
		c.fd = u->fd;
		describe(" file=uverbs");
	} else if (x < 90) {
		c.fd = g.closed_fd;
		describe(" file=closed");
	} else if (x < 95) {
		c.fd = -2 - rnd(r, 1000);
		describe(" file=negative");
	} else {
		c.fd = INT_MAX - rnd(r, 16);
		describe(" file=huge");
	}
	c.oflags = chance(r, 900) ? flags[rnd(r, 4)] : (__u32)rnext(r);
	describe(" oflags=%s%s", c.oflags & O_CREAT ? "C" : "-", c.oflags & O_EXCL ? "X" : "-");
	ret = send_write(r, u->fd, &w);
	if (!ret && new_handle(C_OPEN_XRCD, &w, &h))
		add_obj(C_OPEN_XRCD, u, h, T_XRCD, 0);
	return ret;
}

/*
 * After a destroy of @handle (of @type, sent to file @u) answered @ret:
 * the bookkeeping follows, and an answer it cannot explain is a surprise.
 */
static void after_destroy(enum cmd cmd, struct ufd *u, __u64 handle, enum otype type, int ret)
{
	int i = handle <= 0xffffffffULL ? find_obj(u, handle) : -1;
	bool live = i >= 0 && u->live[i].type == type;

	if (!ret) {
		if (!live) {
			note_surprise(cmd, "destroyed a %s that is not live", type_names[type]);
			return;
		}
		if (type == T_PD && u->live[i].nah)
			note_surprise(cmd, "destroyed a PD with %u live AHs", u->live[i].nah);
		del_obj(u, i);
		return;
	}
	if (ret == -ENOENT && live)
		note_surprise(cmd, "a live %s is not found", type_names[type]);
	if (ret == -EBUSY && type == T_PD && live && !u->live[i].nah)
		note_surprise(cmd, "a PD without AHs is busy");
}

static int do_destroy(struct rng *r, unsigned int f, enum cmd cmd, enum otype type)
{
	static const __u32 commands[T_NR] = {
		[T_PD] = IB_USER_VERBS_CMD_DEALLOC_PD,
		[T_AH] = IB_USER_VERBS_CMD_DESTROY_AH,
		[T_XRCD] = IB_USER_VERBS_CMD_CLOSE_XRCD,
	};
	struct ufd *u = &g.fds[f];
	__u32 handle = choose_handle(r, f, type);
	struct wcmd w = {
		.command = commands[type],
		.body = &handle,
		.size = sizeof(handle),
	};
	int ret;

	/* The three commands are a __u32 handle and nothing else. */
	ret = send_write(r, u->fd, &w);
	after_destroy(cmd, u, handle, type, ret);
	return ret;
}

/*
 * The ioctl destroy methods, which rdma-core's ibv_destroy_ah,
 * ibv_close_xrcd and ibv_dealloc_pd use (uverbs_std_types.c): the handle,
 * a mandatory attribute, and nothing else.  They end in the same
 * uobj_destroy() as the write() commands, and so in the same answers: a PD
 * that an AH uses is EBUSY (uverbs_std_types.c:uverbs_free_pd).
 */
static int do_destroy_ioctl(struct rng *r, unsigned int f, enum cmd cmd, enum otype type)
{
	static const struct {
		__u16 object, method, attr;
	} methods[T_NR] = {
		[T_PD] = { UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY,
			   UVERBS_ATTR_DESTROY_PD_HANDLE },
		[T_AH] = { UVERBS_OBJECT_AH, UVERBS_METHOD_AH_DESTROY,
			   UVERBS_ATTR_DESTROY_AH_HANDLE },
		[T_XRCD] = { UVERBS_OBJECT_XRCD, UVERBS_METHOD_XRCD_DESTROY,
			     UVERBS_ATTR_DESTROY_XRCD_HANDLE },
	};
	struct ufd *u = &g.fds[f];
	struct icmd c = {
		.object = methods[type].object,
		.method = methods[type].method,
		.nr_ids = methods[type].attr + 1,
	};
	__u32 handle = choose_handle(r, f, type);
	int ret;

	icmd_add(r, &c, methods[type].attr, A_IDR, handle, 0);
	ret = send_ioctl(r, u->fd, &c);
	/* The handle as sent: send_ioctl() may have made it 64 bits wide. */
	after_destroy(cmd, u, c.attrs[0].data, type, ret);
	return ret;
}

/*
 * UVERBS_METHOD_GET_CONTEXT, the way rdma-core opens a context
 * (ibv_cmd_get_context): the number of completion vectors and the core's
 * support bits out, both optional, and at times driver data, which rxe's
 * provider has none of.  No async event file comes with this context
 * (rdma-core asks for one with a method of its own).  A file that has a
 * context already gets EINVAL (uverbs_cmd.c:ib_init_ucontext), after the
 * two outputs are written, and leaks a task reference: sent only with -B.
 */
static int do_get_context_ioctl(struct rng *r, struct ufd *u)
{
	struct icmd c = {
		.object = UVERBS_OBJECT_DEVICE,
		.method = UVERBS_METHOD_GET_CONTEXT,
		.nr_ids = UVERBS_ATTR_GET_CONTEXT_FD_ARR + 1,
	};
	__u64 in;
	int ret;

	if (chance(r, 900))
		icmd_out(r, &c, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, sizeof(__u32));
	if (chance(r, 900))
		icmd_out(r, &c, UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT, sizeof(__u64));
	if (chance(r, 50)) {
		/*
		 * Inline, zero or not.  Below 4G, so that as a pointer (when
		 * send_ioctl() makes it longer than 8 bytes) it is one to
		 * nothing mapped, the same in every run.
		 */
		in = chance(r, 500) ? 0 : rnd(r, 0xffffffff);
		icmd_add(r, &c, UVERBS_ATTR_UHW_IN, A_IN, in, 4 * rnd(r, 3));
		icmd_out(r, &c, UVERBS_ATTR_UHW_OUT, 8 * (1 + rnd(r, 2)));
		describe(" uhw");
	}
	ret = send_ioctl(r, u->fd, &c);
	if (!ret) {
		if (u->ctx)
			note_surprise(C_IOCTL_GET_CONTEXT, "a second context on one file");
		/* An async_fd a write() GET_CONTEXT gave stays what it was. */
		u->ctx = true;
	}
	return ret;
}

/*
 * A port number for an ioctl: mostly 1, else 0, one past the device's, any
 * u8, or past a u8 (the type of QUERY_PORT's, a u32 for QUERY_GID_ENTRY).
 */
static __u64 ioctl_port(struct rng *r)
{
	unsigned int x = rnd(r, 100);
	__u64 port;

	if (x < 70)
		port = 1;
	else if (x < 78)
		port = 0;
	else if (x < 86)
		port = 2 + rnd(r, 2);
	else if (x < 93)
		port = rnd(r, 256);
	else
		port = 256 + rnd(r, 0xffffff00);
	describe(" port=%s", port == 1 ? "1" : port < 256 ? "other" : "wide");
	return port;
}

/*
 * UVERBS_METHOD_QUERY_PORT, rdma-core's ibv_query_port: the port number, a
 * u8 constant (a value past 255 is EINVAL), and the extended response, as
 * long as the kernel's at least (a longer one is zeroed past it).  It needs
 * a context.
 */
static int do_query_port_ioctl(struct rng *r, struct ufd *u)
{
	struct icmd c = {
		.object = UVERBS_OBJECT_DEVICE,
		.method = UVERBS_METHOD_QUERY_PORT,
		.nr_ids = UVERBS_ATTR_QUERY_PORT_RESP + 1,
	};

	icmd_add(r, &c, UVERBS_ATTR_QUERY_PORT_PORT_NUM, A_CONST, ioctl_port(r), sizeof(__u64));
	icmd_out(r, &c, UVERBS_ATTR_QUERY_PORT_RESP, sizeof(struct ib_uverbs_query_port_resp_ex));
	return send_ioctl(r, u->fd, &c);
}

/*
 * UVERBS_METHOD_QUERY_GID_ENTRY, rdma-core's ibv_query_gid_ex: port and
 * GID index (u32 constants), flags (none is defined: any is EINVAL), all
 * mandatory, and the entry out.  The answer depends on the GID table:
 * ENODATA for an empty entry, EINVAL past the table or for an index that
 * is a negative int (cache.c:rdma_get_gid_attr); tests/rverbs_fuzz.sh
 * keeps the table the same through its runs.
 */
static int do_query_gid_entry_ioctl(struct rng *r, struct ufd *u)
{
	struct icmd c = {
		.object = UVERBS_OBJECT_DEVICE,
		.method = UVERBS_METHOD_QUERY_GID_ENTRY,
		.nr_ids = UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY + 1,
	};
	__u64 port = ioctl_port(r), index, flags = 0;
	unsigned int x = rnd(r, 100);

	if (x < 60) {
		index = g.sgid;
		describe(" gid=given");
	} else if (x < 75) {
		index = rnd(r, 8);
		describe(" gid=small");
	} else if (x < 92) {
		index = rnd(r, GID_TBL);
		describe(" gid=any");
	} else {
		index = 0x80000000u | rnd(r, 0x80000000u);
		describe(" gid=negative");
	}
	if (chance(r, 100)) {
		flags = chance(r, 500) ? 1u << rnd(r, 32) : (__u32)rnext(r) | 1;
		describe(" flags=some");
	}
	icmd_add(r, &c, UVERBS_ATTR_QUERY_GID_ENTRY_PORT, A_CONST, port, sizeof(__u64));
	icmd_add(r, &c, UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX, A_CONST, index, sizeof(__u64));
	/* rdma-core sends the flags as a u32; a u64 is accepted as well. */
	icmd_add(r, &c, UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS, A_FLAGS, flags,
		 chance(r, 800) ? sizeof(__u32) : sizeof(__u64));
	icmd_out(r, &c, UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY, sizeof(struct ib_uverbs_gid_entry));
	return send_ioctl(r, u->fd, &c);
}

static void close_ufd(struct ufd *u)
{
	if (u->async_fd >= 0)
		close(u->async_fd);
	if (u->fd >= 0)
		close(u->fd);
	u->async_fd = -1;
	u->fd = -1;
}

/* Close the file (uverbs destroys what lives on it) and open it again. */
static int do_reopen(struct ufd *u)
{
	close_ufd(u);
	forget_all(u);
	u->fd = uverbs_open(g.dev);
	return u->fd < 0 ? u->fd : 0;
}

static enum cmd choose_cmd(struct rng *r, const struct ufd *u)
{
	unsigned int x, c;

	/* A file without a context gets one soon, mostly, either way. */
	if (!u->ctx && chance(r, 300))
		return chance(r, 500) ? C_IOCTL_GET_CONTEXT : C_GET_CONTEXT;
	x = rnd(r, 1000);
	for (c = 0; c < C_NR - 1; c++) {
		if (x < cmd_weights[c])
			break;
		x -= cmd_weights[c];
	}
	/* The kernel leaks a task reference on this one (-B, above). */
	if (c == C_IOCTL_GET_CONTEXT && u->ctx && !g.kernel_leaks)
		c = C_GET_CONTEXT;
	return c;
}

static void run_one(unsigned int index)
{
	static const enum otype cap_type[C_NR] = {
		[C_ALLOC_PD] = T_PD, [C_CREATE_AH] = T_AH, [C_OPEN_XRCD] = T_XRCD,
	};
	static const unsigned int caps[T_NR] = {
		[T_PD] = CAP_PD, [T_AH] = CAP_AH, [T_XRCD] = CAP_XRCD,
	};
	static const enum cmd destroy_of[T_NR] = {
		[T_PD] = C_DEALLOC_PD, [T_AH] = C_DESTROY_AH, [T_XRCD] = C_CLOSE_XRCD,
	};
	struct rng r = cmd_rng(index);
	unsigned int f = rnd(&r, g.nfds);
	struct ufd *u = &g.fds[f];
	enum cmd cmd = choose_cmd(&r, u);
	struct timespec t0, t1;
	bool had_ctx = u->ctx;
	double ms;
	int ret;

	g.index = index;
	g.desc[0] = '\0';
	describe(" fd%u", f);
	if ((cmd == C_ALLOC_PD || cmd == C_CREATE_AH || cmd == C_OPEN_XRCD) &&
	    count_type(u, cap_type[cmd]) >= caps[cap_type[cmd]])
		cmd = destroy_of[cap_type[cmd]];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	switch (cmd) {
	case C_GET_CONTEXT:
		ret = do_get_context(&r, u);
		break;
	case C_QUERY_DEVICE:
		ret = do_query_device(&r, u);
		break;
	case C_QUERY_PORT:
		ret = do_query_port(&r, u);
		break;
	case C_ALLOC_PD:
		ret = do_alloc_pd(&r, u);
		break;
	case C_DEALLOC_PD:
		ret = do_destroy(&r, f, cmd, T_PD);
		break;
	case C_CREATE_AH:
		ret = do_create_ah(&r, f);
		break;
	case C_DESTROY_AH:
		ret = do_destroy(&r, f, cmd, T_AH);
		break;
	case C_OPEN_XRCD:
		ret = do_open_xrcd(&r, u);
		break;
	case C_CLOSE_XRCD:
		ret = do_destroy(&r, f, cmd, T_XRCD);
		break;
	case C_IOCTL_AH_DESTROY:
		ret = do_destroy_ioctl(&r, f, cmd, T_AH);
		break;
	case C_IOCTL_XRCD_DESTROY:
		ret = do_destroy_ioctl(&r, f, cmd, T_XRCD);
		break;
	case C_IOCTL_PD_DESTROY:
		ret = do_destroy_ioctl(&r, f, cmd, T_PD);
		break;
	case C_IOCTL_GET_CONTEXT:
		ret = do_get_context_ioctl(&r, u);
		break;
	case C_IOCTL_QUERY_PORT:
		ret = do_query_port_ioctl(&r, u);
		break;
	case C_IOCTL_QUERY_GID_ENTRY:
		ret = do_query_gid_entry_ioctl(&r, u);
		break;
	default:
		ret = do_reopen(u);
		break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (ms > g.slowest_ms) {
		g.slowest_ms = ms;
		g.slowest = index;
	}
	if (ms > 500)
		g.slow++;

	if (!ret && !had_ctx && cmd != C_GET_CONTEXT && cmd != C_IOCTL_GET_CONTEXT &&
	    cmd != C_REOPEN)
		note_surprise(cmd, "succeeded on a file without a context");
	record(cmd, ret);
}

/* ------------------------------------------------------------------ */
/* Set-up and the end.                                                 */

/* The ports of the device and their GID tables, from sysfs. */
static int read_gid_tables(void)
{
	char path[160], buf[64];
	unsigned int p, i;
	struct stat st;
	int nports = 0;

	for (p = 1; p <= MAX_PORT; p++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u", g.dev, p);
		if (stat(path, &st))
			continue;
		g.port_exists[p] = true;
		nports++;
		g.gid_tbl[p] = calloc(GID_TBL, sizeof(struct gid_ent));
		if (!g.gid_tbl[p])
			return -ENOMEM;
		for (i = 0; i < GID_TBL; i++) {
			struct gid_ent *e = &g.gid_tbl[p][i];
			struct in6_addr a;

			/* One file per entry of the table, empty ones too. */
			snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/gids/%u",
				 g.dev, p, i);
			if (!stat(path, &st))
				g.gid_tbl_sz[p] = i + 1;
			snprintf(path, sizeof(path),
				 "/sys/class/infiniband/%s/ports/%u/gid_attrs/types/%u",
				 g.dev, p, i);
			if (read_text(path, buf, sizeof(buf)) < 0)
				continue;	/* empty, or past the table */
			if (!strcmp(buf, "RoCE v2"))
				e->state = GID_V2;
			else if (!strcmp(buf, "IB/RoCE v1"))
				e->state = GID_V1;
			else
				e->state = GID_OTHER;
			snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/gids/%u",
				 g.dev, p, i);
			if (read_text(path, buf, sizeof(buf)) < 0 ||
			    inet_pton(AF_INET6, buf, &a) != 1)
				e->state = GID_OTHER;	/* unknown: never from it to fe80 */
			else
				memcpy(e->gid, &a, 16);
		}
	}
	return nports ? 0 : -ENODEV;
}

/*
 * The device's driver id, which an ioctl must carry
 * (uverbs_ioctl.c:ib_uverbs_cmd_verbs): the one that makes a destroy of a
 * handle that does not exist fail with ENOENT rather than EINVAL.
 */
static void probe_driver_id(void)
{
	__u64 handle = 0x7fffffff;
	int fd = uverbs_open(g.dev);
	__u32 id;

	g.driver_id = RDMA_DRIVER_UNKNOWN;
	if (fd < 0)
		return;
	for (id = 0; id < 64; id++) {
		__u64 buf[IOCTL_WORDS(1)] = {};
		struct ib_uverbs_ioctl_hdr *hdr = (struct ib_uverbs_ioctl_hdr *)buf;

		*hdr = (struct ib_uverbs_ioctl_hdr){
			.length = sizeof(buf),
			.object_id = UVERBS_OBJECT_AH,
			.method_id = UVERBS_METHOD_AH_DESTROY,
			.num_attrs = 1,
			.driver_id = id,
		};
		hdr->attrs[0] = (struct ib_uverbs_attr){
			.attr_id = UVERBS_ATTR_DESTROY_AH_HANDLE,
			.flags = UVERBS_ATTR_F_MANDATORY,
			.data = handle,
		};
		if (ioctl(fd, RDMA_VERBS_IOCTL, buf) && errno == ENOENT) {
			g.driver_id = id;
			close(fd);
			return;
		}
	}
	fprintf(stderr, "uverbs_fuzz: no driver id gets past the ioctl header check\n");
	close(fd);
}

static int temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/uverbs_fuzz.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

static int setup_memory(void)
{
	unsigned char *m;

	g.page = sysconf(_SC_PAGESIZE);
	m = mmap(NULL, 6 * g.page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	g.req = m;
	g.resp = m + 2 * g.page;
	g.rdonly = m + 4 * g.page;
	g.unmapped = m + 5 * g.page;
	if (mprotect(m + g.page, g.page, PROT_NONE) ||
	    mprotect(m + 3 * g.page, g.page, PROT_NONE) ||
	    mprotect(g.rdonly, g.page, PROT_READ) ||
	    munmap(g.unmapped, g.page))
		return -errno;
	return 0;
}

/* Destroy, the ordinary way, whatever the bookkeeping says is live. */
static unsigned int destroy_all(void)
{
	static const enum otype order[] = { T_AH, T_XRCD, T_PD };
	unsigned int f, t, left = 0;
	int i, ret;

	for (f = 0; f < g.nfds; f++) {
		struct ufd *u = &g.fds[f];

		for (t = 0; t < ARRAY_SIZE(order); t++) {
			for (i = (int)u->n - 1; i >= 0; i--) {
				struct obj *o = &u->live[i];
				struct ib_uverbs_destroy_ah ah = { .ah_handle = o->handle };

				if (o->type != order[t])
					continue;
				if (o->type == T_AH)
					ret = uv_cmd(u->fd, IB_USER_VERBS_CMD_DESTROY_AH, &ah,
						     sizeof(ah), 0);
				else if (o->type == T_XRCD)
					ret = close_xrcd(u->fd, o->handle);
				else
					ret = dealloc_pd(u->fd, o->handle);
				if (ret) {
					out("# cleanup: fd%u: destroying a %s: %s", f,
					    type_names[o->type], outcome(ret));
					left++;
					continue;
				}
				del_obj(u, i);
			}
		}
		close_ufd(u);
	}
	return left;
}

/* "NAME n, NAME n" of the failures counted in @counts. */
static size_t list_errnos(char *buf, size_t size, const unsigned long *counts)
{
	const char *sep = "";
	size_t len = 0;
	unsigned int e;

	buf[0] = '\0';
	for (e = 1; e < MAX_ERRNO + 2 && len < size - 48; e++) {
		if (!counts[e])
			continue;
		len += snprintf(buf + len, size - len, "%s%s %lu", sep,
				e <= MAX_ERRNO ? outcome(-(int)e) : "other", counts[e]);
		sep = ", ";
	}
	return len;
}

static void summary(void)
{
	unsigned long total[MAX_ERRNO + 2] = {};
	unsigned long failed;
	unsigned int c, e;
	char errs[400];

	for (c = 0; c < C_NR; c++) {
		failed = 0;
		for (e = 0; e < MAX_ERRNO + 2; e++) {
			total[e] += g.outcomes[c][e];
			failed += e ? g.outcomes[c][e] : 0;
		}
		if (!failed && !g.outcomes[c][0])
			continue;
		if (failed) {
			list_errnos(errs, sizeof(errs), g.outcomes[c]);
			out("# %s: %lu ok, %lu failed (%s)", cmd_names[c], g.outcomes[c][0],
			    failed, errs);
		} else {
			out("# %s: %lu ok, 0 failed", cmd_names[c], g.outcomes[c][0]);
		}
	}
	if (g.quiet) {
		list_errnos(errs, sizeof(errs), total);
		out("# outcomes: ok %lu%s%s", total[0], *errs ? ", " : "", errs);
	}
}

static const char usage_text[] =
	"usage: uverbs_fuzz [-q] [-v] [-B] [-O] [-n COUNT] [-s SEED] [-w GID]\n"
	"                   DEV SGID_INDEX GID...\n";

static void bad_usage(void)
{
	fputs(usage_text, stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int i, left;
	bool seeded = false;
	char *end;
	int opt, ret;

	g.count = 20000;
	while ((opt = getopt(argc, argv, "n:s:qvBOw:")) != -1) {
		switch (opt) {
		case 'n':
			g.count = strtoul(optarg, &end, 0);
			if (*end || !*optarg)
				bad_usage();
			break;
		case 's':
			g.seed = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				bad_usage();
			seeded = true;
			break;
		case 'q':
			g.quiet = true;
			break;
		case 'v':
			g.verbose = true;
			break;
		case 'B':
			g.kernel_leaks = true;
			break;
		case 'O':
			g.plant_oracle = true;
			break;
		case 'w':
			if (inet_pton(AF_INET6, optarg, g.silent) != 1)
				bad_usage();
			g.have_silent = true;
			break;
		default:
			bad_usage();
		}
	}
	if (argc - optind < 3 || argc - optind - 2 > MAX_GIDS)
		bad_usage();
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		g.seed = (__u64)ts.tv_sec * 1000000007ULL ^ ts.tv_nsec ^ ((__u64)getpid() << 32);
	}
	/* Whatever happens next: the seed that reproduces it. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# seed %llu\n", (unsigned long long)g.seed);

	g.dev = argv[optind];
	g.sgid = strtol(argv[optind + 1], &end, 0);
	if (*end || g.sgid < 0 || g.sgid >= GID_TBL)
		bad_usage();
	for (i = optind + 2; i < (unsigned int)argc; i++) {
		if (inet_pton(AF_INET6, argv[i], g.gids[g.ngids]) != 1) {
			fprintf(stderr, "uverbs_fuzz: %s: not an IPv6 address\n", argv[i]);
			return 2;
		}
		g.ngids++;
	}

	ret = read_gid_tables();
	if (ret) {
		fprintf(stderr, "uverbs_fuzz: %s: no ports in sysfs: %s\n", g.dev, strerror(-ret));
		return 2;
	}
	ret = setup_memory();
	if (ret) {
		fprintf(stderr, "uverbs_fuzz: mapping buffers: %s\n", strerror(-ret));
		return 2;
	}
	for (i = 0; i < 2; i++) {
		g.files[i] = temp_file();
		if (g.files[i] < 0) {
			fprintf(stderr, "uverbs_fuzz: temporary file: %s\n", strerror(-g.files[i]));
			return 2;
		}
	}
	/* Far above what the run opens (lowest numbers first), and closed. */
	for (g.closed_fd = 777; fcntl(g.closed_fd, F_GETFD) != -1; g.closed_fd++)
		;
	probe_driver_id();

	{
		struct rng r = { .s = g.seed };

		g.nfds = 1 + rnd(&r, MAX_FDS);
	}
	for (i = 0; i < g.nfds; i++) {
		g.fds[i].async_fd = -1;
		g.fds[i].fd = uverbs_open(g.dev);
		if (g.fds[i].fd < 0) {
			fprintf(stderr, "uverbs_fuzz: opening the uverbs device of %s: %s\n",
				g.dev, strerror(-g.fds[i].fd));
			return 2;
		}
	}
	g.digest = 0xcbf29ce484222325ULL;
	out("# %s: %u commands on %u files", g.dev, g.count, g.nfds);

	for (i = 0; i < g.count; i++)
		run_one(i);

	left = destroy_all();
	for (i = 0; i < 2; i++)
		close(g.files[i]);
	out("# live at end: %u", left);
	summary();
	out("# CREATE_AH checked against the contract: %lu", g.oracle_checked);
	if (g.have_silent)
		out("# CREATE_AH to the destination that never answers: %u", g.waits);
	out("# surprises: %lu", g.surprises);
	printf("# digest %016llx\n", (unsigned long long)g.digest);
	fprintf(stderr, "uverbs_fuzz: slowest command %u took %.1f ms; %lu took over 500 ms\n",
		g.slowest, g.slowest_ms, g.slow);
	return left || g.surprises ? 1 : 0;
}
