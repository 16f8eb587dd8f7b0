# tests/fuzz/fuzz.mk — libFuzzer harnesses, one per input format the tool
# reads, built with clang (ASan + UBSan) into build/fuzz/. Included by the
# top Makefile, whose CSTD, WARN, DEPFLAGS, SIM_SRC and inc_of it uses.
#   make fuzz-build                  the harnesses
#   make fuzz-ci [FUZZ_SECONDS=45]   each harness for FUZZ_SECONDS from its seeds, then
#                                    every saved regression input; fails on any report
#   make fuzz [FUZZ_RUNS=1000000]    a long local run (FUZZ_TARGETS=... picks harnesses)
#   make fuzz-regress                the regression inputs alone
#   make fuzz-seeds                  rewrite seeds/ and dicts/ from the shipped files

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 45
FUZZ_RUNS    ?= 1000000
FUZZ_RSS_MB  ?= 2048
FUZZ_TARGETS ?= device scenario hfconfig measured trace pipeline cudameas grid inference
FZ           := build/fuzz
# fuzzer-no-link: coverage feedback in the library too, libFuzzer's main
# linked into the harnesses only. Errors abort, so libFuzzer sees them.
FZ_SAN       := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FZ_CFLAGS    := $(CSTD) $(WARN) -O1 -g $(FZ_SAN) -fsanitize=fuzzer-no-link
FZ_LIBS      := -lcjson -lgsl -lgslcblas -lm

.PHONY: fuzz-build fuzz-ci fuzz fuzz-regress fuzz-seeds

# Each file sees what it sees in the main build (inc_of: a library room
# its own room and those below), the harnesses their folder too.
FZ_OBJ       := $(patsubst %.c,$(FZ)/obj/%.o,$(wildcard tests/fuzz/*.c))
$(FZ)/obj/%.o: %.c $(HEADERS_UNTIL_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FZ_CFLAGS) $(DEPFLAGS) $(call inc_of,$<) $(if $(filter tests/fuzz/%,$<),-Itests/fuzz) \
	  -c $< -o $@
$(FZ)/libxpusim.a: $(SIM_SRC:%.c=$(FZ)/obj/%.o)
	rm -f $@ && ar rcs $@ $^
$(FZ)/fuzz_%: $(FZ)/obj/tests/fuzz/fuzz_%.o $(FZ)/obj/tests/fuzz/fuzz_util.o $(FZ)/libxpusim.a
	$(FUZZ_CC) $(FZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(FZ_LIBS)

# calibrate --backend cuda's measurement CSV reader, on top of the library
$(FZ)/fuzz_cudameas: $(FZ)/obj/tests/fuzz/fuzz_cudameas.o $(FZ)/obj/tests/fuzz/fuzz_util.o \
                     $(FZ)/obj/calibrate/cuda_meas.o $(FZ)/libxpusim.a
	$(FUZZ_CC) $(FZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(FZ_LIBS)

# kept, so that editing one harness rebuilds only it
.SECONDARY: $(FZ_OBJ)

fuzz-build: $(FUZZ_TARGETS:%=$(FZ)/fuzz_%)

fuzz-ci: fuzz-build
	tests/fuzz/fuzz.sh ci $(FUZZ_SECONDS) $(FUZZ_RSS_MB) $(FUZZ_TARGETS)

fuzz: fuzz-build
	tests/fuzz/fuzz.sh long $(FUZZ_RUNS) $(FUZZ_RSS_MB) $(FUZZ_TARGETS)

fuzz-regress: fuzz-build
	tests/fuzz/fuzz.sh regress 0 $(FUZZ_RSS_MB) $(FUZZ_TARGETS)

fuzz-seeds:
	python3 tests/fuzz/make_seeds.py
