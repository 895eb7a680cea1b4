# Kiln: the two set-up commands are `make bake` and `make test`; both work on a fresh Debian machine.
CARGO ?= cargo
WORLD ?= worlds/ice_caves.toml
OUT ?= out

.PHONY: bake view test test-deps fuzz pictures bench bench-embree bench-view clean

## Bake the default world (or WORLD=worlds/x.toml) into $(OUT)/<name>/.
bake:
	$(CARGO) run --release -p kiln-bake --bin kiln -- bake $(WORLD) --out $(OUT)

## Open the viewer on the default world's bake (bakes it first if needed).
view: $(OUT)/$(basename $(notdir $(WORLD)))/manifest.kpack
	$(CARGO) run --release -p kiln-view -- $(OUT)/$(basename $(notdir $(WORLD)))

$(OUT)/%/manifest.kpack:
	$(MAKE) bake WORLD=worlds/$*.toml

## Every test, after installing what the tests need (Debian packages, as root or through sudo).
test: test-deps
	$(CARGO) test --workspace --release

test-deps:
	@scripts/install-test-deps.sh

## Coverage-guided fuzzing (libFuzzer on stable Rust) of every reader of untrusted input,
## FUZZ_SECONDS per target (CI runs 15 s each); a crash's input is saved under fuzz/artifacts/.
FUZZ_SECONDS ?= 300
fuzz:
	fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

## The README's pictures of the shipped worlds (headless viewer; software Vulkan works): docs/pictures/.
pictures: $(OUT)/ice_caves/manifest.kpack $(OUT)/tiny/manifest.kpack $(OUT)/forest/manifest.kpack $(OUT)/coast/manifest.kpack
	$(CARGO) build --release -p kiln-view -p kiln-bake
	scripts/pictures.sh $(OUT) target/release/kiln-view docs/pictures

## Release-build benchmarks; prints the figures recorded in BENCHMARKS.md.
bench: $(OUT)/$(basename $(notdir $(WORLD)))/manifest.kpack
	$(CARGO) run --release -p kiln-formats --example pack_bench
	$(CARGO) run --release -p kiln-bake --example mc_speed
	$(CARGO) run --release -p kiln-bake --example ao_speed
	$(CARGO) run --release -p kiln-bake --example bake_bench -- $(WORLD)
	$(CARGO) run --release -p kiln-bake --example cache_bench -- $(WORLD)
	$(CARGO) run --release -p kiln-bake --example shard_bench -- $(WORLD)
	$(CARGO) run --release -p kiln-bake --example budget_bench -- $(WORLD)
	$(CARGO) run --release -p kiln-bake --example memory_profile -- $(WORLD) 2
	$(CARGO) run --release -p kiln-bake --example trees_bench -- $(WORLD)
	$(CARGO) run --release -p kiln-bake --example grass_bench -- $(WORLD)
	$(CARGO) run --release -p kiln-bake --example grass_speed
	$(CARGO) run --release -p kiln-bake --example water_speed
	$(CARGO) run --release -p kiln-bake --example impostor_speed -- --fidelity
	$(CARGO) run --release -p kiln-bake --features bench-obvhs --example ray_speed -- --bake $(OUT)/$(basename $(notdir $(WORLD))) --dump target/rays
	python3 scripts/embree_speed.py target/rays || echo "Embree not measured: make bench-embree installs embreex"
	$(CARGO) run --release -p kiln-bake --example lighting_accuracy -- $(WORLD)
	$(MAKE) bench-view

## Kiln's BVH, obvhs and Embree on the same meshes and rays (installs the embreex wheel for this user).
bench-embree: $(OUT)/$(basename $(notdir $(WORLD)))/manifest.kpack
	$(CARGO) run --release -p kiln-bake --features bench-obvhs --example ray_speed -- --bake $(OUT)/$(basename $(notdir $(WORLD))) --dump target/rays
	python3 -m pip install --user --quiet embreex numpy
	python3 scripts/embree_speed.py target/rays

## Launch to first complete frame of the default world, here (software Vulkan without a GPU).
## Frame times during a flight are measured on a GPU: see BENCHMARKS.md.
bench-view: $(OUT)/$(basename $(notdir $(WORLD)))/manifest.kpack
	$(CARGO) build --release -p kiln-view
	for i in 1 2 3; do target/release/kiln-view $(OUT)/$(basename $(notdir $(WORLD))) --headless --size 1920x1080 \
		--camera 16,-4,6,90,-20 --screenshot target/bench-view.png --stats target/bench-view.json || exit 1; done

clean:
	$(CARGO) clean
	rm -rf $(OUT)
