# syntax=docker/dockerfile:1
# modkind's image: a static modkind, terraform at a pinned version checked against the SHA256
# HashiCorp publishes, git and ssh for Modules with git sources, and a non-root user (65532).
# The root filesystem may be read-only: modkind and terraform write only /var/lib/modkind (work
# dir and HOME) and /tmp, where charts/modkind mounts volumes.
#
#   make image            # docker build --platform linux/amd64 ... when a Docker daemon answers
#
# Without Docker, `make image` assembles the same layout (hack/image) as an OCI image layout.
# linux/amd64 only: TERRAFORM_SHA256 is that archive's.

ARG GO_VERSION=1.26
ARG ALPINE_VERSION=3.22

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" -o /out/modkind .

FROM alpine:${ALPINE_VERSION} AS terraform
ARG TERRAFORM_VERSION=1.11.4
# terraform_1.11.4_linux_amd64.zip's line of
# https://releases.hashicorp.com/terraform/1.11.4/terraform_1.11.4_SHA256SUMS
ARG TERRAFORM_SHA256=1ce994251c00281d6845f0f268637ba50c0005657eb3cf096b92f753b42ef4dc
RUN wget -q -O /tmp/terraform.zip \
      "https://releases.hashicorp.com/terraform/${TERRAFORM_VERSION}/terraform_${TERRAFORM_VERSION}_linux_amd64.zip" \
 && echo "${TERRAFORM_SHA256}  /tmp/terraform.zip" | sha256sum -c - \
 && mkdir -p /out && unzip -o /tmp/terraform.zip terraform -d /out \
 && chmod 0755 /out/terraform

FROM alpine:${ALPINE_VERSION}
ARG TERRAFORM_VERSION=1.11.4
RUN apk add --no-cache ca-certificates git openssh-client \
 && addgroup -S -g 65532 modkind \
 && adduser -S -D -H -u 65532 -G modkind -h /var/lib/modkind -s /sbin/nologin modkind \
 && install -d -o 65532 -g 65532 -m 0700 /var/lib/modkind
COPY --from=terraform /out/terraform /usr/local/bin/terraform
COPY --from=build /out/modkind /usr/local/bin/modkind
# HOME is the work dir, so that terraform's files (.terraform.d) are on the work volume too;
# modkind's --terraform-binary defaults to MODKIND_TERRAFORM.
ENV HOME=/var/lib/modkind \
    TMPDIR=/tmp \
    MODKIND_TERRAFORM=/usr/local/bin/terraform
USER 65532:65532
WORKDIR /var/lib/modkind
ENTRYPOINT ["/usr/local/bin/modkind"]

ARG VERSION=dev
ARG REVISION=""
ARG LICENSES=NOASSERTION
ARG SOURCE=https://github.com/modkind/modkind
LABEL org.opencontainers.image.title="modkind" \
      org.opencontainers.image.description="Turns Terraform modules into Kubernetes kinds whose instances modkind applies with Terraform." \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="${LICENSES}" \
      io.modkind.terraform="Terraform v${TERRAFORM_VERSION}" \
      io.modkind.git="present"
