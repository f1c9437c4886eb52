# Shortcuts; the scripts are the source of truth.
.PHONY: dev test build release bench fuzz check-spec clean

dev:
	scripts/dev

test:
	scripts/test

build:
	swift build

release:
	swift build -c release --product countersign

bench:
	scripts/bench

fuzz:
	scripts/fuzz

check-spec:
	scripts/check-spec

clean:
	rm -rf .build .countersign
