# syntax=docker/dockerfile:1
# modkind's image: a static modkind, OpenTofu (MPL-2.0) at the version hack/tofu.sh pins, git
# and ssh for Modules with git sources, and a non-root user (65532). The root filesystem may be
# read-only: modkind and tofu write only /var/lib/modkind (work dir and HOME) and /tmp, where
# charts/modkind mounts volumes.
#
#   make image                                       # OpenTofu, when a Docker daemon answers
#   docker build --build-arg ENGINE=terraform .      # HashiCorp's terraform instead
#
# ENGINE=terraform is a knowing choice: terraform since 1.6 is under the Business Source License
# 1.1 (BUSL-1.1), which limits who may use it and how; an image carrying it is not plainly
# redistributable. OpenTofu is the default for that reason.
#
# Without Docker, `make image` assembles the same layout (hack/image) as an OCI image layout.
# linux/amd64 only: the archives below are linux_amd64's.

ARG GO_VERSION=1.26
ARG ALPINE_VERSION=3.22
# tofu (default) or terraform: which engine the image carries, and the binary's name.
ARG ENGINE=tofu
# Keep in step with hack/tofu.sh.
ARG TOFU_VERSION=1.10.7
ARG TERRAFORM_VERSION=1.11.4

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" -o /out/modkind .

FROM alpine:${ALPINE_VERSION} AS tofu
ARG TOFU_VERSION
# The archive is checked against the tofu_<version>_SHA256SUMS file OpenTofu publishes with the
# release, fetched from the same release over https: no pinned SHA256 is written here, as none
# could be read from the release when this was written. Pass TOFU_SHA256 (that archive's line of
# the SUMS file) to pin it; it is then checked as well.
ARG TOFU_SHA256=""
RUN base="https://github.com/opentofu/opentofu/releases/download/v${TOFU_VERSION}" \
 && zip="tofu_${TOFU_VERSION}_linux_amd64.zip" \
 && cd /tmp \
 && wget -q -O "${zip}" "${base}/${zip}" \
 && wget -q -O SHA256SUMS "${base}/tofu_${TOFU_VERSION}_SHA256SUMS" \
 && grep "  ${zip}\$" SHA256SUMS | sha256sum -c - \
 && if [ -n "${TOFU_SHA256}" ]; then echo "${TOFU_SHA256}  ${zip}" | sha256sum -c -; fi \
 && mkdir -p /out && unzip -o "${zip}" tofu -d /out \
 && chmod 0755 /out/tofu

FROM alpine:${ALPINE_VERSION} AS terraform
ARG TERRAFORM_VERSION
# terraform_1.11.4_linux_amd64.zip's line of
# https://releases.hashicorp.com/terraform/1.11.4/terraform_1.11.4_SHA256SUMS
ARG TERRAFORM_SHA256=1ce994251c00281d6845f0f268637ba50c0005657eb3cf096b92f753b42ef4dc
RUN wget -q -O /tmp/terraform.zip \
      "https://releases.hashicorp.com/terraform/${TERRAFORM_VERSION}/terraform_${TERRAFORM_VERSION}_linux_amd64.zip" \
 && echo "${TERRAFORM_SHA256}  /tmp/terraform.zip" | sha256sum -c - \
 && mkdir -p /out && unzip -o /tmp/terraform.zip terraform -d /out \
 && chmod 0755 /out/terraform

# The runtime without the engine: Alpine's packages and the user.
FROM alpine:${ALPINE_VERSION} AS base
RUN apk add --no-cache ca-certificates git openssh-client \
 && addgroup -S -g 65532 modkind \
 && adduser -S -D -H -u 65532 -G modkind -h /var/lib/modkind -s /sbin/nologin modkind \
 && install -d -o 65532 -g 65532 -m 0700 /var/lib/modkind

# One stage per engine, so that each says what it carries and under which licence; only the one
# ENGINE names is built.
FROM base AS with-tofu
ARG TOFU_VERSION
COPY --from=tofu /out/tofu /usr/local/bin/tofu
LABEL io.modkind.terraform="OpenTofu v${TOFU_VERSION}" \
      io.modkind.engine.license="MPL-2.0"

FROM base AS with-terraform
ARG TERRAFORM_VERSION
COPY --from=terraform /out/terraform /usr/local/bin/terraform
LABEL io.modkind.terraform="Terraform v${TERRAFORM_VERSION}" \
      io.modkind.engine.license="BUSL-1.1"

FROM with-${ENGINE}
ARG ENGINE
ARG ALPINE_VERSION
COPY --from=build /out/modkind /usr/local/bin/modkind
# HOME is the work dir, so that the engine's files (.terraform.d) are on the work volume too;
# modkind's --terraform-binary defaults to MODKIND_TERRAFORM, the engine carried.
ENV HOME=/var/lib/modkind \
    TMPDIR=/tmp \
    MODKIND_TERRAFORM=/usr/local/bin/${ENGINE}
USER 65532:65532
WORKDIR /var/lib/modkind
ENTRYPOINT ["/usr/local/bin/modkind"]

ARG VERSION=dev
ARG REVISION=""
# modkind's own licence (LICENSE). What else the image carries, and under which licences, is in
# io.modkind.contents: the engine's in io.modkind.engine.license, each Alpine package's in
# /lib/apk/db/installed (its L: lines).
ARG LICENSES=Apache-2.0
ARG SOURCE=https://github.com/modkind/modkind
LABEL org.opencontainers.image.title="modkind" \
      org.opencontainers.image.description="Turns Terraform modules into Kubernetes kinds whose instances modkind applies with OpenTofu or Terraform." \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="${LICENSES}" \
      io.modkind.contents="modkind (${LICENSES}); /usr/local/bin/${ENGINE} (see io.modkind.terraform, io.modkind.engine.license); Alpine Linux ${ALPINE_VERSION} with ca-certificates, git, openssh-client and their dependencies (licences per package in /lib/apk/db/installed: among them busybox and git GPL-2.0-only, musl MIT, openssh BSD, ca-certificates MPL-2.0 AND MIT)" \
      io.modkind.git="present"
