# SPDX-License-Identifier: GPL-2.0
#
# rverbs: the RDMA verbs core for address handles and XRC domains in Rust.
#
#   make run        the demo, in QEMU (sets everything up on first use)
#   make check      lint, build and the whole kselftest suite in one VM boot
#
# Everything runs inside a pinned Debian sid root (scripts/mkroot.sh) against
# a kernel tree whose Rust metadata is rebuilt for Debian's stock kernel
# (scripts/mkkdir.sh), both cached under $(RVERBS_CACHE).  With your own
# Rust-enabled kernel build tree, "make KDIR=/path/to/build" builds the
# modules with your toolchain instead, with no root and no cache; the VM
# targets (vm, run, check, bench) always use the root and Debian's kernel.
#
# The kernel's build system reads Kbuild, not this file.

# Kbuild cannot build an external module in a directory whose path has a
# space ("building multiple external modules is not supported"), nor
# kselftest's lib.mk: say so first, not half-way through a run.
ifneq ($(word 2,$(CURDIR)),)
$(error the tree is at "$(CURDIR)", a path with a space: the kernel's Kbuild cannot build external modules there; clone it to a path without one)
endif

RVERBS_CACHE ?= /var/cache/rverbs
export RVERBS_CACHE

KREL := 7.2.13+deb14-amd64
JOBS ?= $(shell nproc)

# The version of rverbs (scripts/version.sh: git describe, as a Debian
# version), computed here on the host, where git sees the checkout (inside
# the toolchain root a worktree's git directory is out of sight), and handed
# to every build, script and package: modinfo, debugfs and the package
# always say the same.
RVERBS_VERSION := $(shell scripts/version.sh)
export RVERBS_VERSION

ifeq ($(KDIR),)
# The rebuilt tree of the stock kernel, used from inside the root.
KDIR_BUILD = $(shell scripts/kdir-path.sh build)
IN_ROOT := scripts/in-root.sh
KMAKE_VARS := CC=x86_64-linux-gnu-gcc-16 HOSTCC=x86_64-linux-gnu-gcc-16 \
	      KERNELRELEASE=$(KREL)
KDIR_DEP := kdir
else
KDIR_BUILD := $(KDIR)
IN_ROOT :=
KMAKE_VARS :=
KDIR_DEP :=
endif

# Already inside the toolchain root ("scripts/in-root.sh make install
# DESTDIR=..."): everything runs here.
ifneq ($(RVERBS_IN_ROOT),)
IN_ROOT :=
endif

# Signing by make install and make deb: SIGN_KEY= (private key, PEM) and
# SIGN_CERT= (its X.509 certificate, PEM or DER), both or neither.  They
# reach the toolchain root, which sees only the repository and the cache,
# as open file descriptors 3 and 4: the private key is never copied.
ifneq ($(SIGN_KEY)$(SIGN_CERT),)
ifeq ($(and $(SIGN_KEY),$(SIGN_CERT)),)
$(error SIGN_KEY= and SIGN_CERT= go together: a private key and its certificate)
endif
SIGN_ARGS = --sign /dev/fd/3 /dev/fd/4 3<"$(SIGN_KEY)" 4<"$(SIGN_CERT)"
endif

# Where make install puts the modules (DESTDIR=, absolute), and for which
# kernel release.
INSTALL_DESTDIR = $(if $(DESTDIR),$(abspath $(DESTDIR)))
INSTALL_KREL = $(if $(KDIR),$(shell cat $(KDIR)/include/config/kernel.release),$(KREL))

KMAKE = $(IN_ROOT) $(MAKE) -C $(KDIR_BUILD) M=$(CURDIR) -j$(JOBS) $(KMAKE_VARS) \
	RVERBS_VERSION=$(RVERBS_VERSION) $(if $(CLIPPY),CLIPPY=1) $(if $(V),V=$(V))

.PHONY: all modules toolchain kdir clean rust-analyzer vm run check lint harness-selftest \
	fmt help bench debug-kernel vm-debug check-debug check-all install uninstall deb

all: modules

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## make                 build rverbs.ko (after toolchain + kdir when needed)
modules: $(KDIR_DEP)
	$(KMAKE) modules
	$(IN_ROOT) scripts/klp-post-link.sh rverbs_takeover.ko $(KDIR_BUILD)

## make install         install both modules under /lib/modules/<release>/updates/
##                      as Debian's own (stripped, .ko.xz), then depmod; DESTDIR=,
##                      SIGN_KEY= SIGN_CERT= to sign them (Documentation/packaging.rst)
install: modules
	rm -rf build/install
	$(IN_ROOT) scripts/modules-install.sh $(SIGN_ARGS) $(CURDIR)/build/install
	scripts/install.sh $(CURDIR)/build/install $(INSTALL_DESTDIR)

## make uninstall       remove what make install installed, then depmod (DESTDIR=)
uninstall:
	scripts/install.sh --remove $(INSTALL_KREL) $(INSTALL_DESTDIR)

## make deb             the Debian package rverbs-modules-<release> in build/deb/
##                      (SIGN_KEY= SIGN_CERT= to sign the modules)
deb: modules
	$(IN_ROOT) scripts/mkdeb.sh $(SIGN_ARGS) $(CURDIR)/build/deb

## make toolchain       build or reuse the pinned Debian sid root
toolchain:
	@scripts/mkroot.sh

## make kdir            rebuild + verify the Rust metadata of the stock kernel
kdir: toolchain
	@scripts/mkkdir.sh

## make rust-analyzer   write rust-project.json for editors
rust-analyzer: $(KDIR_DEP)
	$(KMAKE) rust-analyzer
	$(IN_ROOT) python3 scripts/rust-analyzer.py rust-project.json rust/rverbs.rs

## make clean           remove build products and test output (build/)
clean:
	rm -rf rust-project.json .tmp_versions
	find . \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '*.mod.o' -o -name '.*.cmd' -o -name '*.d' -o -name '*.rmeta' \
		-o -name 'modules.order' -o -name 'Module.symvers' \
		-o -name 'bindings_generated.rs' -o -name 'version_generated.rs' \) -not -path './.git/*' -delete
	rm -rf tests/output build

