# spconv -- plain Makefile.  `make` builds libspconv.a, libspconv.so and
# bin/spconv; `make test` runs the Check suites; `make asan` runs them under
# AddressSanitizer + UndefinedBehaviorSanitizer.  See README.md.
CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
OPT     ?= -O2 -g
SAN     ?=
PKGS    := yaml-0.1 zlib hdf5
# The libraries' flags come from pkg-config once tools/deps.sh has run
# (installing what is missing), written into $(STAMP) and included: make
# rebuilds an included makefile first and starts again with it, so a fresh
# machine's first `make` sees the flags of the packages it just installed
# (pkg-config run here, while this file is read, would find none of them).
STAMP    := $(BUILD)/deps.mk
DEP_CFLAGS :=
DEP_LIBS   := -lm
CHECK_LIBS :=   # Check: only the tests
ifeq ($(filter clean,$(MAKECMDGOALS)),)
include $(STAMP)
endif
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Werror
CFLAGS  ?=
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -fopenmp -fPIC \
              -fvisibility=hidden $(SAN) -Iinclude -Icore -Iio -Iformats -Iir -Ilang -Iremap -Iquery -Iassemble -Ispw -Ikernels \
              $(DEP_CFLAGS) $(CFLAGS)
LDFLAGS ?=
ALL_LDFLAGS := -fopenmp $(SAN) $(LDFLAGS)

