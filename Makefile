# Kiln: the two set-up commands are `make bake` and `make test`; both work on a fresh Debian machine.
CARGO ?= cargo
WORLD ?= worlds/ice_caves.toml
OUT ?= out

.PHONY: bake view test test-deps bench clean

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

## Release-build benchmarks; prints the figures recorded in BENCHMARKS.md.
bench:
	$(CARGO) run --release -p kiln-formats --example pack_bench
	$(CARGO) run --release -p kiln-bake --example mc_speed
	$(CARGO) run --release -p kiln-bake --example ao_speed
	$(CARGO) run --release -p kiln-bake --example bake_bench -- $(WORLD)
	$(CARGO) run --release -p kiln-bake --example cache_bench -- $(WORLD)
	$(CARGO) run --release -p kiln-bake --example ray_speed
	$(CARGO) run --release -p kiln-bake --example lighting_accuracy -- $(WORLD)

clean:
	$(CARGO) clean
	rm -rf $(OUT)
