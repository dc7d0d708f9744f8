# The README's two commands: `make run` (the default main job) and `make test`.
BUILD ?= build
TORCH_PREFIX := $(shell scripts/torch-prefix.sh)
CMAKE_ARGS ?=
ARGS ?=

.PHONY: all build run test clean

all: build

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  $(if $(TORCH_PREFIX),-DCMAKE_PREFIX_PATH=$(TORCH_PREFIX)) $(CMAKE_ARGS)

build: $(BUILD)/build.ninja
	cmake --build $(BUILD)

run: build
	$(BUILD)/ddpbench run $(ARGS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure

clean:
	rm -rf $(BUILD)
