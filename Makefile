# The README's two commands: `make run` (the default main job) and `make test`.
BUILD ?= build
TORCH_PREFIX := $(shell scripts/torch-prefix.sh)
CMAKE_ARGS ?=
ARGS ?=

FUZZ_BUILD ?= build-fuzz
# Seconds of fuzzing per target (seven targets in `make fuzz`).
FUZZ_SECONDS ?= 10
CLANGXX ?= $(shell command -v clang++-14 || command -v clang++)

.PHONY: all build run test ctest fuzz check-torch2 clean

all: build

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  $(if $(TORCH_PREFIX),-DCMAKE_PREFIX_PATH=$(TORCH_PREFIX)) $(CMAKE_ARGS)

build: $(BUILD)/build.ninja
	cmake --build $(BUILD)

# `make run` builds only the binary it runs; `make test` (and `make build`) build every target.
run: $(BUILD)/build.ninja
	cmake --build $(BUILD) --target ddpbench
	$(BUILD)/ddpbench run $(ARGS)

test: ctest fuzz

# Two tests at a time; tests that start ranks take both slots (tests/CMakeLists.txt, DDPBENCH_ALONE).
CTEST_JOBS ?= 2
# The container recipe's check (label container: an image built from scratch) is left out;
# `ctest --test-dir build -L container` runs it.
ctest: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(CTEST_JOBS) -LE container

# libFuzzer (torch-free core, clang + ASan/UBSan), briefly, from the checked-in corpora:
# the result-file reader, the reference-file reader of `check` and `report --targets`, the
# launcher-environment parsers, the IDX reader of --data and the bounded JSON reader's depth
# and size limits; FUZZ_SECONDS each. New inputs go
# to $(FUZZ_BUILD)/corpus/<target>, crashes fail the run.
FUZZ_TARGETS := result_reader reference_reader launch_env idx_reader json_reader plan sanitize
fuzz:
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=$(CLANGXX) \
	  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all" \
	  -DDDPBENCH_WITH_TORCH=OFF -DDDPBENCH_BUILD_TESTS=OFF -DDDPBENCH_FUZZ=ON
	cmake --build $(FUZZ_BUILD) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	mkdir -p $(FUZZ_BUILD)/artifacts
	set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  $(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -timeout=10 \
	    -rss_limit_mb=2048 -malloc_limit_mb=512 \
	    -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t- $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t; \
	done

# The build against Debian 13's libtorch 2.6 with CUDA and NCCL, every GPU path required, and the
# torch-dependent suites on it (root; a cached Debian 13 root, made once: scripts/torch2-root.sh).
check-torch2:
	scripts/check-torch2.sh

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
