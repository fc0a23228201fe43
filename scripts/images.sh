#!/usr/bin/env bash
# Builds the FaaSCache container images with the machine's own container engine (podman, runc), no registry needed:
#   faascache-host-python:dev, faascache-host-node:dev, faascache-host-dotnet:dev   the host per language
#   faascache-controller:dev                                                    the scale controller
# Each base is a Debian bookworm root file system made with mmdebstrap from this machine's apt sources and imported as
# a local image (upstream, the same Containerfiles take BASE=debian:bookworm-slim plus the language's packages); the
# host and the controller are published self-contained (the .NET runtime packs come from NuGet), so no image carries
# an SDK. Safe to run again: a base or a publish is rebuilt only when missing (--force rebuilds everything).
# usage: scripts/images.sh [--force] [--only LANGUAGE|controller|azurite]   prints each image's size at the end
#   (azurite: only the node base, on which scripts/pods.sh runs Azurite from the set-up's node_modules)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/podman.sh
source "$root/scripts/lib/podman.sh"
say() { printf '[images] %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

force=0
only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --force) force=1 ;;
        --only) only="${2:?--only needs python, node, dotnet, controller or azurite}"; shift ;;
        -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1' (allowed: --force, --only LANGUAGE|controller|azurite)" ;;
    esac
    shift
done
case "$only" in ""|python|node|dotnet|controller|azurite) ;; *) die "--only '$only' is not python, node, dotnet, controller or azurite" ;; esac
for tool in podman mmdebstrap dotnet; do
    command -v "$tool" >/dev/null || die "$tool not found: run scripts/setup.sh (it installs podman, runc and mmdebstrap)"
done

work="$root/.artifacts/images"
mkdir -p "$work"
tag=dev

# A bookworm root file system with PACKAGES (and HOOKS: mmdebstrap customize hooks, run on this machine with the
# root file system as $1), imported as IMAGE (once; --force makes it again).
base_image() {
    local image=$1 packages=$2; shift 2
    if [ "$force" -eq 0 ] && podman_ image exists "$image"; then
        return
    fi
    say "base $image: mmdebstrap --variant=minbase --include=$packages bookworm (this machine's apt sources)"
    local tarball="$work/$(echo "${image##*/}" | tr : -).tar"
    local hooks=(--customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/usr/share/doc/* "$1"/usr/share/man/*')
    for hook in "$@"; do
        hooks+=(--customize-hook="$hook")
    done
    mmdebstrap --quiet --variant=minbase --include="$packages" "${hooks[@]}" bookworm "$tarball" \
        || die "mmdebstrap could not make $image (is the machine's apt source reachable? apt-get update)"
    podman_ import --quiet "$tarball" "$image" >/dev/null
    rm -f "$tarball"
}

# Node.js 20 is not in bookworm (18 is): the machine's own Node.js 20 binary goes into the node base.
node_hook="install -D -m 0755 $(command -v node) \"\$1/usr/local/bin/node\""

# A C# isolated app runs as `dotnet App.dll` (its worker.config.json): the .NET runtime, not the SDK, in its base.
dotnet_root="$(dirname "$(readlink -f "$(command -v dotnet)")")"
dotnet_hook="mkdir -p \"\$1/usr/share/dotnet\" && cp -a $dotnet_root/dotnet $dotnet_root/host $dotnet_root/shared \"\$1/usr/share/dotnet/\" && ln -sf /usr/share/dotnet/dotnet \"\$1/usr/bin/dotnet\""

publish() {
    local project=$1 out=$2
    if [ "$force" -eq 1 ] || [ ! -d "$out" ] || [ -n "$(find "$root/src" \( -name bin -o -name obj -o -name node_modules \) -prune -o -type f -newer "$out" -print -quit)" ]; then
        say "dotnet publish ${project#"$root"/} -c Release -r linux-x64 --self-contained -> ${out#"$root"/}"
        rm -rf "$out"
        dotnet publish "$project" -c Release -r linux-x64 --self-contained -o "$out" -nologo --verbosity quiet >"$work/publish.log" 2>&1 \
            || { tail -30 "$work/publish.log" >&2; die "publish of $project failed"; }
        touch "$out"
    fi
}

# No libicu: the projects run with InvariantGlobalization.
common="ca-certificates,libssl3,libstdc++6,tzdata"
build() {
    local image=$1 file=$2 context=$3; shift 3
    say "podman build $image ($file)"
    podman_ build --quiet --runtime runc --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 -f "$root/deploy/containers/$file" "$@" -t "$image" "$context" >/dev/null
}

if [ "$only" = azurite ]; then
    base_image "localhost/faascache-base-node:bookworm" "$common" "$node_hook"
    exit 0
fi

if [ -z "$only" ] || [ "$only" != controller ]; then
    publish "$root/src/Host.Cache/FaaSCache.Host" "$work/host/host"
    # The Python worker's FunctionRpc stubs, generated here (protoc is a build tool, not a runtime one).
    (cd "$work/host/host/workers/python" && FAASCACHE_PYTHON=/usr/bin/python3 bash build.sh >/dev/null)
fi

for language in python node dotnet; do
    [ -z "$only" ] || [ "$only" = "$language" ] || continue
    case "$language" in
        python) base_image "localhost/faascache-base-python:bookworm" "$common,python3,python3-grpcio,python3-protobuf" ;;
        node) base_image "localhost/faascache-base-node:bookworm" "$common" "$node_hook" ;;
        dotnet) base_image "localhost/faascache-base-dotnet-runtime:bookworm" "$common" "$dotnet_hook" ;;
    esac
    base="localhost/faascache-base-$language:bookworm"
    [ "$language" != dotnet ] || base="localhost/faascache-base-dotnet-runtime:bookworm"
    build "localhost/faascache-host-$language:$tag" host.Containerfile "$work/host" \
        --build-arg "BASE=$base" --build-arg "LANGUAGE=$([ "$language" = dotnet ] && echo dotnet-isolated || echo "$language")"
done

if [ -z "$only" ] || [ "$only" = controller ]; then
    publish "$root/src/ScaleController/FaaSCache.ScaleController" "$work/controller/controller"
    base_image "localhost/faascache-base-dotnet:bookworm" "$common"
    build "localhost/faascache-controller:$tag" controller.Containerfile "$work/controller" --build-arg "BASE=localhost/faascache-base-dotnet:bookworm"
fi

say "images:"
podman_ images --format '  {{.Repository}}:{{.Tag}}  {{.Size}}' | grep -E 'faascache-(host|controller|base)' | sort
