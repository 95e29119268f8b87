# bucketsim build.
#
# Targets:
#   make deps      install missing Debian packages (GSL, cJSON, libcsv, Check, pkg-config)
#   make           build build/bucketsim and build/libbucketsim.a
#   make demo      deps + build build/bucketsim (the tool only) + a default simulation on the
#                  bundled Alpaca trace
#   make check     deps + build + every unit suite and end-to-end test (the fuzz corpora and
#                  past crash inputs replayed included), then the same again built with clang
#                  under AddressSanitizer and UndefinedBehaviorSanitizer with
#                  float-cast-overflow (build-san/)
#   make bench     deps + build + the benchmarks (figures, not timed tests)
#   make check-cluster  a single-node Slurm cluster (installs slurm-wlm and munge) runs a sweep's
#                  job array; its merged CSV must equal `sweep -j`'s (needs root)
#   make fuzz      deps + the libFuzzer harnesses of tests/fuzz/ (clang, ASan+UBSan incl.
#                  float-cast-overflow, build-fuzz/), each run for FUZZ_TIME seconds
#   make update-golden   regenerate tests/golden/ from the current binary
#
# Knobs:
#   V=1            echo every command
#   SANITIZE=...   extra -fsanitize= list (used by the build-san pass)
#   SAN_CC=clang   compiler of the sanitizer and fuzzing builds (gcc has no float-cast-overflow)
#   FUZZ_TIME=60   seconds per harness for make fuzz; FUZZ_RUNS=N runs N inputs instead
#   FUZZ=name      make fuzz runs only this harness (one of tests/fuzz/fuzz_NAME.c: trace_csv, collect, ...)
#   FUZZ_FLAGS=... more libFuzzer options for make fuzz (e.g. -close_fd_mask=2 silences the
#                  harness's own stderr, such as the config warnings; sanitizer reports remain)
#   BUILD=dir      build directory (default build)
#   OPT=...        optimisation flags (default -O2 -g -DNDEBUG: the kernel's invariant
#                  asserts run in the sanitizer build, which uses -O1 -g)

BUILD    ?= build
OPT      ?= -O2 -g -DNDEBUG
CC       ?= cc
SANITIZE ?=
SAN_CC   ?= clang
SAN_LIST := address,undefined,float-cast-overflow
FUZZ_TIME ?= 60
FUZZ_RUNS ?=
FUZZ_FLAGS ?=
# Every harness tests/fuzz/fuzz_NAME.c, by its file: adding one is adding the file.
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ     ?= $(FUZZ_NAMES)

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKGS     := gsl libcjson check
CPPFLAGS := -I. -D_POSIX_C_SOURCE=200809L
CFLAGS   := -std=c11 -Wall -Wextra -Werror -Wmissing-prototypes -Wstrict-prototypes \
            -Wshadow -Wno-unused-parameter $(OPT)
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=$(SANITIZE)
endif

PKG_CFLAGS = $(shell pkg-config --cflags gsl libcjson 2>/dev/null)
# GSL (with its CBLAS) and libcsv are linked statically from the archives their Debian -dev
# packages ship: three shared objects fewer to map and relocate at every start (start-up from
# 400,000 to 230,000 instructions and from 115 to 82 page faults).  Debian ships cJSON as a
# shared library only.
PKG_LIBS   = -Wl,-Bstatic $(filter-out -lm,$(shell pkg-config --libs gsl 2>/dev/null)) -lcsv \
             -Wl,-Bdynamic $(shell pkg-config --libs libcjson 2>/dev/null) -lm
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)

