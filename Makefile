# xpusim — GNU make. `make` builds ./xpusim; `make test` builds and runs the
# CUnit suites against the release build and the ASan + UBSan build.

CC      ?= cc
# -ffp-contract=off: a * b + c stays two roundings under every compiler (gcc
# already does so in ISO C mode, clang fuses by default), so the kernels'
# vector paths agree with their references and gcc and clang builds agree.
CSTD    := -std=c11 -D_DEFAULT_SOURCE -ffp-contract=off
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT     ?= -O2 -g

# The CPU kernels (kernels/cpu, the CPU calibration and check, make bench)
# are built where they have a tested path: x86-64 (AMX, AVX-512, AVX2 + FMA,
# portable, chosen at run time) and aarch64 (NEON). CPU_KERNELS=0 builds
# the predictor without them (`calibrate`/`validate --backend cpu` then say
# so, the kernel suites report themselves skipped); on other architectures
# that is the default.
XS_ARCH := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine 2>/dev/null)))
CPU_KERNELS ?= $(if $(filter x86_64 aarch64,$(XS_ARCH)),1,0)
# oneDNN is the reference library the CPU GEMMs are benchmarked against;
# the build works without it (the comparisons then say so).
# (the library must be one this compiler links: a cross build has none)
HAVE_DNNL := $(if $(filter 1,$(CPU_KERNELS)),$(shell test -f /usr/include/oneapi/dnnl/dnnl.h && \
               test -f "$$($(CC) -print-file-name=libdnnl.so)" && echo 1))
DNNL_CFLAGS := $(if $(HAVE_DNNL),-DXS_HAVE_DNNL)
DNNL_LIBS := $(if $(HAVE_DNNL),-ldnnl)
CFLAGS  += $(CSTD) $(WARN) $(OPT) -fopenmp $(DNNL_CFLAGS)
# GSL by its development links, or (the aarch64 cross build: Debian's
# libgsl-dev is one architecture's at a time) by its runtime sonames
GSL_LIBS ?= -lgsl -lgslcblas
LDLIBS  := -lcjson $(GSL_LIBS) -lm -fopenmp -pthread -ldl $(DNNL_LIBS)
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Three layers, linked as two archives and the command: sim/ is the
# predictor library (libxpusim.a), kernels/cpu and calibrate/ run and fit
# real kernels (libxscal.a, on top of it), cli/ is the command.
#
# The library is a stack of rooms (docs/design.md), lowest first. A room's
# files are compiled seeing only their own room's headers and those of the
# rooms it stands on (ROOM_<room>), so an include from a room above, or from
# calibrate/, kernels/ or cli/, fails to compile: the layering is checked by
# every build. The device classes (devices/gpu, cpu, tpu) stand on devices/
# and on nothing of each other; the workload knows no device. The kernels
# see only kernels/.
SIM_ROOMS := base core io devices devices/gpu devices/cpu devices/tpu workload workload/families \
             evaluate studies report api
ROOM_base     :=
ROOM_core     := base
ROOM_io       := core base
ROOM_devices  := io core base
ROOM_devices/gpu := devices io core base
ROOM_devices/cpu := devices io core base
ROOM_devices/tpu := devices io core base
ROOM_workload := io core base
ROOM_workload/families := workload io core base
ROOM_evaluate := workload devices io core base
ROOM_studies  := evaluate workload devices io core base
ROOM_report   := studies evaluate workload devices io core base
ROOM_api      := report studies evaluate workload devices io core base
# -I flags of room $(1): itself, then what it stands on (api: the public header too)
room_inc = $(foreach r,$(1) $(ROOM_$(1)),-Isim/$(r))$(if $(filter api,$(1)), -Iinclude)
SIM_INC_ALL := $(foreach r,$(SIM_ROOMS),-Isim/$(r))
# The flags a source file compiles with, from where it lives: a room of
# sim/; the kernels; everything above the library (calibrate/, cli/,
# tests/, tools/), which sees all of it.
KRN_INC  := -Ikernels/cpu -Ikernels/common
TOP_INC  := $(SIM_INC_ALL) $(KRN_INC) -Icalibrate -Icli -Ibuild -Ikernels/cuda -Iinclude
inc_of   = $(if $(filter sim/%,$(1)),$(call room_inc,$(patsubst sim/%/,%,$(dir $(1)))),$(if \
             $(filter kernels/%,$(1)),$(KRN_INC),$(TOP_INC)))