LIB_DIRS := core formats io ir lang remap query assemble spw kernels
LIB_SRC  := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
SPECS    := $(sort $(wildcard formats/specs/levels/*.yaml) $(wildcard formats/specs/tensors/*.yaml))
LIB_BASE := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/spec_builtin.o
# factory routines: emitted at build time by tools/factory_gen.c (linked
# with an empty table) for every built-in format, compiled into the library
FACTORY_C := $(foreach k,0 1 2 3 tab,$(BUILD)/gen/factory/factory_$(k).c)
LIB_OBJ  := $(LIB_BASE) $(FACTORY_C:$(BUILD)/gen/%.c=$(BUILD)/obj/gen/%.o)
FACTORY_GEN := $(BUILD)/factory_gen
CLI_SRC  := $(wildcard cli/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
BIN      := bin/spconv

.PHONY: all test asan install demo clean fuzz bench deps
all: $(BUILD)/libspconv.a $(BUILD)/libspconv.so $(BIN)

# Checks (and on Debian as root installs) the system libraries we use.
$(STAMP): tools/deps.sh
	@tools/deps.sh
	@mkdir -p $(BUILD)
	@{ echo "DEP_CFLAGS := $$(pkg-config --cflags $(PKGS))"; \
	   echo "DEP_LIBS   := $$(pkg-config --libs $(PKGS)) -lm"; \
	   echo "CHECK_LIBS := $$(pkg-config --libs check 2>/dev/null)"; } > $@.tmp && mv $@.tmp $@
deps: ; @tools/deps.sh

$(BUILD)/obj/%.o: %.c | $(STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# built-in format specs, compiled in so the tool needs no files beside it
$(BUILD)/gen/spec_builtin.c: $(SPECS) tools/embed_specs.sh | $(STAMP)
	@mkdir -p $(dir $@)
	sh tools/embed_specs.sh $(SPECS) > $@

$(FACTORY_GEN): $(BUILD)/obj/tools/factory_gen.o $(BUILD)/obj/tools/factory_empty.o $(LIB_BASE)
	@echo "  LINK    $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)

# one generator run writes every part (a stamp stands for all of them)
$(BUILD)/gen/factory/.stamp: $(FACTORY_GEN)
	@mkdir -p $(dir $@)
	@echo "  GEN     $(BUILD)/gen/factory/"
	@$(FACTORY_GEN) $(dir $@) && touch $@
$(FACTORY_C): $(BUILD)/gen/factory/.stamp ;

# emitted C: IR semantics need two roundings for a*b+c.  Loops aligned
# to 64 bytes: with gcc's default (16) the same SpMV routine ran 15-20%
# slower or faster from one build to the next as the routines around it
# changed (bench/README, "Session 14: two rows at a time").
FACTORY_ALIGN ?= -falign-loops=64
$(BUILD)/obj/gen/factory/%.o: $(BUILD)/gen/factory/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $< (factory routines)"
	@$(CC) $(ALL_CFLAGS) $(FACTORY_ALIGN) -ffp-contract=off -fno-strict-aliasing -DSPC_GEN_HUGEPAGES -c $< -o $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libspconv.a: $(LIB_OBJ)
	@rm -f $@
	@echo "  AR      $@"
	@ar rcs $@ $^

$(BUILD)/libspconv.so: $(LIB_OBJ)
	@echo "  LINK    $@"
	@$(CC) -shared -Wl,-soname,libspconv.so.0 $(ALL_LDFLAGS) -o $@ $^ $(DEP_LIBS)

$(BIN): $(CLI_OBJ) $(BUILD)/libspconv.a
	@mkdir -p bin
	@echo "  LINK    $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libspconv.a $(DEP_LIBS)

$(BUILD)/run_tests: $(TEST_OBJ) $(BUILD)/libspconv.a $(BIN)
	$(CC) $(ALL_LDFLAGS) -o $@ $(TEST_OBJ) $(BUILD)/libspconv.a $(DEP_LIBS) $(CHECK_LIBS)

# Tests run from the repository root; SPC_DATA points at the shared data.
test: all $(BUILD)/run_tests
	SPCONV=$(BIN) $(BUILD)/run_tests

# libhdf5's own leak after a corrupt metadata checksum (fuzz/lsan.supp) is
# suppressed, in the tests' CLI runs too (a leak report is exit 1)
asan:
	LSAN_OPTIONS=suppressions=$(CURDIR)/fuzz/lsan.supp:print_suppressions=0 \
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	  BIN=build-asan/spconv test

demo: all
	$(BIN) data/sample.mtx --to=dia -v -o build/sample.dia.bsp.h5
	$(BIN) info build/sample.dia.bsp.h5
	$(BIN) cat build/sample.dia.bsp.h5 -o build/sample.back.mtx

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/spconv.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libspconv.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libspconv.so $(DESTDIR)$(PREFIX)/lib/libspconv.so.0
	ln -sf libspconv.so.0 $(DESTDIR)$(PREFIX)/lib/libspconv.so
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/.*SPCONV_VERSION "\(.*\)"/\1/p' include/spconv.h)|' \
	  -e 's|@REQUIRES@|$(PKGS)|' tools/spconv.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/spconv.pc

# CUDA kernels (README "CUDA"): emitted by `spconv gen --cuda` for the
# built-in formats, compiled by nvcc with a host driver that compares them
# with the CPU kernels.  Skipped without nvcc: the CPU build never needs it.
# -arch=sm_80 embeds sm_80 code and compute_80 PTX (JIT-compiled on newer
# GPUs); e.g. CUDA_ARCH="-gencode arch=compute_90,code=sm_90" for sm_90 code.
NVCC        ?= nvcc
CUDA_ARCH   ?= -arch=sm_80
CUDA_FLAGS  ?= -O2 --fmad=false
CUDA_DIR    := $(BUILD)/cuda
CUDA_SPMV   := csr csc coo dcsr dcsc csf dense dia ell bcsr sky morton
CUDA_SPGEMM := csr csc dcsr dcsc csf sky dense
CUDA_CU     := $(CUDA_SPMV:%=$(CUDA_DIR)/%_spmv.cu) $(CUDA_SPGEMM:%=$(CUDA_DIR)/%_spgemm.cu)
CUDA_DATA   ?= $(or $(SPC_DATA),../shared/data)
CUDA_TEST_MATRICES := data/sample.mtx $(wildcard $(addprefix $(CUDA_DATA)/matrices/,A.mtx west0067.mtx can___24.mtx bcspwr01.mtx LFAT5_hypersparse.mtx))
HAVE_NVCC   := $(shell command -v $(NVCC) 2>/dev/null)

.PHONY: cuda cuda-test cuda-bench
ifeq ($(HAVE_NVCC),)
cuda cuda-test cuda-bench:
	@echo "nvcc not found: CUDA kernels skipped"
else
cuda: $(CUDA_DIR)/spconv_cuda_test $(CUDA_DIR)/spconv_cuda_bench
.SECONDARY: $(CUDA_CU)

# rewritten only when the text changes, so nvcc reruns only then
$(CUDA_DIR)/%_spmv.cu: $(BIN)
	@mkdir -p $(dir $@)
	@$(BIN) gen --cuda --kernel=spmv --format=$* -o $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else echo "  GEN     $@"; mv $@.tmp $@; fi
$(CUDA_DIR)/%_spgemm.cu: $(BIN)
	@mkdir -p $(dir $@)
	@$(BIN) gen --cuda --kernel=spgemm --format=$* -o $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else echo "  GEN     $@"; mv $@.tmp $@; fi
# one translation unit for every kernel: nvcc's start-up and CUB's headers
# once, not per format (a fraction of the time of 19 separate compiles)
$(CUDA_DIR)/kernels_all.cu: $(CUDA_CU)
	@cat $^ > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(CUDA_DIR)/%.o: $(CUDA_DIR)/%.cu
	@echo "  NVCC    $<"
	@$(NVCC) $(CUDA_FLAGS) $(CUDA_ARCH) -c $< -o $@
# the kernels' tables, as every emitted file declares them
$(CUDA_DIR)/spc_cu_types.h: $(CUDA_DIR)/csr_spmv.cu
	@sed -n '/^#ifndef SPC_CU_TYPES/,/^#endif/p' $< > $@
$(CUDA_DIR)/registry.h: Makefile
	@mkdir -p $(dir $@)
	@{ for f in $(CUDA_SPMV); do echo "SPC_CU_SPMV($$f)"; done; \
	   for f in $(CUDA_SPGEMM); do echo "SPC_CU_SPGEMM($$f)"; done; } > $@
$(CUDA_DIR)/spconv_cuda_test.o: cuda/spconv_cuda_test.cu cuda/cu_host.cuh $(CUDA_DIR)/spc_cu_types.h \
    $(CUDA_DIR)/registry.h assemble/spc_cuda_host.h include/spconv.h
	@echo "  NVCC    $<"
	@$(NVCC) $(CUDA_FLAGS) $(CUDA_ARCH) -Iinclude -Iassemble -I$(CUDA_DIR) -c $< -o $@
$(CUDA_DIR)/spconv_cuda_test: $(CUDA_DIR)/kernels_all.o $(CUDA_DIR)/spconv_cuda_test.o $(BUILD)/libspconv.a
	@echo "  LINK    $@"
	@$(NVCC) $(CUDA_ARCH) -o $@ $^ $(DEP_LIBS) -lgomp

# the GPU benchmark (README "CUDA", bench/README.md "GPU"): the kernels
# against cuSPARSE, linked whenever nvcc exists, run by hand on a GPU
$(CUDA_DIR)/spconv_cuda_bench.o: cuda/spconv_cuda_bench.cu cuda/cu_host.cuh $(CUDA_DIR)/spc_cu_types.h \
    $(CUDA_DIR)/registry.h assemble/spc_cuda_host.h include/spconv.h
	@echo "  NVCC    $<"
	@$(NVCC) $(CUDA_FLAGS) $(CUDA_ARCH) -Iinclude -Iassemble -I$(CUDA_DIR) -c $< -o $@
$(CUDA_DIR)/spconv_cuda_bench: $(CUDA_DIR)/kernels_all.o $(CUDA_DIR)/spconv_cuda_bench.o $(BUILD)/libspconv.a
	@echo "  LINK    $@"
	@$(NVCC) $(CUDA_ARCH) -o $@ $^ -lcusparse $(DEP_LIBS) -lgomp

cuda-test: cuda
	$(CUDA_DIR)/spconv_cuda_test $(CUDA_TEST_MATRICES)
cuda-bench: cuda
	$(CUDA_DIR)/spconv_cuda_bench $(CUDA_BENCH_ARGS)
endif

fuzz:
	$(MAKE) -C fuzz

bench: all
	$(MAKE) -C bench

clean:
	rm -rf build build-asan bin

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d)
