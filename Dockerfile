# collided: the authoritative 2D collision daemon, plus collide-client (load test, watch, ping).
#
#   docker build -t collided .          (or: buildah bud --format docker -t collided .)
#   docker run --rm -p 7777:7777 -p 9100:9100 collided
#
# Configuration is by COLLIDE_* environment variables (see README.md and `collided --help`);
# any argument after the image name is passed to collided as a flag.

# ---- build stage: the project's own dependency script and CMake build --------------------------
FROM debian:bookworm-slim AS build
# Marks build-stage images, so scripts/container-test can prune old ones and keep the newest as cache.
LABEL collide.stage=build
WORKDIR /src
# The dependency script alone first, so the package layer is reused while the sources change.
COPY scripts/deps scripts/deps
RUN scripts/deps --no-js --no-tiled && rm -rf /var/lib/apt/lists/*
COPY . .
# Release build; benchmarks are not shipped, so they are not built.
RUN scripts/build release -DCOLLIDE_BENCH=OFF -DCOLLIDE_JS=OFF -DCOLLIDE_WASM=ON \
    && test -x build/release/server/net/collided \
    && test -x build/release/client/collide-client

# ---- runtime stage: only the shared libraries the two binaries link against --------------------
FROM debian:bookworm-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
         libuv1 libprotobuf-c1 libjansson4 libcurl4 libwslay1 libhttp-parser2.9 libnettle8 libenet7 \
         libjwt0 libexpat1 zlib1g libzstd1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent \
         --shell /usr/sbin/nologin collide
COPY --from=build /src/build/release/server/net/collided /usr/local/bin/collided
COPY --from=build /src/build/release/client/collide-client /usr/local/bin/collide-client
# Fails the build here, not at the first start, if a shared library is missing.
RUN collided --version && collide-client --help >/dev/null

# Listen on every interface inside the container; the ports are published by the runtime.
ENV COLLIDE_BIND=0.0.0.0 \
    COLLIDE_PORT=7777 \
    COLLIDE_HTTP_PORT=9100 \
    COLLIDE_WS_PORT=7778 \
    COLLIDE_LOG_LEVEL=info
EXPOSE 7777 7778 7779/udp 9100

USER collide:collide
WORKDIR /tmp

# Healthy when the daemon answers a protocol Ping on its game port (the port and the client token
# follow the same environment variables the daemon reads). Under COLLIDE_TICKET_REQUIRED=on the
# shared token joins no more: the admin token does, or else a ticket made with the daemon's key.
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
    CMD token="$COLLIDE_TOKEN"; \
        if [ "$COLLIDE_TICKET_REQUIRED" = on ]; then token="${COLLIDE_ADMIN_TOKEN:-$(collide-client \
          ticket --room default --ttl 30s ${COLLIDE_TICKET_KEY_FILE:+--key-file "$COLLIDE_TICKET_KEY_FILE"})}"; fi; \
        collide-client ping --host 127.0.0.1 --port "${COLLIDE_PORT:-7777}" --timeout-ms 3000 \
        ${token:+--token "$token"} || exit 1

# collided drains on SIGTERM (Goodbye to every client, flush, exit 0): the runtime's default
# stop signal.
STOPSIGNAL SIGTERM
ENTRYPOINT ["collided"]