## make vm CMD='...'    boot the stock kernel in QEMU and run CMD as root
vm: modules kdir
	@test -n "$$CMD" || { echo "usage: make vm CMD='...'" >&2; exit 2; }
	scripts/vm.sh "$$CMD"

## make run             the demo: load rverbs, bring up soft-RoCE, show it
run: modules kdir
	scripts/vm.sh $(CURDIR)/scripts/demo.sh

# The guest starts with a clean environment: the sizes of make bench
# (RVERBS_BENCH_COUNT=, _ROUNDS=, _KREPS=, _SECONDS=, _SCALE=, _SROUNDS=)
# reach it on its command line.
BENCH_ENV = $(foreach v,$(filter RVERBS_BENCH_%,$(.VARIABLES)),$(v)=$($(v)))

## make bench           C core vs Rust core benchmark, side by side, in the VM
bench: modules kdir
	@mkdir -p build/bench
	scripts/in-root.sh $(MAKE) -s -C tests OUTPUT=$(CURDIR)/build/bench all
	RVERBS_VM_OUT=$(CURDIR)/build/bench/vm scripts/vm.sh "$(BENCH_ENV) $(CURDIR)/scripts/bench.sh $(CURDIR)/build/bench"
	scripts/in-root.sh python3 scripts/bench-report.py $(CURDIR)/build/bench/vm/kernel.tsv $(CURDIR)/results
	cp build/bench/vm/fgraph.txt results/fgraph.txt

## make lint            rustfmt --check, clippy build, checkpatch on C files
lint: $(KDIR_DEP)
	scripts/lint.sh

## make fmt             reformat the Rust sources with rustfmt
fmt: $(KDIR_DEP)
	scripts/lint.sh --fix

## make check           lint + build + the whole kselftest suite, one VM boot
##                      (each step timed: scripts/step.sh)
check: kdir
	@scripts/step.sh "stock: lint" $(MAKE) -s lint
	@scripts/step.sh "stock: harness self-test" $(MAKE) -s harness-selftest
	@scripts/step.sh "stock: module and package" $(MAKE) deb
	scripts/check.sh

## make harness-selftest  planted harness failures must fail a run (host only)
harness-selftest:
	@scripts/harness-selftest.sh

## make debug-kernel    build or reuse the debug kernel (KASAN, lockdep, ...)
debug-kernel: toolchain
	@scripts/mkdebugkernel.sh

## make check-debug     the suite again on the debug kernel, one VM boot
check-debug: kdir
	@scripts/step.sh "debug: kernel" $(MAKE) -s debug-kernel
	@scripts/step.sh "debug: harness self-test" $(MAKE) -s harness-selftest
	scripts/check.sh --debug

## make check-all      both lanes, as CI (.ci/run) runs them: check and
##                      check-debug side by side, each step's time, and one
##                      closing line for both
check-all:
	scripts/check-all.sh

## make vm-debug CMD='...'  boot the debug kernel in QEMU and run CMD as root
##                      ($RVERBS_KO etc. name the modules built for it)
vm-debug: debug-kernel kdir
	@test -n "$$CMD" || { echo "usage: make vm-debug CMD='...'" >&2; exit 2; }
	scripts/debug-modules.sh
	RVERBS_VM_KERNEL=$$(scripts/dbgk-path.sh)/build scripts/vm.sh "$$CMD"
