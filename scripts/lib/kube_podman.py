#!/usr/bin/python3
"""What only podman needs, done to the Kubernetes manifests `faascache kubernetes manifests` writes (scripts/pods.sh).

The manifests stay as a cluster takes them; podman 4.3's `kube play` (shared/reference/containers.md) differs from a
cluster in these ways, each handled here and nowhere else:
- no downward API for status.podIP, and no $(VAR) expansion in args: the host's `$(POD_IP)` becomes `auto` (its
  --peer-address/--listen-address auto: the container's own address) and `$(POD_NAME)` becomes `auto` (--instance-id
  auto: the host name, which is the pod's name as in a cluster); the POD_IP env value becomes `auto` too;
- a Secret played by kube play is stored as YAML, but secretKeyRef reads a podman secret as JSON of base64 values:
  Secrets are written out as such JSON (pods.sh creates the podman secrets from them) and left out of the play file;
- no Services and no cluster DNS: the Services and the KEDA ScaledObject are not played; the controller's Service name
  is given to the host pods as a hostAliases entry with the controller pod's address (--controller-ip), and the
  controller's http port is published on 127.0.0.1 (--front-door-port), where its --member-http-port front door spreads
  /api/* over the host pods;
- an emptyDir is one named volume shared by every pod (on disk): /dev/shm stays the container's own tmpfs, sized by
  the engine (pods.sh's containers.conf shm_size, from the shm volume's sizeLimit);
- a Secret volume makes kube play panic (podman 4.3's VolumeFromSecret): it becomes a hostPath volume, a 0700 folder
  of the state holding the Secret's keys as 0600 files, mounted read-only where the Secret would be;
- every containerPort is published on the machine (hostPort = containerPort when none is given), so a second pod of a
  Deployment cannot start: ports are left out but the front door's;
- a probe becomes a health check that runs curl inside the container on port 0 for a named port: probes are left out
  (pods.sh waits for /admin/host/ready itself).

usage: kube_podman.py MANIFESTS OUT_DIR [--controller-ip IP] [--front-door-port PORT] [--more NAME]
writes OUT_DIR/secrets/NAME.json, OUT_DIR/controller.yaml, OUT_DIR/hosts.yaml, OUT_DIR/shm-size (e.g. 768Mi),
OUT_DIR/language (the hosts' FUNCTIONS_WORKER_RUNTIME), OUT_DIR/keys.env (master= and function= from the keys Secret,
0600), and prints one line per object left out and why. --more NAME writes only OUT_DIR/NAME.yaml: the host Deployment
renamed NAME with one replica (one more host pod of the same app: pods.sh add).
"""
import argparse
import base64
import json
import pathlib
import sys

import yaml

# Where a cluster expands these from the downward API, the host finds the same values itself.
AUTO = {"$(POD_IP)": "auto", "$(POD_NAME)": "auto"}

NOT_PLAYED = {
    "Service": "no Services on podman (the controller's --member-http-port front door spreads requests)",
    "ScaledObject": "KEDA needs a cluster (its scaler face is tested as KEDA calls it)",
    "Namespace": "podman has no namespaces",
}


def secret_json(secret: dict) -> dict:
    data = dict(secret.get("data") or {})
    for key, value in (secret.get("stringData") or {}).items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    return data


def secret_folder(out: pathlib.Path, name: str, data: dict) -> pathlib.Path:
    folder = (out / "secret-volumes" / name).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    folder.parent.chmod(0o700)
    folder.chmod(0o700)
    for key, value in data.items():
        path = folder / key
        path.touch(mode=0o600)
        path.write_bytes(base64.b64decode(value))
    return folder


