# The container engine as this machine kind runs it (shared/reference/containers.md): runc (crun refuses cgroups in
# hybrid mode), ulimits below the hard limits (podman's defaults exceed them), cgroupfs, events to a file. Only the
# scripts need this; the Kubernetes manifests stay as a cluster takes them. Sourced by images.sh and pods.sh.
faascache_containers_conf="${TMPDIR:-/tmp}/faascache-containers.conf"
cat >"$faascache_containers_conf" <<'CONF'
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
podman_() { CONTAINERS_CONF="$faascache_containers_conf" podman "$@"; }
