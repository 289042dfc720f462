# barrier-check tasks (https://github.com/casey/just). CI runs .ci/run.

# Check the whole corpus with the release binary.
check:
    cargo run --release -- check litmus

# Every test: unit, property, snapshot and one test per corpus file.
test:
    cargo test --workspace --release

# What CI runs.
ci:
    bash .ci/run

# Render a test's operation graph to SVG (needs graphviz).
graph FILE:
    cargo run --release -- graph {{FILE}} --format dot | dot -Tsvg > {{FILE}}.svg

# Update insta snapshots after an intended rendering change.
snapshots:
    cargo insta test --workspace --release --accept
