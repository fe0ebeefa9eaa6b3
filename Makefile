# talus — the front door.
#   make demo   install dependencies, build, generate a terrain, erode it
#   make test   install dependencies, build, run the whole test suite
#   make gallery  build, render every scene and a DEM into gallery/*.png
#   make check-asan  the CPU suite built with ASan + UBSan (build-asan/)
#   make fuzz FUZZ_SECONDS=600  each libFuzzer target for that long (clang)
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEMO ?= demo
TALUS_TEST_DATA ?= $(abspath $(wildcard ../shared/data/dem))
export TALUS_TEST_DATA

.PHONY: all deps configure build test demo gallery bench format clean check-asan fuzz
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
# UB aborts the test instead of printing and going on; frame pointers give
# whole stacks in ASan's reports.
SANITIZE = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

all: build

deps:
	@bash .ci/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 2400

demo: build
	@mkdir -p $(DEMO)
	$(BUILD)/talus generate rivers-rain -o $(DEMO)/terrain.tif --size 256 --seed 7
	$(BUILD)/talus erode $(DEMO)/terrain.tif -o $(DEMO)/eroded.tif -c configs/rivers-rain.ini \
	  --steps 3500 --maps --preview $(DEMO)/preview.png --report $(DEMO)/run.json
	@echo "demo outputs in $(DEMO)/: eroded.tif, maps, preview.png, preview_section.png (a cross-section), run.json"

# A separate tree so that `make test` keeps its optimised build and time.
# CUDA and MPI off: ASan cannot see into the GPU, and mpirun's children
# would need the runtime preloaded. The gpu label is skipped.
check-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTALUS_CUDA=OFF -DTALUS_MPI=OFF \
	  "-DCMAKE_C_FLAGS=$(SANITIZE)" "-DCMAKE_EXE_LINKER_FLAGS=$(SANITIZE)" >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
# Reports also go to files: a shell test that expects `talus` to fail would
# pass over a crash, so any report left in asan-logs/ fails the target.
	@rm -rf $(ASAN_BUILD)/asan-logs && mkdir -p $(ASAN_BUILD)/asan-logs
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:log_path=$(abspath $(ASAN_BUILD))/asan-logs/asan \
	  UBSAN_OPTIONS=print_stacktrace=1:log_path=$(abspath $(ASAN_BUILD))/asan-logs/ubsan \
	  ctest --output-on-failure -j $(JOBS) --timeout 1800 -LE gpu; rc=$$?; \
	if [ -n "$$(ls asan-logs)" ]; then head -n 60 asan-logs/*; rc=1; \
	  echo "check-asan: sanitizer reports in $(ASAN_BUILD)/asan-logs" >&2; fi; exit $$rc

# libFuzzer targets for FUZZ_SECONDS each, one at a time (tools/fuzz.sh).
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_BUILD=$(FUZZ_BUILD) JOBS=$(JOBS) bash tools/fuzz.sh

gallery: build
	bash tools/gallery.sh $(BUILD)/talus gallery

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu')

clean:
	rm -rf $(BUILD) $(DEMO) $(ASAN_BUILD) $(FUZZ_BUILD)