LIB_SRC  := $(sort $(wildcard sim/*.c policies/*.c workloads/*.c models/*.c analysis/*.c))
LIB_SRC  := $(filter-out sim/main.c,$(LIB_SRC))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/embedded.o
DATA     := $(sort $(wildcard models/data/*.json workloads/data/*.csv workloads/data/*.jsonl))
TEST_SRC := $(sort $(wildcard tests/check_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC:= $(sort $(wildcard tests/bench_*.c))
BENCH_BIN:= $(BENCH_SRC:tests/%.c=$(BUILD)/tests/%)
REPLAY_BIN := $(FUZZ_NAMES:%=$(BUILD)/tests/fuzz/replay_%)

all: $(BUILD)/bucketsim $(TEST_BIN) $(BENCH_BIN) $(REPLAY_BIN)

# A stamp of the flags: changed flags force a rebuild.
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW   := $(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(PKG_LIBS)
$(FLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@if [ "$$(cat $@ 2>/dev/null)" != "$(FLAGS_NOW)" ]; then echo "$(FLAGS_NOW)" > $@; fi

# The fuzzing build's coverage ignore list (make fuzz) is part of its flags.
ifneq ($(findstring fuzzer,$(SANITIZE)),)
$(LIB_OBJ): tests/fuzz/coverage.ignore
endif

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# Data files are compiled into the binary (sim/embed.h): nothing is read from the tree at run time.
$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 -o $@ $<

$(BUILD)/gen/embedded.c: $(BUILD)/tools/embed $(DATA)
	@mkdir -p $(@D)
	@[ "$(V)" = 1 ] || echo "  EMBED   $(words $(DATA)) data files"
	$(Q)$(BUILD)/tools/embed $@ $(DATA)

$(BUILD)/gen/embedded.o: $(BUILD)/gen/embedded.c $(FLAGS_STAMP)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/libbucketsim.a: $(LIB_OBJ)
	@[ "$(V)" = 1 ] || echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/bucketsim: $(BUILD)/sim/main.o $(BUILD)/libbucketsim.a
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libbucketsim.a
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(CHECK_LIBS)

# Fuzz harnesses: replay_NAME (any compiler, a plain main over files) and, in make fuzz,
# fuzz_NAME linked with libFuzzer.
$(BUILD)/tests/fuzz/replay_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay.o $(BUILD)/libbucketsim.a
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/tests/fuzz/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/libbucketsim.a
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS)

fuzz-bins: $(FUZZ_NAMES:%=$(BUILD)/tests/fuzz/fuzz_%)

-include $(LIB_OBJ:.o=.d) $(BUILD)/sim/main.d $(TEST_BIN:=.d) $(BENCH_BIN:=.d) \
	$(FUZZ_NAMES:%=$(BUILD)/tests/fuzz/fuzz_%.d) $(BUILD)/tests/fuzz/replay.d

# Debian packages this project needs; installed only when missing.
DEB_PKGS := libgsl-dev libcjson-dev libcsv-dev check libsubunit-dev pkg-config gcc make \
            parallel gnuplot-nox clang libclang-rt-14-dev bc strace jq
# Only for check-cluster.
CLUSTER_PKGS := slurm-wlm munge
deps:
	@$(MAKE) --no-print-directory install-pkgs PKGS_WANTED="$(DEB_PKGS)"
deps-cluster:
	@$(MAKE) --no-print-directory install-pkgs PKGS_WANTED="$(CLUSTER_PKGS)"
install-pkgs:
	@missing=""; for p in $(PKGS_WANTED); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	command -v python3 >/dev/null 2>&1 || missing="$$missing python3"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# demo builds the tool alone (not the test and fuzz programs) and runs it once.
demo: deps
	@$(MAKE) --no-print-directory $(BUILD)/bucketsim
	$(abspath $(BUILD))/bucketsim run --trace alpaca -o out/demo

check: deps
	@$(MAKE) --no-print-directory all
	@BUCKETSIM=$(BUILD)/bucketsim BUILD=$(BUILD) tests/run-tests.sh
	@$(MAKE) --no-print-directory BUILD=build-san CC=$(SAN_CC) OPT="-O1 -g" SANITIZE=$(SAN_LIST) all
	@ASAN_OPTIONS=detect_leaks=1 BUCKETSIM=build-san/bucketsim BUILD=build-san tests/run-tests.sh

check-cluster: deps deps-cluster
	@$(MAKE) --no-print-directory all
	@BUCKETSIM=$(BUILD)/bucketsim tests/cluster_slurm.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@BUCKETSIM=$(BUILD)/bucketsim BUILD=$(BUILD) tests/run-bench.sh

# Each harness: new inputs go to build-fuzz/corpus/NAME (the seeds of tests/fuzz/corpus/NAME
# are read only), a crash to build-fuzz/crashes/NAME/ (add it to tests/fuzz/crashes/NAME/ so
# make check replays it from then on).  Limits: 2 GB RSS, 512 MB per allocation, 10 s per input.
fuzz: deps
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=$(SAN_CC) \
		OPT="-O1 -g -fsanitize-coverage-ignorelist=tests/fuzz/coverage.ignore" \
		SANITIZE=$(SAN_LIST),fuzzer-no-link fuzz-bins
	@for n in $(FUZZ); do \
	  mkdir -p build-fuzz/corpus/$$n build-fuzz/crashes/$$n; \
	  echo "fuzz: $$n"; \
	  build-fuzz/tests/fuzz/fuzz_$$n -dict=tests/fuzz/$$n.dict -rss_limit_mb=2048 \
	    -malloc_limit_mb=512 -timeout=10 -print_final_stats=1 $(FUZZ_FLAGS) \
	    $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_TIME)) \
	    -artifact_prefix=build-fuzz/crashes/$$n/ build-fuzz/corpus/$$n tests/fuzz/corpus/$$n \
	    || exit 1; \
	done

update-golden: all
	@BUCKETSIM=$(BUILD)/bucketsim tests/update-golden.sh

clean:
	rm -rf build build-san build-fuzz

FORCE:
.PHONY: all deps deps-cluster install-pkgs demo check check-cluster bench fuzz fuzz-bins update-golden clean FORCE
.SECONDARY:
