#!/usr/bin/env bash
# Runs a function app in pods on this machine's container engine (podman), from the Kubernetes manifests themselves.
#
# usage: scripts/pods.sh up APP_FOLDER [N]   builds what is missing, then Azurite, the scale controller and N host pods
#                                            (default 3) on one podman network; the last line is the app's URL
#        scripts/pods.sh add APP_FOLDER      one more host pod of a running app (it joins the membership ring)
#        scripts/pods.sh status [APP]        one line per host pod: name, address, its /admin/host/status JSON
#        scripts/pods.sh down [APP]          removes the app's pods, containers, network, secrets and volumes
#
#   up    1. images: scripts/images.sh --only LANGUAGE and --only controller (each made only when missing or stale),
#            then the app's image FROM the host image of its language (deploy/containers/app.Containerfile), with the
#            app folder copied in (links resolved; local.settings.json, .faascache and __pycache__ left out);
#         2. a podman network faascache-APP, and Azurite (blob, 10000) on it with its data in the state folder;
#         3. `faascache kubernetes manifests --replicas N --storage <Azurite on the network>` writes the manifests a
#            cluster would take (manifests.yaml in the state folder); scripts/lib/kube_podman.py makes what only podman
#            needs (no downward status.podIP, no Services, secrets as podman reads them, /dev/shm per container, no
#            probes) and `podman kube play` plays the controller and then the host Deployment;
#         4. waits until every host pod answers /admin/host/ready, prints the status lines, and then
#            "url: http://127.0.0.1:PORT" (the controller's front door, spreading /api/* over the host pods).
#   The state folder is .artifacts/pods/APP (podman/keys.env holds the master and default function key, 0600).
#
# Environment: FAASCACHE_PODS_DIR (default: the repository's .artifacts/pods), FAASCACHE_IMAGE_TAG (default dev: the
# app image is localhost/faascache-app-APP:TAG; tests set their own tag and remove it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_PREFIX=pods
# shellcheck source=lib/common.sh
source "$root/scripts/lib/common.sh"
# shellcheck source=lib/podman.sh
source "$root/scripts/lib/podman.sh"

pods_root="${FAASCACHE_PODS_DIR:-$root/.artifacts/pods}"
tag="${FAASCACHE_IMAGE_TAG:-dev}"
faascache="${FAASCACHE_TOOL:-$root/.artifacts/bin/faascache}"
azurite_key="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

# APP: the app folder's name as a DNS-1123 label (what the manifests command names the app).
app_name() {
    local name
    name="$(basename "$(cd "$1" && pwd)" | tr '[:upper:]_.' '[:lower:]--' | tr -cd 'a-z0-9-' | sed 's/^-*//; s/-*$//')"
    [ -n "$name" ] || die "cannot make a name from the folder '$1'"
    echo "$name"
}

ip_of() { podman_ inspect "$1" --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' 2>/dev/null; }

# The app's pods by name (podman 4.3's kube play sets no labels of ours): NAME-pod-K (the Deployment's replicas),
# NAME-more-K-pod-0 (added), NAME-controller-pod-0.
app_pods() { podman_ pod ps --format '{{.Name}}' | grep -E "^$1-(pod-[0-9]+|more-[0-9]+-pod-0${2:+|controller-pod-0})\$" | sort -V || true; }
host_pods() { app_pods "$1"; }

key_of() { sed -n "s/^$2=//p" "$pods_root/$1/podman/keys.env"; }

# One line per host pod: name, address, /admin/host/status (with the master key).
status() {
    local name=$1 pod ip master
    [ -f "$pods_root/$name/podman/keys.env" ] || die "no pods of '$name' (scripts/pods.sh up APP_FOLDER first)"
    master="$(key_of "$name" master)"
    for pod in $(host_pods "$name"); do
        if [ "$(podman_ inspect "$pod-host" --format '{{.State.Running}}' 2>/dev/null)" != true ]; then
            printf '%s - stopped\n' "$pod"
            continue
        fi
        ip="$(ip_of "$pod-host")"
        printf '%s %s %s\n' "$pod" "${ip:-?}" "$(curl -s -m 5 -H "x-functions-key: $master" "http://$ip:7071/admin/host/status" || echo '{"error":"no answer"}')"
    done
}

# Waits until each host pod named (default: every host pod of the app) answers /admin/host/ready.
wait_ready() {
    local name=$1 pod ip deadline=$((SECONDS + 180))
    shift
    for pod in ${@:-$(host_pods "$name")}; do
        ip="$(ip_of "$pod-host")"
        until [ -n "$ip" ] && [ "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "http://$ip:7071/admin/host/ready")" = 200 ]; do
            if [ "$(podman_ inspect "$pod-host" --format '{{.State.Running}}' 2>/dev/null)" != true ]; then
                podman_ logs --tail 30 "$pod-host" >&2 || true
                die "host pod $pod stopped before it was ready (its last log lines above)"
            fi
            [ "$SECONDS" -lt "$deadline" ] || { podman_ logs --tail 30 "$pod-host" >&2 || true; die "host pod $pod was not ready within 180 s"; }
            sleep 1
            ip="$(ip_of "$pod-host")"
        done
        say "$pod ready at $ip"
    done
}

# podman kube play FILE on the app's network, with the app's containers.conf (runc, ulimits, shm_size).
play() {
    local name=$1 file=$2
    CONTAINERS_CONF="$pods_root/$name/containers.conf" podman kube play --network "faascache-$name" "$file" >/dev/null \
        || die "podman kube play $file failed"
}

up() {
    local app=$1 replicas=${2:-3} name dir language host_image app_image context front_door azurite_ip connection
    [ -f "$app/host.json" ] || die "'$app' is not a function app folder (no host.json)"
    [[ "$replicas" =~ ^[1-9][0-9]?$ ]] || die "N '$replicas' must be a number of pods from 1 to 99"
    [ -x "$faascache" ] || die "$faascache not found: run scripts/setup.sh (it installs the faascache tool)"
    name="$(app_name "$app")"
    dir="$pods_root/$name"
    if podman_ network exists "faascache-$name" 2>/dev/null; then
        die "'$name' is already up (scripts/pods.sh status $name; scripts/pods.sh down $name)"
    fi
    rm -rf "$dir"
    mkdir -p "$dir/azurite"
    chmod 0700 "$dir"

    say "images (scripts/images.sh: each made only when missing or stale)"
    bash "$root/scripts/images.sh" --only azurite >/dev/null
    bash "$root/scripts/images.sh" --only controller >/dev/null

    podman_ network create --label "faascache-app=$name" "faascache-$name" >/dev/null
    podman_ run -d --name "faascache-$name-azurite" --network "faascache-$name" --label "faascache-app=$name" \
        -v "$root/node_modules:/opt/azurite/node_modules:ro" -v "$dir/azurite:/data" \
        localhost/faascache-base-node:bookworm /usr/local/bin/node /opt/azurite/node_modules/azurite/dist/src/blob/main.js \
        --blobHost 0.0.0.0 --blobPort 10000 --location /data --silent --loose --disableTelemetry >/dev/null \
        || die "Azurite did not start (is node_modules/azurite installed? scripts/setup.sh)"
    azurite_ip="$(ip_of "faascache-$name-azurite")"
    connection="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$azurite_key;BlobEndpoint=http://$azurite_ip:10000/devstoreaccount1;"
    until curl -s -m 2 -o /dev/null "http://$azurite_ip:10000/devstoreaccount1?comp=list"; do
        [ "$(podman_ inspect "faascache-$name-azurite" --format '{{.State.Running}}')" = true ] || { podman_ logs "faascache-$name-azurite" >&2; die "Azurite stopped"; }
        sleep 0.5
    done
    printf 'AzureWebJobsStorage=%s\n' "$connection" >"$dir/storage.env"
    say "Azurite at $azurite_ip:10000"

    # The manifests a cluster would take, for this app, with storage at Azurite's address on the network.
    app_image="localhost/faascache-app-$name:$tag"
    "$faascache" kubernetes manifests --script-root "$app" --app-name "$name" --image "$app_image" \
        --controller-image localhost/faascache-controller:dev --replicas "$replicas" --storage "$connection" \
        >"$dir/manifests.yaml" || die "faascache kubernetes manifests failed for $app"
    front_door="$(free_port)"
    python3 "$root/scripts/lib/kube_podman.py" "$dir/manifests.yaml" "$dir/podman" --front-door-port "$front_door" | sed 's/^/  /'
    language="$(cat "$dir/podman/language")"
    case "$language" in
        python|node) ;;
        dotnet-isolated) language=dotnet ;;
        *) die "the manifests name no FUNCTIONS_WORKER_RUNTIME this script has a host image for ('$language')" ;;
    esac
    host_image="localhost/faascache-host-$language:dev"
    bash "$root/scripts/images.sh" --only "$language" >/dev/null
    podman_ image exists "$host_image" || die "$host_image was not built"
    context="$(mktemp -d)"
    if compgen -G "$app/*.csproj" >/dev/null; then
        # A C# isolated project: the image holds its publish output (host.json, worker.config.json, the app's dll), as
        # a Functions app image does; the host runs it with the .NET runtime of the dotnet host image.
        say "dotnet publish $app -c Release (the C# isolated app's output goes into the image)"
        dotnet publish "$app" -c Release -o "$context" -nologo --verbosity quiet >"$dir/publish.log" 2>&1 \
            || { tail -20 "$dir/publish.log" >&2; rm -rf "$context"; die "dotnet publish of $app failed"; }
    else
        cp -aL "$app/." "$context/"
    fi
    rm -rf "$context/local.settings.json" "$context/.faascache" "$context/.venv"
    find "$context" -name __pycache__ -prune -exec rm -rf {} +
    podman_ build --quiet --runtime runc -f "$root/deploy/containers/app.Containerfile" --build-arg "HOST=$host_image" \
        -t "$app_image" "$context" >/dev/null || { rm -rf "$context"; die "podman build of $app_image failed"; }
    rm -rf "$context"
    say "app image $app_image: $(podman_ image inspect "$app_image" --format '{{.Size}}' | numfmt --to=iec)"

    # What only podman needs: runc, ulimits, and each container's /dev/shm as large as the manifests' shm sizeLimit.
    local shm secret controller_ip
    shm="$(sed 's/Mi$/m/; s/Gi$/g/' "$dir/podman/shm-size")"
    sed "s/^\[containers\]$/[containers]\nshm_size = \"$shm\"/" "$faascache_containers_conf" >"$dir/containers.conf"
    for secret in "$dir"/podman/secrets/*.json; do
        podman_ secret rm "$(basename "$secret" .json)" >/dev/null 2>&1 || true
        podman_ secret create "$(basename "$secret" .json)" "$secret" >/dev/null
    done
    play "$name" "$dir/podman/controller.yaml"
    controller_ip="$(ip_of "$name-controller-pod-0-controller")"
    [ -n "$controller_ip" ] || die "the controller pod has no address"
    python3 "$root/scripts/lib/kube_podman.py" "$dir/manifests.yaml" "$dir/podman" --front-door-port "$front_door" --controller-ip "$controller_ip" >/dev/null
    play "$name" "$dir/podman/hosts.yaml"
    echo "$front_door" >"$dir/front-door-port"
    wait_ready "$name"
    status "$name"
    echo "url: http://127.0.0.1:$front_door"
}

add() {
    local app=$1 name dir k
    name="$(app_name "$app")"
    dir="$pods_root/$name"
    [ -f "$dir/podman/hosts.yaml" ] || die "'$name' is not up (scripts/pods.sh up $app first)"
    k=1
    while podman_ pod exists "$name-more-$k-pod-0"; do k=$((k + 1)); done
    python3 "$root/scripts/lib/kube_podman.py" "$dir/manifests.yaml" "$dir/podman" --front-door-port "$(cat "$dir/front-door-port")" \
        --controller-ip "$(ip_of "$name-controller-pod-0-controller")" --more "$name-more-$k"
    play "$name" "$dir/podman/$name-more-$k.yaml"
    wait_ready "$name" "$name-more-$k-pod-0"
    say "added $name-more-$k-pod-0"
}

down() {
    local name=$1 dir pods
    dir="$pods_root/$name"
    pods="$(app_pods "$name" all)"
    if [ -n "$pods" ]; then
        # SIGTERM first: each host leaves the membership and hands over what it owns within the grace period.
        # shellcheck disable=SC2086
        podman_ pod stop --time 30 $pods >/dev/null 2>&1 || true
        # shellcheck disable=SC2086
        podman_ pod rm -f $pods >/dev/null
    fi
    podman_ rm -f "faascache-$name-azurite" >/dev/null 2>&1 || true
    local secret
    for secret in "$name-settings" "$name-keys"; do podman_ secret rm "$secret" >/dev/null 2>&1 || true; done
    podman_ volume ls --filter "label=faascache-app=$name" --format '{{.Name}}' | xargs -r podman_ volume rm -f >/dev/null
    podman_ network rm -f "faascache-$name" >/dev/null 2>&1 || true
    rm -rf "$dir"
    local left
    left="$(podman_ ps -a --filter "label=faascache-app=$name" --format '{{.Names}}')$(app_pods "$name" all)$(podman_ ps -a --format '{{.Names}}' | grep -E "^$name-(pod-[0-9]+|more-[0-9]+-pod-0|controller-pod-0)-" || true)"
    [ -z "$left" ] || die "left behind: $left"
    say "down: no pod, container, network, secret or volume of '$name' left"
}

command="${1:-}"
case "$command" in
    up) [ $# -ge 2 ] || { usage; exit 2; }; up "$2" "${3:-3}" ;;
    add) [ $# -eq 2 ] || { usage; exit 2; }; add "$2" ;;
    status) status "${2:-$(ls "$pods_root" 2>/dev/null | head -n 1)}" ;;
    down)
        if [ $# -ge 2 ]; then
            name="$2"; [ -d "$2" ] && name="$(app_name "$2")"; down "$name"
        else
            for d in "$pods_root"/*/; do [ -d "$d" ] && down "$(basename "$d")"; done
        fi ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
esac
