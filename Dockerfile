# syntax=docker/dockerfile:1
#
# credo's worker image: its commands (worker, enqueue, beliefs, eval), static, on a
# distroless base with CA certificates, running as a non-root user. The worker is the
# entrypoint; enqueue and beliefs are on PATH for `docker compose exec worker ...`, and
# the example transcripts are in /examples.
#
#   docker build -t credo .
#   docker run --rm -e DATABASE_URL=... credo            # the worker
#   docker run --rm --entrypoint beliefs credo --help    # another command

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# go.mod may ask for a newer patch release than the image has; let Go fetch it.
ENV GOTOOLCHAIN=auto CGO_ENABLED=0
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
ARG TARGETOS TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/worker ./cmd/enqueue ./cmd/beliefs ./cmd/eval

# busybox's wget (static, musl) is the health probe: distroless has no shell, curl or
# wget, and the worker only serves /healthz over HTTP. busybox runs the applet its file
# is named after, so the binary itself is copied as wget.
FROM busybox:1.37-musl AS busybox

FROM gcr.io/distroless/static-debian12:nonroot
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    HTTP_ADDR=:9464
COPY --from=busybox /bin/busybox /usr/local/bin/wget
COPY --from=build /out/worker /out/enqueue /out/beliefs /out/eval /usr/local/bin/
COPY examples/*.jsonl /examples/
# 65532:65532, distroless's nonroot user.
USER nonroot:nonroot
EXPOSE 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["wget", "-q", "-O", "/dev/null", "http://127.0.0.1:9464/healthz"]
ENTRYPOINT ["/usr/local/bin/worker"]
