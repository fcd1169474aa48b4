# sayso: one static-ish binary on a slim Debian base.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs* ./
COPY src src
# A workspace member; its manifest must be there for cargo to read the workspace.
COPY bench bench
COPY migrations migrations
COPY templates templates
COPY static static
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
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/sayso"]
CMD ["serve"]