def adapt_pod_spec(spec: dict, controller_host: str | None, controller_ip: str | None, front_door_port: int | None,
                   secret_folders: dict | None = None) -> str | None:
    shm_size = None
    shm_volumes = set()
    for volume in spec.get("volumes") or []:
        secret = volume.get("secret")
        if secret is not None and secret_folders is not None and secret.get("secretName") in secret_folders:
            del volume["secret"]
            volume["hostPath"] = {"path": str(secret_folders[secret["secretName"]]), "type": "Directory"}
        empty = volume.get("emptyDir")
        if empty is not None and empty.get("medium") == "Memory":
            shm_volumes.add(volume["name"])
            shm_size = empty.get("sizeLimit") or shm_size
    spec["volumes"] = [v for v in spec.get("volumes") or [] if v["name"] not in shm_volumes]
    if not spec["volumes"]:
        del spec["volumes"]
    for container in spec.get("containers") or []:
        container.pop("readinessProbe", None)
        container.pop("livenessProbe", None)
        container.pop("startupProbe", None)
        mounts = [m for m in container.get("volumeMounts") or [] if m["name"] not in shm_volumes]
        if mounts:
            container["volumeMounts"] = mounts
        else:
            container.pop("volumeMounts", None)
        if container.get("args"):
            container["args"] = [AUTO.get(a, a) for a in container["args"]]
        for env in container.get("env") or []:
            field = ((env.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
            if field == "status.podIP":
                del env["valueFrom"]
                env["value"] = "auto"
        # podman 4.3 publishes every containerPort on the machine (hostPort = containerPort when none is given): the
        # second pod of a Deployment could not start. Only the front door is published, on 127.0.0.1.
        ports = [p for p in container.get("ports") or [] if front_door_port is not None and p.get("name") == "http"]
        for port in ports:
            port["hostPort"] = front_door_port
            port["hostIP"] = "127.0.0.1"
        if ports:
            container["ports"] = ports
        else:
            container.pop("ports", None)
    if controller_host and controller_ip:
        spec["hostAliases"] = [{"ip": controller_ip, "hostnames": [controller_host]}]
    return shm_size


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("manifests")
    parser.add_argument("out")
    parser.add_argument("--controller-ip")
    parser.add_argument("--front-door-port", type=int)
    parser.add_argument("--more")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    (out / "secrets").mkdir(parents=True, exist_ok=True)
    documents = [d for d in yaml.safe_load_all(pathlib.Path(args.manifests).read_text()) if d]
    deployments = [d for d in documents if d.get("kind") == "Deployment"]
    controllers = [d for d in deployments if d["metadata"]["name"].endswith("-controller")]
    hosts = [d for d in deployments if d not in controllers]
    if len(controllers) != 1 or len(hosts) != 1:
        print(f"kube_podman: expected one host Deployment and one NAME-controller Deployment in {args.manifests}, "
              f"found {[d['metadata']['name'] for d in deployments]}", file=sys.stderr)
        return 1
    controller = controllers[0]
    namespace = controller["metadata"].get("namespace", "default")
    controller_host = f"{controller['metadata']['name']}.{namespace}.svc.cluster.local"
    shm_size = None
    secret_folders = {}
    for document in documents:
        kind = document.get("kind")
        name = document["metadata"]["name"]
        if kind == "Secret":
            data = secret_json(document)
            (out / "secrets" / f"{name}.json").write_text(json.dumps(data))
            secret_folders[name] = secret_folder(out, name, data)
            if "host.master" in data:
                keys = out / "keys.env"
                keys.touch(mode=0o600)
                keys.write_text("".join(f"{k}={base64.b64decode(data[f'host.{s}']).decode()}\n"
                                        for k, s in (("master", "master"), ("function", "function.default")) if f"host.{s}" in data))
        elif kind in NOT_PLAYED:
            print(f"not played: {kind} {name}: {NOT_PLAYED[kind]}")
        elif kind != "Deployment":
            print(f"not played: {kind} {name}: not a kind scripts/pods.sh plays")
    adapt_pod_spec(controller["spec"]["template"]["spec"], None, None, args.front_door_port, secret_folders)
    host = hosts[0]
    if args.more:
        adapt_pod_spec(host["spec"]["template"]["spec"], controller_host, args.controller_ip, None, secret_folders)
        host["metadata"]["name"] = args.more
        host["spec"]["replicas"] = 1
        (out / f"{args.more}.yaml").write_text(yaml.safe_dump(host, sort_keys=False))
        return 0
    shm_size = adapt_pod_spec(host["spec"]["template"]["spec"], controller_host, args.controller_ip, None, secret_folders)
    (out / "controller.yaml").write_text(yaml.safe_dump(controller, sort_keys=False))
    (out / "hosts.yaml").write_text(yaml.safe_dump(host, sort_keys=False))
    (out / "shm-size").write_text(shm_size or "64Mi")
    (out / "host-deployment").write_text(hosts[0]["metadata"]["name"])
    runtime = [e.get("value", "") for c in host["spec"]["template"]["spec"]["containers"] for e in c.get("env") or []
               if e.get("name") == "FUNCTIONS_WORKER_RUNTIME"]
    (out / "language").write_text(runtime[0] if runtime else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
