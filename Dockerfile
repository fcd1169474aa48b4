# sayso: one static-ish binary on a slim Debian base.
#
# Every path the build reads is copied below, and only those: deploy/check-image-context.sh
# (a stage of .ci/run) copies exactly what these COPY lines name into an empty folder and
# checks that cargo can resolve and find everything there, so a path the build starts to need
# fails CI instead of `docker build`.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
# How the bundled SQLite is compiled, as in every other build.
COPY .cargo/config.toml .cargo/config.toml
# [patch.crates-io] in Cargo.toml takes sqlx-core and lettre from here.
COPY vendor vendor
COPY src src
# A workspace member; its manifest must be there for cargo to read the workspace.
COPY bench bench
COPY migrations migrations
COPY templates templates
COPY static static
# The person-facing texts in each language (Fluent), built into the binary.
COPY locales locales
# The pi extension that `sayso hook install pi` writes is built into the binary.
COPY integrations integrations
RUN cargo build --release --locked --bin sayso && strip target/release/sayso

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --create-home sayso
COPY --from=build /src/target/release/sayso /usr/local/bin/sayso
USER sayso
WORKDIR /data
VOLUME ["/data"]
ENV SAYSO_LISTEN=0.0.0.0:8080 \
    SAYSO_DATABASE_URL=sqlite:///data/sayso.db \
    SAYSO_LOG_FORMAT=json
EXPOSE 8080
# The image has no curl: `sayso health` asks the server on SAYSO_LISTEN for /readyz (the
# database answers) and exits 0 or 1. The start period covers migrations and a database that
# is still starting (SAYSO_DB_WAIT_S).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/usr/local/bin/sayso", "health"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/sayso"]
CMD ["serve"]
