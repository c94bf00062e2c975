#!/usr/bin/env python3
"""The test overlay of deploy/kubernetes/ for `podman kube play` (podman 4.3),
used by tests/oci/kube_play_test.sh. docs/deploy.md#podman-kube-play-test.

  kube_overlay.py runner  MANIFESTS CERTS IMAGE WORKDIR PORTS > runner.yaml
  kube_overlay.py gateway MANIFESTS CERTS IMAGE WORKDIR PORTS DSN TOKEN RUNNER_IP > gateway.yaml

PORTS: NAME=HOSTPORT,... for every containerPort (change 7). The Secrets go
to WORKDIR/secrets/NAME.yaml, one file each, for `podman secret create NAME
WORKDIR/secrets/NAME.yaml` (change 5); the ConfigMaps' files to
WORKDIR/configmaps/NAME/KEY (change 9).

Reads the real gateway.yaml / runner-host.yaml / secrets.example.yaml and
prints what podman 4.3 can play, changing only what it lacks or what a single
machine without a cluster needs. Everything else is passed through as is: the
ConfigMaps (airlock.json), the commands, args, env, ports, probes, securityContext
(privileged, runAsUser, readOnlyRootFilesystem, ...), volumes and mounts.

The changes, each because:
  1. Only the Deployments are played: podman 4.3 plays Pods, Deployments
     and PVCs. ServiceAccount, Service, PodDisruptionBudget, NetworkPolicy
     and Namespace have no podman equivalent and are left out; the Secrets
     and ConfigMaps reach the pods as changes 5 and 9 say.
  2. The runner hosts' StatefulSet becomes a Deployment with the same pod
     template (podman 4.3 has no StatefulSet); nothing in it depends on the
     StatefulSet's stable names or storage (it has none).
  3. replicas: 1 for both (one 2-core machine; the runner hosts' anti-affinity
     allows one per node anyway). podman ignores nodeSelector, tolerations,
     affinity and topologySpreadConstraints; they stay in.
  4. image: the tag built by packaging/oci/build.sh (kustomization.yaml's
     `images:` rewrite, which podman does not apply).
  5. The four Secrets of secrets.example.yaml, same names and keys, filled
     with this run's certificates (make-certs.sh), PostgreSQL DSN and metrics
     token; the DSN's root.crt key is dropped (the test database has no TLS).
     podman 4.3 does not play kind Secret (newer podman does): a secret volume names a
     podman secret whose content is the Secret's YAML, so each Secret is
     written to a file of its own for `podman secret create`. And 4.3 reads
     only `data`, copying its values into the files without base64-decoding
     them: the values go into `data` as plain text.
  6. The gateway gets hostAliases mapping the headless Service's names
     (runner.dns, airlock-runner-host.airlock.svc.cluster.local) to the runner
     host pod's IP: podman's CNI network here has no DNS plugin and there is
     no cluster DNS. The gateway still resolves runner.dns with getaddrinfo
     and connects by IP, checking the certificate against
     runner.tls.server_name, as in a cluster.
  7. Every containerPort gets hostIP 127.0.0.1 and a free hostPort: podman
     4.3 publishes a containerPort without hostPort on the host's 0.0.0.0
     at the same number (7700, 8787, 9090 would then be open to the
     network and clash with anything else on them). The test reaches the
     gateway's http port there (what `kubectl port-forward` gives) as
     localhost, a Host the gateway accepts like its probes' Host header.
  8. Secret volumes get `optional: false` (Kubernetes' default, so nothing
     changes): podman 4.3 crashes on a secret volume without the field.
  9. A configMap volume mounted with subPath (airlock.json at
     /etc/airlock/airlock.json) becomes a hostPath volume of type File
     holding the same key's text, mounted at the same path: podman 4.3
     ignores subPath on configMap volumes and mounts the whole directory
     over the file ("not a directory"). The text is the real ConfigMap's.
  10. emptyDir volumes are renamed WORKLOAD-NAME (state -> airlock-gateway-state):
     podman 4.3 makes each emptyDir a podman volume named after the pod
     spec's volume name, so the gateway's and the runner host's `state` and
     `tmp` would be one shared volume. (sizeLimit is not enforced by podman.)

Not changeable here, so only noted: podman 4.3 runs no probe (a liveness
probe becomes a healthcheck driven by systemd timers, absent in this
container; readiness probes are ignored): the test sends the probes' own
requests (path, port, Host header read from the manifests) itself. preStop
hooks and terminationGracePeriodSeconds are not run by podman either.
"""
import copy
import os
import sys

import yaml


def load(path):
    return [d for d in yaml.safe_load_all(open(path)) if d]


def one(docs, kind, name):
    for d in docs:
        if d["kind"] == kind and d["metadata"]["name"] == name:
            return copy.deepcopy(d)
    raise SystemExit(f"kube_overlay.py: no {kind} {name}")


def read(path):
    with open(path) as f:
        return f.read()


def secret(example, name, values):
    """A Secret of secrets.example.yaml with its stringData filled from
    values (every key the template has must be given, or listed as None to drop)."""
    s = one(example, "Secret", name)
    keys = set(s["stringData"])
    missing = keys - set(values)
    if missing:
        raise SystemExit(f"kube_overlay.py: no value for {name}: {sorted(missing)}")
    # podman 4.3 reads only `data`, and writes its values into the files
    # without base64-decoding them: the plain text goes into `data` (what
    # Kubernetes would reject). The files come out 0644
    # root-owned (podman 4.3 ignores defaultMode and fsGroup).
    s.pop("stringData")
    s["data"] = {k: v for k, v in values.items() if v is not None}
    return s