SIM_SRC  := $(foreach r,$(SIM_ROOMS),$(wildcard sim/$(r)/*.c))
CLI_SRC  := $(wildcard cli/*.c)
ifeq ($(CPU_KERNELS),1)
CAL_SRC  := $(wildcard kernels/cpu/*.c) $(filter-out calibrate/bench.c calibrate/cpu_absent.c,$(wildcard calibrate/*.c))
TEST_SRC := $(filter-out tests/fake_gpu.c tests/kernels_absent.c,$(wildcard tests/*.c))
else
CAL_SRC  := calibrate/cpu_absent.c $(filter-out calibrate/bench.c calibrate/cpu_%.c,$(wildcard calibrate/*.c))
TEST_SRC := $(filter-out tests/fake_gpu.c tests/test_kernels_%.c,$(wildcard tests/*.c))
endif
# The layer kernels (kernels/cpu/layer_ops_vec.c) are compiled once more per
# x86-64 vector ISA, each object a table of its own (layer_ops_vec.h) that
# runs only where the CPU has that ISA.
LOPS_VARIANTS := $(if $(filter 1,$(CPU_KERNELS)),$(if $(filter x86_64,$(XS_ARCH)),avx2 avx512))
LOPS_FLAGS_avx2 := -mavx2 -mfma -DXS_LOPS_AVX2
LOPS_FLAGS_avx512 := -mavx512f -DXS_LOPS_AVX512
CAL_OBJ   = $(CAL_SRC:%.c=$(1)/%.o) $(LOPS_VARIANTS:%=$(1)/kernels/cpu/layer_ops_vec_%.o)
# Every object records the headers it read (-MMD, beside it as .d), so a
# header's change rebuilds its includers only; -MP: a header removed since
# is no error. HEADERS remains for the rules without dependency files.
DEPFLAGS := -MMD -MP
# An object that has recorded no headers yet (never built, or built by a
# Makefile before DEPFLAGS) waits for every header, so a tree built before
# a header changed cannot link a stale object (a second expansion: $@ is the
# object).
.SECONDEXPANSION:
HEADERS_UNTIL_DEPS = $$(if $$(wildcard $$(basename $$@).d),,$$(HEADERS))
HEADERS  := $(wildcard $(SIM_ROOMS:%=sim/%/*.h) cli/*.h kernels/common/*.h kernels/cpu/*.h calibrate/*.h) \
            kernels/cuda/xs_cuda.h include/xpusim.h

.DEFAULT_GOAL := all
# BUILD=DIR puts the objects (and the command, as DIR/xpusim) in DIR
# instead of build/ and ./xpusim: test-clang builds there with clang.
BUILD ?= build
REL := $(BUILD)/rel
ASN := $(BUILD)/asan
XS := $(if $(filter build,$(BUILD)),xpusim,$(BUILD)/xpusim)
FAKE_GPU := $(REL)/libxs_fake_gpu.so
# what the suites' link waits for (test-clang and test-aarch64 build none:
# the suites dlopen build/rel's, or run none of the GPU tests)
FAKE_GPU_DEP ?= $(FAKE_GPU)

# The source version, recorded in calibrated device files: the header is
# rewritten only when the version changes, so only its includer rebuilds.
XS_VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
build/xs_version.h: FORCE
	@mkdir -p build; v='#define XS_VERSION "$(XS_VERSION)"'; \
	[ "$$(cat $@ 2>/dev/null)" = "$$v" ] || echo "$$v" > $@
FORCE:

.PHONY: validate-kept validate-heldout validate-tracecal validate-kernels
.PHONY: cuda test-cuda bench-cuda gpu-bundle gpu-campaign test-campaign
.PHONY: lib install uninstall test-install test-api-header check-layers
.PHONY: test-torch-lstm test-clang test-aarch64 deps-aarch64 test-nokern test-readme
.PHONY: FORCE all asan test test-rel test-asan test-py test-plots test-valgrind golden plots validate bench clean deps same-outputs measured-refresh

all: xpusim lib cuda

# --- release -----------------------------------------------------------------
$(REL)/%.o: %.c $(HEADERS_UNTIL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(call inc_of,$<) -c $< -o $@
$(REL)/calibrate/cpu_calibrate.o $(ASN)/calibrate/cpu_calibrate.o: build/xs_version.h
$(REL)/calibrate/cpu_threads_cal.o $(ASN)/calibrate/cpu_threads_cal.o: build/xs_version.h
$(REL)/calibrate/trace_calibrate.o $(ASN)/calibrate/trace_calibrate.o: build/xs_version.h
$(REL)/calibrate/cuda_calibrate.o $(ASN)/calibrate/cuda_calibrate.o: build/xs_version.h
$(REL)/libxpusim.a: $(SIM_SRC:%.c=$(REL)/%.o)
	rm -f $@ && ar rcs $@ $^
$(REL)/kernels/cpu/layer_ops_vec_%.o: kernels/cpu/layer_ops_vec.c $(HEADERS_UNTIL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LOPS_FLAGS_$*) $(KRN_INC) -c $< -o $@
$(REL)/libxscal.a: $(call CAL_OBJ,$(REL))
	rm -f $@ && ar rcs $@ $^
$(XS): $(CLI_SRC:%.c=$(REL)/%.o) $(REL)/libxscal.a $(REL)/libxpusim.a
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)
$(REL)/xpusim_tests: $(TEST_SRC:%.c=$(REL)/%.o) $(REL)/libxscal.a $(REL)/libxpusim.a | $(FAKE_GPU_DEP)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS) -lcunit

# --- the shared library (include/xpusim.h) ------------------------------------
# libxpusim.so.MAJOR.MINOR.PATCH, soname libxpusim.so.MAJOR: the version of
# include/xpusim.h, whose header comment says what bumps which. sim/ again
# as position-independent objects; the version script exports the public
# API alone (xs_* of xpusim.h), every internal name stays local, so a
# program can neither call nor interpose on them. -z defs: complete.
SO_VERSION := $(shell sed -n 's/^\#define XS_LIB_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' include/xpusim.h | paste -sd.)
SO_MAJOR   := $(firstword $(subst ., ,$(SO_VERSION)))
SO_REAL    := libxpusim.so.$(SO_VERSION)
SO_NAME    := libxpusim.so.$(SO_MAJOR)
PIC_SIM_OBJ := $(SIM_SRC:%.c=$(REL)/pic/%.o)
$(PIC_SIM_OBJ): $(REL)/pic/%.o: %.c $(HEADERS_UNTIL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -fPIC $(call inc_of,$<) -c $< -o $@
$(REL)/$(SO_REAL): $(PIC_SIM_OBJ) sim/api/xpusim.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(SO_NAME) -Wl,--version-script=sim/api/xpusim.map \
	  -Wl,-z,defs $(PIC_SIM_OBJ) -o $@ $(LDLIBS)
$(REL)/$(SO_NAME) $(REL)/libxpusim.so: $(REL)/$(SO_REAL)
	ln -sf $(SO_REAL) $@
lib: $(REL)/libxpusim.a $(REL)/$(SO_NAME) $(REL)/libxpusim.so

# --- install ------------------------------------------------------------------
# make install PREFIX=/opt/xpusim [DESTDIR=/stage]. The installed binary and
# library find their data in PREFIX/share/xpusim from where they are loaded
# (sim/io/paths.c), so no PREFIX is compiled in and one build installs anywhere.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR := $(DESTDIR)$(PREFIX)/bin
LIBDIR := $(DESTDIR)$(PREFIX)/lib
INCDIR := $(DESTDIR)$(PREFIX)/include
DATADIR := $(DESTDIR)$(PREFIX)/share/xpusim
MANDIR := $(DESTDIR)$(PREFIX)/share/man/man1
# xpusim.pc names PREFIX, so it is written at install time, never cached.
# The static library needs what sim/ links against: pkg-config --static.
# Its Libs carry an rpath to PREFIX/lib (RUNPATH: LD_LIBRARY_PATH still
# wins) for every PREFIX but /usr, so that `cc prog.c $(pkg-config --cflags
# --libs xpusim)` runs where the loader does not look (/opt, $HOME/.local,
# /usr/local on a system without it in ld.so.conf, or before ldconfig).
PC_RPATH ?= $(if $(filter /usr /usr/,$(PREFIX)),,-Wl$(comma)-rpath$(comma)$${libdir} )
comma := ,
define pc_text
prefix=$(PREFIX)
libdir=$${prefix}/lib
includedir=$${prefix}/include
datadir=$${prefix}/share/xpusim

Name: xpusim
Description: predicts the time, energy and cost of Transformer fine-tuning, kernel by kernel
Version: $(SO_VERSION)
Requires.private: libcjson
Libs: -L$${libdir} $(PC_RPATH)-lxpusim
Libs.private: -lm -fopenmp -pthread -ldl
Cflags: -I$${includedir}
endef
export pc_text
# Installed for real (no DESTDIR) by root: the ld.so cache refreshed, so
# that programs and Python find libxpusim.so.0 by its soname at once.
XS_LDCONFIG = @if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
	  ldc=$$(command -v ldconfig || echo /sbin/ldconfig); [ ! -x "$$ldc" ] || "$$ldc" || \
	  echo "make: ldconfig failed: run it as root for the loader to find libxpusim.so.0" >&2; fi
build/xpusim.1: xpusim tools/man.sh
	tools/man.sh ./xpusim $(SO_VERSION) > $@.tmp && mv $@.tmp $@
install: xpusim lib build/xpusim.1
	install -d $(BINDIR) $(LIBDIR)/pkgconfig $(INCDIR) $(MANDIR) $(DATADIR)
	install -m 755 xpusim $(BINDIR)/xpusim
	install -m 755 $(REL)/$(SO_REAL) $(LIBDIR)/$(SO_REAL)
	ln -sf $(SO_REAL) $(LIBDIR)/$(SO_NAME)
	ln -sf $(SO_NAME) $(LIBDIR)/libxpusim.so
	install -m 644 $(REL)/libxpusim.a $(LIBDIR)/libxpusim.a
	install -m 644 include/xpusim.h $(INCDIR)/xpusim.h
	printf "%s\n" "$$pc_text" > $(LIBDIR)/pkgconfig/xpusim.pc
	install -m 644 build/xpusim.1 $(MANDIR)/xpusim.1
	rm -rf $(DATADIR)/devices $(DATADIR)/scenarios $(DATADIR)/data $(DATADIR)/plots
	cp -R devices scenarios $(DATADIR)/
	install -d $(DATADIR)/plots $(DATADIR)/data
	install -m 644 plots/*.gp $(DATADIR)/plots/
	cp -R data/measured data/published $(DATADIR)/data/
	$(XS_LDCONFIG)
uninstall:
	rm -f $(BINDIR)/xpusim $(LIBDIR)/$(SO_REAL) $(LIBDIR)/$(SO_NAME) $(LIBDIR)/libxpusim.so \
	  $(LIBDIR)/libxpusim.a $(INCDIR)/xpusim.h $(LIBDIR)/pkgconfig/xpusim.pc $(MANDIR)/xpusim.1
	rm -rf $(DATADIR)
	$(XS_LDCONFIG)

# A GPU and NVML stand-in for the cuda backend's tests (tests/fake_gpu.c):
# one shared object both XS_CUDA_LIB and XS_NVML_LIB point at. Built
# without sanitizers: the ASan suites dlopen it too. Its GEMMs are timed by
# the predictor's own GEMM model, so sim/ goes in as a position-independent
# object set of its own (the release objects are not PIC), its symbols
# hidden: the copy inside cannot interpose on, or be interposed by, the
# loading program's; -z defs: every symbol resolved at link time.
FAKE_SIM_OBJ := $(SIM_SRC:%.c=$(REL)/fake/%.o)
$(FAKE_SIM_OBJ): $(REL)/fake/%.o: %.c $(HEADERS_UNTIL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(DEPFLAGS) -O2 -g -fPIC -fvisibility=hidden $(call inc_of,$<) -c $< -o $@
$(FAKE_GPU): tests/fake_gpu.c kernels/cuda/xs_cuda.h $(HEADERS) $(FAKE_SIM_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -fPIC -shared -pthread -Ikernels/cuda $(SIM_INC_ALL) \
	  tests/fake_gpu.c $(FAKE_SIM_OBJ) -o $@ -Wl,-z,defs -lcjson -lm

# --- CUDA (kernels/cuda) ------------------------------------------------------
# Built only where nvcc is found (PATH, then /usr/local/cuda); xpusim itself
# never links CUDA: it dlopens build/cuda/libxscuda.so (kernels/cuda/xs_cuda.h).
# A fat binary for every GPU from Turing to Hopper plus PTX for the newest;
# CUDA 13 has dropped Volta (sm_70). --fmad=false keeps a * b + c two
# roundings, as the CPU reference (kernels/common) has them, so the optimizer
# kernels agree with it bit for bit (-ffp-contract=off does the same for the
# host-side references in the .cu files, which g++ would fuse on an FMA host).
# CUDA_ARCHS=90 builds for one GPU only.
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA_ARCHS ?= 75 80 86 89 90
CUDA_NEWEST := $(lastword $(CUDA_ARCHS))
CUDA_LIBDIR := $(if $(NVCC),$(abspath $(dir $(NVCC))../lib64))
NVFLAGS := -std=c++17 -O3 -lineinfo --fmad=false -Xcompiler -fPIC,-Wall,-Wextra,-ffp-contract=off \
           -Werror all-warnings $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
           -gencode arch=compute_$(CUDA_NEWEST),code=compute_$(CUDA_NEWEST) \
           -Ikernels/common -Ikernels/cuda
# One CUDA runtime per process: the library and the programs that link it
# share libcudart.so (the toolkit's, beside cuBLAS) instead of a static copy each.
NVLIBS := -cudart shared -lcublasLt -lcublas -Xlinker -rpath,$(CUDA_LIBDIR)
CUDA_MAINS := kernels/cuda/cuda_tests.cu kernels/cuda/cuda_bench.cu
CUDA_SRC := $(filter-out $(CUDA_MAINS),$(wildcard kernels/cuda/*.cu))
CUDA_HDR := $(wildcard kernels/cuda/*.h kernels/cuda/*.cuh kernels/common/*.h)
CU := build/cuda
# The arch list is part of every object: a stamp rewritten only when it
# changes, so `make CUDA_ARCHS=90` rebuilds and a repeat does not.
$(CU)/archs.stamp: FORCE
	@mkdir -p $(CU); v='$(CUDA_ARCHS)'; [ "$$(cat $@ 2>/dev/null)" = "$$v" ] || echo "$$v" > $@
$(CU)/%.o: kernels/cuda/%.cu $(CUDA_HDR) $(CU)/archs.stamp
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@
$(CU)/libxscuda.so: $(CUDA_SRC:kernels/cuda/%.cu=$(CU)/%.o)
	$(NVCC) $(NVFLAGS) -shared $^ -o $@ $(NVLIBS)
# The test and bench programs link the library itself (found beside them,
# $$ORIGIN), so they test what xpusim loads and the fat binary is carried
# once, not three times (the bundle a device run carries is 64 MiB at most).
$(CU)/xs_cuda_tests: $(CU)/cuda_tests.o $(CU)/libxscuda.so
	$(NVCC) $(NVFLAGS) $< -o $@ -L$(CU) -lxscuda -Xlinker -rpath,'$$ORIGIN' $(NVLIBS)
$(CU)/xs_cuda_bench: $(CU)/cuda_bench.o $(CU)/libxscuda.so
	$(NVCC) $(NVFLAGS) $< -o $@ -L$(CU) -lxscuda -Xlinker -rpath,'$$ORIGIN' $(NVLIBS)
HAVE_CUDA := $(if $(NVCC),$(if $(CUDA_SRC),1))
ifeq ($(HAVE_CUDA),1)
cuda: $(CU)/libxscuda.so $(CU)/xs_cuda_tests $(CU)/xs_cuda_bench
# The job table's refusals and the optimizer kernels' blocks run on the
# host (no GPU needed), then the kernels against their CPU references on
# the GPU; without one the binary says so in one line and exits 77,
# reported here as skipped.
test-cuda: $(CU)/xs_cuda_tests
	@$(CU)/xs_cuda_tests --jobs > $(CU)/jobs.out || { cat $(CU)/jobs.out; echo "test-cuda: FAILED (job validation)"; exit 1; }
	@tail -1 $(CU)/jobs.out
	@$(CU)/xs_cuda_tests --emulate > $(CU)/emulate.out || { cat $(CU)/emulate.out; echo "test-cuda: FAILED (optimizer kernels emulated on the host)"; exit 1; }
	@tail -1 $(CU)/emulate.out
	@$(CU)/xs_cuda_tests; rc=$$?; \
	if [ $$rc -eq 77 ]; then echo "test-cuda: SKIPPED (no usable CUDA GPU on this host; the kernels were built, not run)"; \
	elif [ $$rc -ne 0 ]; then echo "test-cuda: FAILED (exit $$rc)"; exit 1; fi
# Probed first, so that a host without a GPU gets one line and the run
# itself streams its output. BENCH_CUDA_ARGS=--quick for a short run.
bench-cuda: $(CU)/xs_cuda_bench
	@why=$$($(CU)/xs_cuda_bench --probe); rc=$$?; \
	if [ $$rc -eq 77 ]; then echo "bench-cuda: skipped: $${why#xs_cuda_bench: skipped: }"; \
	elif [ $$rc -ne 0 ]; then echo "$$why"; echo "bench-cuda: FAILED (exit $$rc)"; exit 1; \
	else $(CU)/xs_cuda_bench $(BENCH_CUDA_ARGS); fi
else
CUDA_WHY := $(if $(NVCC),no CUDA sources in kernels/cuda,nvcc not found (PATH, /usr/local/cuda/bin))
cuda:
	@echo "cuda: $(CUDA_WHY): the CUDA kernels are not built; xpusim builds without them$(if $(NVCC),, (set NVCC=/path/to/nvcc))"
test-cuda:
	@echo "test-cuda: SKIPPED ($(CUDA_WHY): the CUDA kernels were not built)"
bench-cuda:
	@echo "bench-cuda: skipped: $(CUDA_WHY), the CUDA kernels were not built"
endif

# --- GPU campaign (calibrate/gpu/campaign.sh; DEVELOPERS.md) ---------------------
# gpu-bundle collects here what a GPU machine lacks (xpusim, the shared
# libraries it needs beyond the base system, the CUDA binaries) into
# build/gpu-bundle, for a `device` run to carry; gpu-campaign runs every GPU
# measurement there and packs it into OUT (the device tool's $$OUT).
GPU_BUNDLE := build/gpu-bundle
ifeq ($(HAVE_DNNL),1)
# oneDNN (libdnnl, ~39 MB) is only the reference the CPU GEMMs are compared
# with; it would take most of the 64 MiB a run carries. The bundle's xpusim
# has onednn.c compiled as on a host without it, every other object shared.
BUNDLE_XPUSIM := $(REL)/nodnnl/xpusim
$(REL)/nodnnl/onednn.o: kernels/cpu/onednn.c $(HEADERS_UNTIL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(DNNL_CFLAGS),$(CFLAGS)) $(DEPFLAGS) $(KRN_INC) -c $< -o $@
$(REL)/nodnnl/libxscal.a: $(filter-out $(REL)/kernels/cpu/onednn.o,$(call CAL_OBJ,$(REL))) $(REL)/nodnnl/onednn.o
	rm -f $@ && ar rcs $@ $^
$(BUNDLE_XPUSIM): $(CLI_SRC:%.c=$(REL)/%.o) $(REL)/nodnnl/libxscal.a $(REL)/libxpusim.a
	$(CC) $(filter-out $(DNNL_CFLAGS),$(CFLAGS)) $^ -o $@ $(filter-out $(DNNL_LIBS),$(LDLIBS))
else
BUNDLE_XPUSIM := xpusim
endif
gpu-bundle: $(BUNDLE_XPUSIM) cuda
	XPUSIM_BUNDLE_BIN=$(BUNDLE_XPUSIM) CUDA_ARCHS="$(CUDA_ARCHS)" calibrate/gpu/bundle.sh $(GPU_BUNDLE)
gpu-campaign:
	@test -n "$(OUT)" || { echo "gpu-campaign: give OUT=DIR (an empty or new folder; on a device run, \$$OUT)"; exit 2; }
	calibrate/gpu/campaign.sh "$(OUT)"

# --- ASan + UBSan ------------------------------------------------------------
$(ASN)/%.o: %.c $(HEADERS_UNTIL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(DEPFLAGS) $(call inc_of,$<) -c $< -o $@
$(ASN)/libxpusim.a: $(SIM_SRC:%.c=$(ASN)/%.o)
	rm -f $@ && ar rcs $@ $^
$(ASN)/kernels/cpu/layer_ops_vec_%.o: kernels/cpu/layer_ops_vec.c $(HEADERS_UNTIL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(DEPFLAGS) $(LOPS_FLAGS_$*) $(KRN_INC) -c $< -o $@
$(ASN)/libxscal.a: $(call CAL_OBJ,$(ASN))
	rm -f $@ && ar rcs $@ $^
$(ASN)/xpusim: $(CLI_SRC:%.c=$(ASN)/%.o) $(ASN)/libxscal.a $(ASN)/libxpusim.a
	$(CC) $(CFLAGS) $(SAN) $^ -o $@ $(LDLIBS)
$(ASN)/xpusim_tests: $(TEST_SRC:%.c=$(ASN)/%.o) $(ASN)/libxscal.a $(ASN)/libxpusim.a | $(FAKE_GPU)
	$(CC) $(CFLAGS) $(SAN) $^ -o $@ $(LDLIBS) -lcunit

asan: $(ASN)/xpusim

# --- valgrind memcheck -----------------------------------------------------
# The release suites under memcheck, and every CLI run they make: XPUSIM_BIN
# runs ./xpusim under valgrind too (exit 99 on an error, its report in
# build/valgrind/). No error and no definite or indirect leak anywhere;
# tests/valgrind.supp holds third-party noise only. Under valgrind the CPU
# reports no AVX-512, so the kernels run the avx2 set (and the suites'
# portable). The calibrate -> validate loop is skipped (XS_TEST_UNDER_VALGRIND):
# its quick calibration alone ran past 13 minutes under valgrind. valgrind
# runs one thread at a time: OpenMP threads that spin while they wait (the
# default) stall each other (kernels_bert: 325 s instead of 12 s here).
VG := valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect \
      --suppressions=tests/valgrind.supp --num-callers=30
# The suites run as VG_SHARDS interleaved parts side by side (valgrind
# runs a process's threads one at a time), each part's output shown whole
# once it is done.
VG_SHARDS ?= 2
test-valgrind: xpusim $(REL)/xpusim_tests
	@rm -rf build/valgrind; mkdir -p build/valgrind
	@for k in $$(seq 0 $$(($(VG_SHARDS) - 1))); do \
	  OMP_WAIT_POLICY=passive XS_TEST_UNDER_VALGRIND=1 XS_TEST_SHARD=$$k/$(VG_SHARDS) \
	  XPUSIM_BIN="$(VG) --error-exitcode=99 --log-file=build/valgrind/cli.%p.log ./xpusim" \
	    $(VG) --error-exitcode=1 --log-file=build/valgrind/suites.$$k.log $(REL)/xpusim_tests \
	    > build/valgrind/part.$$k.out 2>&1 & pids="$$pids $$!"; \
	done; fail=0; for p in $$pids; do wait $$p || fail=1; done; \
	cat build/valgrind/part.*.out; \
	if [ $$fail -ne 0 ]; then echo "test-valgrind: a part failed (its output above)"; exit 1; fi
	@bad=$$(grep -L 'ERROR SUMMARY: 0 errors' build/valgrind/*.log); \
	if [ -n "$$bad" ]; then cat $$bad; echo "test-valgrind: errors in $$bad"; exit 1; fi; \
	echo "test-valgrind: the suites ($(VG_SHARDS) parts) and $$(ls build/valgrind/cli.*.log | wc -l) CLI runs are clean"

$(REL)/xpusim_bench: $(REL)/calibrate/bench.o $(REL)/libxscal.a $(REL)/libxpusim.a
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(REL)/xpusim_bench_predict: $(REL)/tools/bench_predict.o $(REL)/tools/bench_validate.o $(REL)/libxpusim.a
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# Benchmarks print figures (and `bench: NAME VALUE` lines); they assert nothing.
ifeq ($(CPU_KERNELS),1)
bench: $(REL)/xpusim_bench $(REL)/xpusim_bench_predict xpusim
	$(REL)/xpusim_bench
	$(REL)/xpusim_bench_predict ./xpusim
else
bench: $(REL)/xpusim_bench_predict xpusim
	@echo "bench: CPU kernels skipped: this build has none (CPU_KERNELS=0)"
	$(REL)/xpusim_bench_predict ./xpusim
endif

# --- tests -------------------------------------------------------------------
# The suites run the library in-process and the CLI through XPUSIM_BIN.
test: test-rel test-asan test-py test-plots test-install test-cuda test-campaign test-torch-lstm \
      test-nokern test-readme check-layers

test-rel: $(XS) $(REL)/xpusim_tests
	XPUSIM_BIN=./$(XS) $(REL)/xpusim_tests

# The release suites built with clang in build/clang (its command is
# build/clang/xpusim), so gcc and clang both compile and pass. The GPU
# stand-in the suites dlopen is the default build's (build/rel).
test-clang: $(FAKE_GPU)
	$(MAKE) CC=clang BUILD=build/clang FAKE_GPU_DEP= test-rel

# The suites of a build without the CPU kernels (what CPU_KERNELS=0 builds),
# linked from this build's objects in seconds: calibrate/cpu_absent.c in
# place of the CPU backend, tests/kernels_absent.c in place of the kernel
# suites (sim/ and the other objects compile the same either way).
ifeq ($(CPU_KERNELS),1)
NOKERN := $(BUILD)/nokern
NOKERN_CAL := $(filter-out $(REL)/calibrate/cpu_%.o,$(filter $(REL)/calibrate/%.o,$(CAL_SRC:%.c=$(REL)/%.o))) \
              $(REL)/calibrate/cpu_absent.o
NOKERN_TESTS := $(filter-out $(REL)/tests/test_kernels_%.o,$(TEST_SRC:%.c=$(REL)/%.o)) \
                $(REL)/tests/kernels_absent.o
$(NOKERN)/xpusim: $(CLI_SRC:%.c=$(REL)/%.o) $(NOKERN_CAL) $(REL)/libxpusim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $^ -o $@ $(filter-out $(DNNL_LIBS),$(LDLIBS))
$(NOKERN)/xpusim_tests: $(NOKERN_TESTS) $(NOKERN_CAL) $(REL)/libxpusim.a | $(FAKE_GPU)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $^ -o $@ $(filter-out $(DNNL_LIBS),$(LDLIBS)) -lcunit
test-nokern: $(NOKERN)/xpusim $(NOKERN)/xpusim_tests
	@XPUSIM_BIN=$(NOKERN)/xpusim $(NOKERN)/xpusim_tests > $(NOKERN)/tests.out 2>&1 || \
	  { cat $(NOKERN)/tests.out; echo "test-nokern: FAILED"; exit 1; }
	@n=$$(nm $(NOKERN)/xpusim | grep -c ' xs_krn_'); \
	echo "test-nokern: without the CPU kernels: $$(grep -E '^ +tests ' $(NOKERN)/tests.out | \
	  awk '{print $$3 " tests, " $$5 " failed"}'), $$n kernel symbols in the command"
endif

# --- aarch64 under qemu-user -------------------------------------------------
# The tree cross-compiled for aarch64 (gcc-aarch64-linux-gnu; Debian's
# arm64 cJSON, GSL, CUnit and libgomp through multiarch: `make deps-aarch64`)
# into build/aarch64; then, under qemu-aarch64-static, the kernel suites
# (every kernel set the emulated CPU runs: neon and portable) and the
# predictor's GEMM and device suites, and predictions that must equal this
# host's byte for byte. Where the tools are missing it says so and skips.
# Timings under emulation mean nothing: the calibration is not run there.
AARCH64_CC ?= aarch64-linux-gnu-gcc
QEMU_AARCH64 ?= qemu-aarch64-static
AARCH64_SUITES ?= kernels_gemm kernels_optim kernels_layer kernels_bert kernels_host gemm device
AARCH64_PREDICT ?= a100-sxm4-80gb xeon-amx-2c tpu-v4
AARCH64_WHY = $(strip $(if $(shell command -v $(AARCH64_CC)),,$(AARCH64_CC) not found;) \
                $(if $(shell command -v $(QEMU_AARCH64)),,$(QEMU_AARCH64) not found;) \
                $(if $(wildcard /usr/lib/aarch64-linux-gnu/libcunit.so),,no arm64 libcunit (make deps-aarch64);) \
                $(if $(wildcard /usr/lib/aarch64-linux-gnu/libgsl.so.27),,no arm64 libgsl27 (make deps-aarch64)))
test-aarch64: xpusim
	@if [ -n "$(AARCH64_WHY)" ]; then echo "test-aarch64: SKIPPED ($(AARCH64_WHY))"; exit 0; fi; \
	$(MAKE) --no-print-directory CC=$(AARCH64_CC) BUILD=build/aarch64 FAKE_GPU_DEP= \
	  GSL_LIBS="-l:libgsl.so.27 -l:libgslcblas.so.0" \
	  build/aarch64/xpusim build/aarch64/rel/xpusim_tests >build/aarch64-build.log 2>&1 || \
	  { tail -20 build/aarch64-build.log; echo "test-aarch64: FAILED (cross build)"; exit 1; }; \
	for s in $(AARCH64_SUITES); do \
	  OMP_WAIT_POLICY=passive XS_TEST_SUITE=$$s XPUSIM_BIN="$(QEMU_AARCH64) build/aarch64/xpusim" \
	    $(QEMU_AARCH64) build/aarch64/rel/xpusim_tests > build/aarch64/$$s.out 2>&1 || \
	    { cat build/aarch64/$$s.out; echo "test-aarch64: FAILED ($$s under qemu)"; exit 1; }; \
	  echo "test-aarch64: $$s: $$(grep -E '^ +asserts' build/aarch64/$$s.out | \
	    awk '{print $$3 " asserts, " $$5 " failed"}')"; \
	done; \
	for d in $(AARCH64_PREDICT); do \
	  ./xpusim predict -d $$d -s bert-base-squad --format json > build/aarch64/x86.json && \
	  $(QEMU_AARCH64) build/aarch64/xpusim predict -d $$d -s bert-base-squad --format json \
	    > build/aarch64/arm.json && cmp -s build/aarch64/x86.json build/aarch64/arm.json || \
	    { echo "test-aarch64: FAILED (predict -d $$d differs from x86-64's)"; exit 1; }; \
	done; \
	echo "test-aarch64: predict on $(AARCH64_PREDICT): byte for byte as on x86-64"

test-asan: $(ASN)/xpusim $(ASN)/xpusim_tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	XPUSIM_BIN=$(ASN)/xpusim $(ASN)/xpusim_tests

# The GPU measurement kit's helpers (no GPU, no PyTorch needed): the rows
# and traces it writes must be ones xpusim reads.
test-py: xpusim
	XPUSIM_BIN=./xpusim python3 -m unittest discover -s calibrate/gpu -p 'test_*.py'

# PyTorch's nn.LSTM with the weights of xpusim's LSTM kernel must give its
# output (tools/torch_lstm_threads.py, a small shape); Debian's python3-torch
# is for /usr/bin/python3. Says "skipped: REASON" where PyTorch is missing.
TORCH_PY := $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
test-torch-lstm: xpusim
	for p in fp32 bf16; do \
	  $(TORCH_PY) tools/torch_lstm_threads.py --xpusim ./xpusim -d xeon-amx-2c --quick --reps 2 \
	    --set model.hidden=40 --set model.input_size=24 --set inference.seq=12 \
	    --set inference.batch=3 --set inference.precision=$$p || exit 1; \
	done

# The public header alone compiles as C11 (pedantic) and C++11; the library
# exports xpusim.h's functions and nothing else.
test-api-header: lib
	tests/api_check.sh header $(REL)/$(SO_REAL)

# The installed tree: make install into a temporary prefix, the example
# built there with pkg-config (shared and static) and run, the Python
# package pip-installed (offline) against it and its unit tests run, then
# make uninstall leaving nothing behind.
test-install: test-api-header
	tests/api_check.sh install

# The figures' inputs: every column plots/*.gp reads by name is in what
# xpusim writes, and gnuplot draws each figure from a small input (~1 s).
test-plots: xpusim
	XPUSIM_BIN=./xpusim tests/plots_check.sh

# The README's examples re-run: every block of ./xpusim commands with an
# output block under it prints that output now (`...` lines stand for any
# lines); tools/readme_check.py --update rewrites the blocks that moved.
# Commands that time this host or need a user's files are listed, not run.
test-readme: xpusim
	python3 tools/readme_check.py --bin ./xpusim

# The GPU campaign without a GPU: every part skipped with its reason, the
# packing within the device tool's limits (also with planted large files), a
# failing or hanging part not stopping the next, a signal still packing, and
# import.sh on the campaign's tarball. Fake tools, ~15 s.
test-campaign: xpusim
	XPUSIM_BIN=./xpusim tests/campaign_check.sh

include tests/fuzz/fuzz.mk

# The layering, shown with the build: every room's include of a room it
# does not stand on fails to compile, the objects' symbols point down (or
# from a registry up to the records it lists), and no object files form a
# circle (tools/check_layers.py).
LAYER_REGISTRIES := sim/devices/backend.c=devices/gpu,devices/cpu,devices/tpu \
                    sim/io/family.c=workload/families
check-layers: xpusim $(REL)/xpusim_tests
	python3 tools/check_layers.py --cc "$(CC)" --objects $(REL) \
	  $(foreach r,$(SIM_ROOMS),--room '$(r)=$(ROOM_$(r))') $(LAYER_REGISTRIES:%=--registry %)

# A refactoring's proof: 171 fixed commands run with BASE's binary and this
# tree's, stdout, stderr and exit status compared byte for byte.
same-outputs:
	@test -n "$(BASE)" || { echo "same-outputs: give BASE=<git revision>"; exit 2; }
	tests/same_outputs.sh $(BASE)

# Rewrite the golden op list after a deliberate workload change; review the diff.
golden: xpusim
	./xpusim workload -s tests/data/scenarios/tiny.json --format csv -o tests/data/golden/tiny-ops.csv

# Plots (PNG + SVG in plots/out): the default scenario across the GPUs
# (compare's default devices, no --all), a GEMM sweep showing tile and
# wave quantization, and `xpusim plot`'s four figures (the README's).
PLOT_SCENARIO ?= bert-large-squad
SWEEP_DEVICE ?= a100-sxm4-80gb
SWEEP_M ?= 4096
SWEEP_K ?= 4096
SWEEP_N ?= 4096
plots: xpusim
	mkdir -p plots/out
	./xpusim compare -s $(PLOT_SCENARIO) --format csv -o plots/out/compare-$(PLOT_SCENARIO).csv
	gnuplot -e "in='plots/out/compare-$(PLOT_SCENARIO).csv'; out='plots/out/compare-$(PLOT_SCENARIO)'; title='$(PLOT_SCENARIO): predicted throughput and run cost by device'" plots/compare.gp
	./xpusim gemm -d $(SWEEP_DEVICE) --m $(SWEEP_M) --k $(SWEEP_K) --dtype fp16 --sweep n=1:$(SWEEP_N) -o plots/out/gemm-sweep-$(SWEEP_DEVICE).csv
	gnuplot -e "in='plots/out/gemm-sweep-$(SWEEP_DEVICE).csv'; out='plots/out/gemm-sweep-$(SWEEP_DEVICE)'; title='$(SWEEP_DEVICE): fp16 GEMM m=$(SWEEP_M) k=$(SWEEP_K), n = 1..$(SWEEP_N)'" plots/gemm-sweep.gp
	./xpusim plot time-by-kind -s $(PLOT_SCENARIO) -o plots/out
	./xpusim plot cost-time -s $(PLOT_SCENARIO) -o plots/out
	./xpusim plot roofline -d $(SWEEP_DEVICE) -s $(PLOT_SCENARIO) -o plots/out
	./xpusim plot waterfall -d $(SWEEP_DEVICE) -s $(PLOT_SCENARIO) -o plots/out
	@echo "plots: plots/out/compare-$(PLOT_SCENARIO), gemm-sweep-$(SWEEP_DEVICE), time-by-kind, cost-time, roofline, waterfall (.png and .svg)"

# Run the published development sets through `xpusim validate` (the dev sets
# in the measured-run format live in data/measured; MEASURED= to use others),
# print the summary, draw predicted vs measured (one panel per metric) to
# plots/out/validate.png and the signed errors by device to validate-bias.png.
MEASURED ?= $(wildcard data/measured/dev-*.csv) $(wildcard data/published/*.csv) $(wildcard calibrate/measured/*.csv)
validate: xpusim
	@mkdir -p plots/out
	@test -n "$(strip $(MEASURED))" || { echo "validate: no measured-run CSV found (set MEASURED=...)"; exit 2; }
	./xpusim validate $(foreach f,$(MEASURED),--measured $(f)) --format csv -o plots/out/validate.csv || true
	./xpusim validate $(foreach f,$(MEASURED),--measured $(f)) | sed -n '/^summary/,$$p'
	gnuplot -e "in='plots/out/validate.csv'; out='plots/out/validate'" plots/validate.gp
	@echo "validate: plots/out/validate and validate-bias (.png and .svg), rows in plots/out/validate.csv"

# Every kernel class against published per-kernel timings (issue 41):
# NeuSight's dev-GPU measurements converted by tools/neusight_rows.py (into
# build/, never committed: the raw files are the record) and the team's
# data/published/kernels.csv. Prints the summary and one bench line per
# class and device: the median predicted / measured time of the rows whose
# kernel, not the harness floor, sets the figure.
KERNEL_ROWS := build/kernels/neusight-dev.csv
NODE_ROWS := build/kernels/neusight-nodes.csv
$(KERNEL_ROWS): tools/neusight_rows.py $(wildcard data/measured/neusight/kernels-*.csv)
	@mkdir -p $(@D)
	python3 tools/neusight_rows.py --dir data/measured/neusight -o $@
# NeuSight's V100 training step node by node (its FX nodes run alone)
$(NODE_ROWS): tools/neusight_rows.py data/measured/neusight/train-nodes-v100.csv
	@mkdir -p $(@D)
	python3 tools/neusight_rows.py --dir data/measured/neusight --nodes $@
validate-kernels: xpusim $(KERNEL_ROWS) $(NODE_ROWS)
	@mkdir -p plots/out
	./xpusim validate --measured $(KERNEL_ROWS) --measured $(NODE_ROWS) \
	  --measured data/published/kernels.csv --format csv -o plots/out/validate-kernels.csv
	./xpusim validate --measured $(KERNEL_ROWS) --measured $(NODE_ROWS) \
	  --measured data/published/kernels.csv | sed -n '/^summary/,$$p' | tee build/kernels/summary.txt
	@sed -n '/^by class and device/,/^[^ ]/p' build/kernels/summary.txt | \
	  awk '$$1 != "by" && $$5 == "median" { printf "bench: kernel_class_median_ratio %s %s %s\n", $$1, $$2, $$6 }'

# The held-out rule of issue 18 (data/holdout/README.md): validate-kept
# judges model changes on the kept rows only; validate-heldout is for the end.
HOLDOUT_DIR := build/holdout
define holdout_split
	@rm -rf $(HOLDOUT_DIR)/$(1) && mkdir -p $(HOLDOUT_DIR)/$(1)
	@for f in $(MEASURED); do o=$(HOLDOUT_DIR)/$(1)/$${f##*/}; awk -v part=$(1) -f data/holdout/split.awk $$f > $$o; \
	  [ $$(wc -l < $$o) -gt 1 ] || rm -f $$o; done
endef
validate-kept: xpusim
	$(call holdout_split,kept)
	./xpusim validate $$(for f in $(HOLDOUT_DIR)/kept/*.csv; do printf -- '--measured %s ' $$f; done) | sed -n '/^summary/,$$p'
# One simulated trace per board from its first kept amp_fp16 BERT-base row,
# the calibrated file validated on the board's other kept rows
# (calibrate/README.md, "A simulated trace").
validate-tracecal: validate-kept
	XPUSIM=./xpusim calibrate/trace_dev_check.sh $(HOLDOUT_DIR)/kept/dev-bert-finetune-lambda.csv build/tracecal
validate-heldout: xpusim
	$(call holdout_split,held)
	./xpusim validate $$(for f in $(HOLDOUT_DIR)/held/*.csv; do printf -- '--measured %s ' $$f; done) | sed -n '/^summary/,$$p'

# data/measured is the repository's copy of the team's shared development
# sets (../shared/reference/measured), so a clone validates on its own; the
# validate suite fails when the two differ. This refreshes the copy.
SHARED_MEASURED ?= ../shared/reference/measured
measured-refresh:
	@test -d $(SHARED_MEASURED) || { echo "measured-refresh: $(SHARED_MEASURED) not found (SHARED_MEASURED=DIR)"; exit 2; }
	@cd data/measured && find . -mindepth 1 -depth | while read -r f; do [ -e "$(abspath $(SHARED_MEASURED))/$$f" ] || \
	  { echo "measured-refresh: removing data/measured/$${f#./} (gone from $(SHARED_MEASURED))"; rm -rf "$$f"; }; done
	cp -pR $(SHARED_MEASURED)/* data/measured/
	chmod -R u+w data/measured
	@echo "measured-refresh: data/measured now equals $(SHARED_MEASURED)"

# Install the Debian packages the build needs; idempotent, uses sudo when
# not root. nvcc is not among them: the CUDA kernels build where the CUDA
# toolkit is installed (this machine has one at /usr/local/cuda) and are
# skipped, with a line saying so, where it is not. python3-torch (PyTorch 1.13,
# CPU) is the client test-torch-lstm compares the LSTM kernel with: 221
# packages, 76 MB to fetch, 772 MB installed, 2 min 18 s on the 2-core build
# host (measured 2026-11-28). python3-venv: test-install pip-installs the
# Python package into a fresh venv, as docs/install.md tells a user to
# (python/ builds with its own backend: no setuptools or wheel needed).
DEB_PKGS := build-essential libcjson-dev libcunit1-dev libgsl-dev gnuplot-nox libdnnl-dev python3 \
            clang libclang-rt-14-dev libomp-dev valgrind pkg-config man-db groff-base python3-pip \
            python3-venv python3-torch
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps: all installed"; exit 0; fi; \
	sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	echo "deps: installing$$missing"; \
	$$sudo apt-get update && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y $$missing

# What test-aarch64 needs: the cross compiler, qemu-user, and the arm64
# libraries it links (Debian multiarch: adds the arm64 architecture to
# dpkg, one more package index); idempotent.
# GSL's arm64 runtime only: libgsl-dev is not co-installable across
# architectures, and its arm64 copy would remove the host's (the headers
# are the host's; the cross build links the sonames, GSL_LIBS below)
DEB_PKGS_ARM64 := gcc-aarch64-linux-gnu qemu-user-static \
                  libcjson-dev:arm64 libgsl27:arm64 libgslcblas0:arm64 libcunit1-dev:arm64 \
                  libgomp1:arm64
deps-aarch64:
	@missing=""; for p in $(DEB_PKGS_ARM64); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps-aarch64: all installed"; exit 0; fi; \
	sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	echo "deps-aarch64: installing$$missing"; \
	dpkg --print-foreign-architectures | grep -qx arm64 || $$sudo dpkg --add-architecture arm64; \
	$$sudo apt-get update && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y $$missing

clean:
	rm -rf build xpusim

# the headers each object read when it was last built (DEPFLAGS); the
# compiler writes them, no rule makes them (else make would look for one)
%.d: ;
-include $(shell find build $(BUILD) -name '*.d' 2>/dev/null | sort -u)
