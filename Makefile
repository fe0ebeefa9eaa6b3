# talus — the front door.
#   make demo   install dependencies, build, generate a terrain, erode it
#   make test   install dependencies, build, run the whole test suite
#   make gallery  build, render every scene and a DEM into gallery/*.png
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEMO ?= demo
TALUS_TEST_DATA ?= $(abspath $(wildcard ../shared/data/dem))
export TALUS_TEST_DATA

.PHONY: all deps configure build test demo gallery bench format clean

all: build

deps:
	@bash .ci/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

demo: build
	@mkdir -p $(DEMO)
	$(BUILD)/talus generate rivers-rain -o $(DEMO)/terrain.tif --size 512 --seed 7
	$(BUILD)/talus erode $(DEMO)/terrain.tif -o $(DEMO)/eroded.tif -c configs/rivers-rain.ini \
	  --steps 1500 --maps --preview $(DEMO)/preview.png --report $(DEMO)/run.json
	@echo "demo outputs in $(DEMO)/: eroded.tif, maps, preview.png, run.json"

gallery: build
	bash tools/gallery.sh $(BUILD)/talus gallery

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu')

clean:
	rm -rf $(BUILD) $(DEMO)