def as_deployment(sts):
    """Change 2: a StatefulSet's pod template in a Deployment."""
    d = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": sts["metadata"],
        "spec": {
            "replicas": sts["spec"]["replicas"],
            "selector": sts["spec"]["selector"],
            "template": sts["spec"]["template"],
        },
    }
    return d


def set_image(deploy, image):
    for c in deploy["spec"]["template"]["spec"]["containers"]:
        c["image"] = image


def secrets_not_optional(deploy):
    """Change 8: podman 4.3 dereferences a secret volume's `optional`
    without a nil check (a SIGSEGV in VolumeFromSecret when it is absent);
    false is Kubernetes' default, so the meaning is unchanged."""
    for v in deploy["spec"]["template"]["spec"].get("volumes", []):
        if "secret" in v:
            v["secret"].setdefault("optional", False)


def publish(deploy, ports):
    """Change 7."""
    for c in deploy["spec"]["template"]["spec"]["containers"]:
        for p in c.get("ports", []):
            if p["name"] not in ports:
                raise SystemExit(f"kube_overlay.py: no host port for {p['name']}")
            p["hostPort"] = int(ports[p["name"]])
            p["hostIP"] = "127.0.0.1"


def configmap_files(deploy, configmaps, workdir):
    """Change 9."""
    spec = deploy["spec"]["template"]["spec"]
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for c in spec["containers"]:
        for m in c.get("volumeMounts", []):
            v = vols[m["name"]]
            if "configMap" not in v or "subPath" not in m:
                continue
            cm = configmaps[v["configMap"]["name"]]
            key = m.pop("subPath")
            path = f"{workdir}/configmaps/{cm['metadata']['name']}/{key}"
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(cm["data"][key])
            os.chmod(path, 0o644)
            del v["configMap"]
            v["hostPath"] = {"path": path, "type": "File"}


def rename_empty_dirs(deploy):
    """Change 10."""
    spec = deploy["spec"]["template"]["spec"]
    prefix = deploy["metadata"]["name"]
    renamed = {}
    for v in spec.get("volumes", []):
        if "emptyDir" in v:
            renamed[v["name"]] = v["name"] = f"{prefix}-{v['name']}"
    for c in spec["containers"]:
        for m in c.get("volumeMounts", []):
            m["name"] = renamed.get(m["name"], m["name"])


def main():
    role, manifests, certs, image, workdir, ports = sys.argv[1:7]
    ports = dict(p.split("=") for p in ports.split(","))
    example = load(f"{manifests}/secrets.example.yaml")
    out = []
    if role == "runner":
        docs = load(f"{manifests}/runner-host.yaml")
        dep = as_deployment(one(docs, "StatefulSet", "airlock-runner-host"))
        dep["spec"]["replicas"] = 1
        set_image(dep, image)
        secrets_not_optional(dep)
        rename_empty_dirs(dep)
        publish(dep, ports)
        cm = one(docs, "ConfigMap", "airlock-runner-host-config")
        configmap_files(dep, {cm["metadata"]["name"]: cm}, workdir)
        out = [
            secret(example, "airlock-runner-host-tls", {
                "ca.crt": read(f"{certs}/ca.crt"),
                "tls.crt": read(f"{certs}/runner-host.crt"),
                "tls.key": read(f"{certs}/runner-host.key"),
            }),
            dep,
        ]
    elif role == "gateway":
        dsn, token, runner_ip = sys.argv[7:10]
        docs = load(f"{manifests}/gateway.yaml")
        cm = one(docs, "ConfigMap", "airlock-gateway-config")
        cfg = yaml.safe_load(cm["data"]["airlock.json"])  # JSON is YAML
        dns_name = cfg["runner"]["dns"].rsplit(":", 1)[0]
        dep = one(docs, "Deployment", "airlock-gateway")
        dep["spec"]["replicas"] = 1
        set_image(dep, image)
        secrets_not_optional(dep)
        rename_empty_dirs(dep)
        publish(dep, ports)
        configmap_files(dep, {cm["metadata"]["name"]: cm}, workdir)
        pod = dep["spec"]["template"]["spec"]
        short = dns_name.split(".")[0]
        pod["hostAliases"] = [{"ip": runner_ip, "hostnames": sorted({dns_name, short, f"{short}.airlock.svc"})}]
        out = [
            secret(example, "airlock-gateway-tls", {
                "ca.crt": read(f"{certs}/ca.crt"),
                "tls.crt": read(f"{certs}/gateway.crt"),
                "tls.key": read(f"{certs}/gateway.key"),
            }),
            secret(example, "airlock-db", {"dsn": dsn, "root.crt": None}),
            secret(example, "airlock-metrics-token", {"token": token}),
            dep,
        ]
    else:
        raise SystemExit("usage: kube_overlay.py runner|gateway MANIFESTS CERTS IMAGE WORKDIR PORTS [DSN TOKEN RUNNER_IP]")
    os.makedirs(f"{workdir}/secrets", exist_ok=True)
    for d in out:
        if d["kind"] == "Secret":
            with open(f"{workdir}/secrets/{d['metadata']['name']}.yaml", "w") as f:
                yaml.safe_dump(d, f, sort_keys=False)
    yaml.safe_dump_all([d for d in out if d["kind"] != "Secret"], sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
