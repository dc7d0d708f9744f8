# The README's two commands: `make run` (the default main job) and `make test`.
BUILD ?= build
TORCH_PREFIX := $(shell scripts/torch-prefix.sh)
CMAKE_ARGS ?=
ARGS ?=

FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
CLANGXX ?= $(shell command -v clang++-14 || command -v clang++)

.PHONY: all build run test ctest fuzz clean

all: build

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  $(if $(TORCH_PREFIX),-DCMAKE_PREFIX_PATH=$(TORCH_PREFIX)) $(CMAKE_ARGS)

build: $(BUILD)/build.ninja
	cmake --build $(BUILD)

run: build
	$(BUILD)/ddpbench run $(ARGS)

test: ctest fuzz

ctest: build
	ctest --test-dir $(BUILD) --output-on-failure

# libFuzzer on the result-file reader (torch-free core, clang + ASan/UBSan), briefly,
# from the checked-in corpus; new inputs go to $(FUZZ_BUILD)/corpus, crashes fail the run.
fuzz:
	cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=$(CLANGXX) \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all" \
	  -DDDPBENCH_WITH_TORCH=OFF -DDDPBENCH_BUILD_TESTS=OFF -DDDPBENCH_FUZZ=ON
	cmake --build $(FUZZ_BUILD) --target fuzz_result_reader
	mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/artifacts
	$(FUZZ_BUILD)/fuzz_result_reader -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -timeout=10 \
	  -artifact_prefix=$(FUZZ_BUILD)/artifacts/ $(FUZZ_BUILD)/corpus fuzz/corpus/result_reader

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
