// SPDX-License-Identifier: GPL-2.0
/*
 * net_rate: plain UDP and TCP throughput through the kernel's network
 * stack, for measuring what rverbs' receive hook costs packets that are
 * not RoCE (make bench).
 *
 *   net_rate udp-recv PORT SECONDS
 *   net_rate udp-send ADDR PORT SECONDS
 *   net_rate tcp-recv PORT SECONDS
 *   net_rate tcp-send ADDR PORT SECONDS
 *
 * udp-recv binds UDP PORT on all IPv4 addresses, prints "listening", and
 * counts the datagrams that reach the socket for SECONDS from the first
 * one, then prints "rate_per_s N" (datagrams per second).
 * udp-send sends 64-byte datagrams to ADDR:PORT as fast as it can for
 * SECONDS plus one (so that the receiver's window is covered), ignoring
 * the errors of a full queue.
 * tcp-recv listens on TCP PORT, prints "listening", accepts one
 * connection and reads from it for SECONDS from the first byte, then
 * prints "rate_per_s N" (bytes per second).
 * tcp-send connects to ADDR:PORT and writes 64 KiB at a time for SECONDS
 * plus one.
 * Exit status 0, or 2 on a usage or system error.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int fail(const char *what)
{
	perror(what);
	return 2;
}

static int bound(int type, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, type, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Reads from FD for SECONDS from the first read (DGRAMS: counts the reads,
 * not the bytes) and prints the rate.
 */
static int drain(int fd, double seconds, int dgrams)
{
	static char buf[65536];
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	double start = 0, t, give_up = now() + 30;
	long long n = 0;
	ssize_t r;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		r = recv(fd, buf, sizeof(buf), 0);
		t = now();
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return fail("recv");
		if (r == 0 && !dgrams)
			break;
		if (r > 0) {
			if (!start)
				start = t;
			n += dgrams ? 1 : r;
		}
		if (start && t - start >= seconds)
			break;
		/* Nothing within 30 s: the sender never came. */
		if (!start && t > give_up)
			break;
	}
	if (!start)
		return fail("nothing received");
	printf("rate_per_s %lld\n", (long long)(n / (now() - start)));
	return 0;
}

static int sender(int type, const char *addr, int port, double seconds)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	static char buf[65536];
	size_t len = type == SOCK_DGRAM ? 64 : sizeof(buf);
	double end = now() + seconds + 1;
	int fd = socket(AF_INET, type, 0);

	if (fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		return fail("socket");
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return fail("connect");
	while (now() < end) {
		if (send(fd, buf, len, MSG_NOSIGNAL) >= 0)
			continue;
		/* The receiver stopped reading: its window is over. */
		if (errno == EPIPE || errno == ECONNRESET)
			break;
		if (errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED &&
		    errno != EINTR)
			return fail("send");
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int fd, c;

	if (argc == 4 && !strcmp(argv[1], "udp-recv")) {
		fd = bound(SOCK_DGRAM, atoi(argv[2]));
		if (fd < 0)
			return fail("bind");
		printf("listening\n");
		fflush(stdout);
		return drain(fd, atof(argv[3]), 1);
	}
	if (argc == 4 && !strcmp(argv[1], "tcp-recv")) {
		fd = bound(SOCK_STREAM, atoi(argv[2]));
		if (fd < 0 || listen(fd, 1) < 0)
			return fail("listen");
		printf("listening\n");
		fflush(stdout);
		c = accept(fd, NULL, NULL);
		if (c < 0)
			return fail("accept");
		return drain(c, atof(argv[3]), 0);
	}
	if (argc == 5 && !strcmp(argv[1], "udp-send"))
		return sender(SOCK_DGRAM, argv[2], atoi(argv[3]), atof(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "tcp-send"))
		return sender(SOCK_STREAM, argv[2], atoi(argv[3]), atof(argv[4]));
	fprintf(stderr, "usage: net_rate udp-recv|tcp-recv PORT SECONDS\n"
			"       net_rate udp-send|tcp-send ADDR PORT SECONDS\n");
	return 2;
}
