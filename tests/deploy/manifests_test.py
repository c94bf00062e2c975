#!/usr/bin/env python3
"""Checks deploy/kubernetes against the airlock binary, so the two cannot drift.

Usage: manifests_test.py PATH/TO/airlock

Every YAML file under deploy/kubernetes is parsed, and what the manifests say
is checked against the real binary: its subcommands and flags (`--help`), the
ports in the arguments against containerPorts, Services, NetworkPolicies and
probes, the configuration JSON in the ConfigMaps against the binary's own
validation, the probe paths against a running `airlock serve` and a running
`airlock runner-host` (mutual TLS included, with certificates from
deploy/kubernetes/make-certs.sh), and the selectors, Secrets and mounts
against each other. server.json's OCI packages are checked too: their image
is the one packaging/oci/build.sh tags (--dry-run) and the manifests run,
build.sh's io.modelcontextprotocol.server.name label is server.json's name,
and the flags they pass exist (`airlock serve --help`, `podman run --help`).
Each check prints PASS or FAIL with what is wrong; the exit code is 1 when
any failed. Needs python3, python3-yaml and openssl.
"""

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
# AIRLOCK_MANIFESTS_DIR: check another copy (e.g. an overlay's output) instead.
KDIR = pathlib.Path(os.environ.get("AIRLOCK_MANIFESTS_DIR", ROOT / "deploy" / "kubernetes")).resolve()
MAKE_CERTS = KDIR / "make-certs.sh"

EXPECTED_KINDS = {
    "Namespace", "ServiceAccount", "ConfigMap", "Secret", "Deployment", "StatefulSet", "Service",
    "NetworkPolicy", "PodDisruptionBudget", "Kustomization",
}
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
CLUSTER_SCOPED = {"Namespace", "Kustomization"}
PROBE_PATHS = {"/healthz", "/readyz"}
ADDRESS_FLAGS = ("--http", "--listen", "--probe", "--metrics")
GATEWAY_SUB = "serve"
RUNNER_SUB = "runner-host"
# Where each role's probes must point: the flag whose port serves /healthz and /readyz.
PROBE_PORT_FLAG = {GATEWAY_SUB: "--http", RUNNER_SUB: "--probe"}
STARTUP_TIMEOUT_S = 90


class CheckFailed(Exception):
    pass


class Check:
    """Collects the problems one check finds."""

    def __init__(self, name):
        self.name = name
        self.errors = []
        self.notes = []

    def error(self, msg):
        self.errors.append(msg)

    def note(self, msg):
        self.notes.append(msg)

    def expect(self, cond, msg):
        if not cond:
            self.error(msg)
        return cond


# ---------------------------------------------------------------- helpers


def run(argv, timeout=60, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def parse_address(value):
    """HOST:PORT or [V6]:PORT -> (host, port)."""
    m = re.fullmatch(r"\[([^\]]+)\]:(\d+)|([^:\[\]]*):(\d+)", value or "")
    if not m:
        raise ValueError(f"not HOST:PORT: {value!r}")
    host = m.group(1) if m.group(1) is not None else m.group(3)
    port = int(m.group(2) or m.group(4))
    if not 0 < port < 65536:
        raise ValueError(f"port out of range: {value!r}")
    return host, port


def quantity(value, cpu=False):
    """A Kubernetes quantity as a number (bytes, or cores when cpu)."""
    s = str(value)
    if cpu and s.endswith("m"):
        return float(s[:-1]) / 1000
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    for u, f in units.items():
        if s.endswith(u):
            return float(s[: -len(u)]) * f
    return float(s)


def selector_matches(selector, labels):
    """A LabelSelector (matchLabels, matchExpressions) against a label map."""
    if selector is None:
        return False
    labels = labels or {}
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path, headers, timeout=3):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (OSError, urllib.error.URLError) as e:
        return None, str(e)


# ------------------------------------------------------------- the binary


class Help:
    """What `airlock SUB --help` says: does SUB exist, its options and their arity."""

    def __init__(self, binary, sub):
        self.sub = sub
        p = run([binary, sub, "--help"])
        self.text = p.stdout + p.stderr
        usage = re.search(r"^Usage: (\S+)(.*)$", self.text, re.M)
        # CLI11 prints the top-level help, exit 0, for an unknown subcommand:
        # the Usage line tells whose help this is.
        self.exists = bool(p.returncode == 0 and usage and re.match(rf"\s+{re.escape(sub)}(\s|$)", usage.group(2)))
        self.options = {}  # "--flag" -> {"value": bool, "choices": set or None}
        for line in self.text.splitlines():
            m = re.match(r"^\s{1,8}(-\S.*?)(?:\s{2,}|$)", line)
            if not m:
                continue
            tokens = m.group(1).split()
            names = [n for n in tokens[0].split(",") if n.startswith("--")]
            typ = tokens[1] if len(tokens) > 1 and tokens[1] != "REQUIRED" else None
            choices = None
            if typ and ":{" in typ:
                choices = set(typ.split(":{", 1)[1].rstrip("}").split(","))
            for n in names:
                self.options[n] = {"value": typ is not None, "choices": choices}


def top_level_subcommands(binary):
    p = run([binary, "--help"])
    text = p.stdout + p.stderr
    section = text.split("Subcommands:", 1)[1] if "Subcommands:" in text else ""
    return {m.group(1) for m in re.finditer(r"^\s{1,8}([a-z][\w-]*)\s", section, re.M)}


# -------------------------------------------------------------- manifests


class Container:
    """An airlock container of a workload, with its parsed command line."""

    def __init__(self, workload, container, argv, sub, rest):
        self.workload = workload
        self.container = container
        self.argv = argv
        self.sub = sub
        self.rest = rest
        self.flags = {}  # "--flag" -> value (True for a flag without value)
        self.arg_problems = []

    @property
    def where(self):
        w = self.workload
        return f"{w['kind']}/{w['metadata']['name']} container {self.container['name']}"

    @property
    def pod(self):
        return self.workload["spec"]["template"]["spec"]

    @property
    def labels(self):
        return self.workload["spec"]["template"]["metadata"].get("labels") or {}

    def parse_args(self, help_):
        tokens = list(self.rest)
        i = 0
        while i < len(tokens):
            tok = str(tokens[i])
            i += 1
            if not tok.startswith("--"):
                self.arg_problems.append(f"unexpected positional argument {tok!r}")
                continue
            name, eq, value = tok.partition("=")
            known = help_.options.get(name) if help_ and help_.exists else None
            takes_value = known["value"] if known else (not eq and i < len(tokens) and not str(tokens[i]).startswith("-"))
            if eq:
                if known and not known["value"]:
                    self.arg_problems.append(f"{name} takes no value, got {value!r}")
                self.flags[name] = value
            elif takes_value:
                if i >= len(tokens):
                    self.arg_problems.append(f"{name} needs a value")
                    continue
                self.flags[name] = str(tokens[i])
                i += 1
            else:
                self.flags[name] = True
            if known and known["choices"] and self.flags[name] not in known["choices"]:
                self.arg_problems.append(f"{name} {self.flags[name]!r} is not one of {sorted(known['choices'])}")

    def address_ports(self):
        out = {}
        for f in ADDRESS_FLAGS:
            if isinstance(self.flags.get(f), str):
                out[f] = parse_address(self.flags[f])[1]
        return out

    def port_by_ref(self, ref):
        """A probe's or Service's port (name or number) -> containerPort, or None."""
        for p in self.container.get("ports") or []:
            if (isinstance(ref, str) and p.get("name") == ref) or ref == p.get("containerPort"):
                return p["containerPort"]
        return None

    def mount_for(self, path):
        """The volume and key a file path inside the container comes from: (volume, key or None)."""
        best = None
        for m in self.container.get("volumeMounts") or []:
            mp = m["mountPath"].rstrip("/")
            if path == mp or path.startswith(mp + "/"):
                if best is None or len(mp) > len(best["mountPath"].rstrip("/")):
                    best = m
        if best is None:
            return None, None
        vol = next((v for v in self.pod.get("volumes") or [] if v["name"] == best["name"]), None)
        mp = best["mountPath"].rstrip("/")
        rel = best.get("subPath") if path == mp and best.get("subPath") else path[len(mp) + 1:] if path != mp else None
        if vol is not None and rel is not None:
            src = vol.get("secret") or vol.get("configMap") or {}
            items = src.get("items")
            if items:
                hit = next((it for it in items if it["path"] == rel), None)
                rel = hit["key"] if hit else None
        return vol, rel


class Manifests:
    def __init__(self):
        self.docs = []  # (relative file, doc)
        self.files = sorted(p for p in KDIR.rglob("*") if p.suffix in (".yaml", ".yml"))
        for f in self.files:
            with open(f) as fh:
                for doc in yaml.safe_load_all(fh):
                    if doc is not None:
                        self.docs.append((str(f.relative_to(KDIR)), doc))

    def of_kind(self, *kinds):
        return [d for _, d in self.docs if isinstance(d, dict) and d.get("kind") in kinds]

    def get(self, kind, name):
        return next((d for d in self.of_kind(kind) if d["metadata"]["name"] == name), None)

    def workloads(self):
        return self.of_kind(*WORKLOAD_KINDS)


def find_containers(manifests):
    out = []
    for w in manifests.workloads():
        spec = w["spec"]["template"]["spec"]
        for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            argv = [str(x) for x in (c.get("command") or []) + (c.get("args") or [])]
            idx = next((i for i, a in enumerate(argv) if os.path.basename(a) == "airlock"), None)
            if idx is None or idx + 1 >= len(argv):
                continue
            out.append(Container(w, c, argv, argv[idx + 1], argv[idx + 2:]))
    return out


def config_of(c, manifests, check):
    """The airlock configuration JSON a container's --config names, parsed (or None)."""
    path = c.flags.get("--config")
    if not isinstance(path, str):
        return None
    vol, key = c.mount_for(path)
    if not vol or "configMap" not in vol or key is None:
        check.error(f"{c.where}: --config {path} is not a key of a mounted ConfigMap")
        return None
    cm = manifests.get("ConfigMap", vol["configMap"]["name"])
    if cm is None or key not in (cm.get("data") or {}):
        check.error(f"{c.where}: --config {path}: ConfigMap {vol['configMap']['name']} has no key {key!r}")
        return None
    try:
        return json.loads(cm["data"][key])
    except json.JSONDecodeError as e:
        check.error(f"{c.where}: ConfigMap {cm['metadata']['name']} key {key}: not JSON ({e})")
        return None


def dig(obj, *keys, default=None):
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return default
        obj = obj[k]
    return obj


# ----------------------------------------------------------------- checks


class Context:
    def __init__(self, binary):
        self.binary = binary
        self.m = None
        self.containers = []
        self.helps = {}
        self.gateways = []
        self.runners = []
        self.gw_config = None
        self.rh_config = None
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="airlock-manifests-"))
        self.procs = []

    def cleanup(self):
        for p in self.procs:
            stop_process(p)
        shutil.rmtree(self.tmp, ignore_errors=True)


def check_parse(ctx, ck):
    ck.expect(KDIR.is_dir(), f"{KDIR} does not exist")
    ctx.m = Manifests()
    ck.expect(ctx.m.files, f"no YAML file under {KDIR}")
    for f, d in ctx.m.docs:
        if not isinstance(d, dict):
            ck.error(f"{f}: a document is not a mapping")
            continue
        for field in ("apiVersion", "kind"):
            ck.expect(d.get(field), f"{f}: a document has no {field}")
        ck.expect(dig(d, "metadata", "name"), f"{f}: {d.get('kind')} has no metadata.name")
    kinds = {d.get("kind") for _, d in ctx.m.docs if isinstance(d, dict)}
    missing = EXPECTED_KINDS - kinds
    ck.expect(not missing, f"kinds missing from the manifests: {sorted(missing)}")
    ck.expect(kinds & {"StatefulSet", "DaemonSet"}, "no StatefulSet or DaemonSet for the runner hosts")
    ck.note(f"{len(ctx.m.docs)} documents in {len(ctx.m.files)} files; kinds {sorted(kinds)}")
    if ck.errors:
        raise CheckFailed("the manifests do not parse: nothing else can be checked")


def check_kustomization(ctx, ck):
    m = ctx.m
    ks = m.of_kind("Kustomization")
    if not ck.expect(len(ks) == 1, f"expected one Kustomization, found {len(ks)}"):
        return
    k = ks[0]
    listed = set(k.get("resources") or [])
    want = {f for f in (str(p.relative_to(KDIR)) for p in m.files)
            if os.path.basename(f) != "kustomization.yaml" and ".example." not in os.path.basename(f)}
    ck.expect(listed == want, f"kustomization.yaml resources {sorted(listed)} != the manifest files {sorted(want)}")
    examples = {f for f in (str(p.relative_to(KDIR)) for p in m.files) if ".example." in f}
    ck.expect(not (listed & examples), f"templates with placeholders must not be resources: {sorted(listed & examples)}")
    nss = m.of_kind("Namespace")
    if ck.expect(len(nss) == 1, f"expected one Namespace, found {len(nss)}"):
        ns = nss[0]["metadata"]["name"]
        ck.expect(k.get("namespace") == ns, f"kustomization namespace {k.get('namespace')!r} != Namespace {ns!r}")
        for f, d in m.docs:
            if d.get("kind") not in CLUSTER_SCOPED:
                got = dig(d, "metadata", "namespace")
                ck.expect(got == ns, f"{f}: {d['kind']}/{d['metadata']['name']} namespace {got!r}, expected {ns!r}")
    if shutil.which("kubectl"):
        p = run(["kubectl", "kustomize", str(KDIR)])
        ck.expect(p.returncode == 0, f"kubectl kustomize failed: {p.stderr.strip()[:500]}")
    else:
        ck.note("kubectl not installed: `kubectl kustomize` not run")


def check_flags(ctx, ck):
    subs = top_level_subcommands(ctx.binary)
    ctx.containers = find_containers(ctx.m)
    ck.expect(ctx.containers, "no container runs airlock")
    for c in ctx.containers:
        if c.sub not in ctx.helps:
            ctx.helps[c.sub] = Help(ctx.binary, c.sub)
        h = ctx.helps[c.sub]
        c.parse_args(h)
        if not h.exists:
            ck.error(f"{c.where}: `airlock {c.sub}` is not a subcommand of {ctx.binary} "
                     f"(its subcommands: {', '.join(sorted(subs))})")
        else:
            for f in c.flags:
                ck.expect(f in h.options, f"{c.where}: {f} is not in `airlock {c.sub} --help`")
        for p in c.arg_problems:
            ck.error(f"{c.where}: {p}")
    ctx.gateways = [c for c in ctx.containers if c.sub == GATEWAY_SUB]
    ctx.runners = [c for c in ctx.containers if c.sub == RUNNER_SUB]
    ck.expect(len(ctx.gateways) == 1, f"expected one `airlock {GATEWAY_SUB}` container, found {len(ctx.gateways)}")
    ck.expect(len(ctx.runners) == 1, f"expected one `airlock {RUNNER_SUB}` container, found {len(ctx.runners)}")
    for c in ctx.gateways:
        ck.expect(isinstance(c.flags.get("--http"), str), f"{c.where}: no --http HOST:PORT")
    for c in ctx.runners:
        for f in ("--listen", "--probe", "--tls-ca", "--tls-cert", "--tls-key"):
            ck.expect(isinstance(c.flags.get(f), str), f"{c.where}: no {f}")
    for c in ctx.containers:
        ck.note(f"{c.where}: airlock {c.sub} {' '.join(sorted(c.flags))}")
    # The configs the other checks need.
    if ctx.gateways:
        ctx.gw_config = config_of(ctx.gateways[0], ctx.m, ck)
    if ctx.runners:
        ctx.rh_config = config_of(ctx.runners[0], ctx.m, ck)


def check_ports(ctx, ck):
    for c in ctx.containers:
        try:
            ports = c.address_ports()
        except ValueError as e:
            ck.error(f"{c.where}: {e}")
            continue
        declared = [p["containerPort"] for p in c.container.get("ports") or []]
        ck.expect(sorted(declared) == sorted(set(ports.values())),
                  f"{c.where}: containerPorts {sorted(declared)} != the ports in its arguments {ports}")
        for p in c.container.get("ports") or []:
            ck.expect(p.get("name"), f"{c.where}: containerPort {p['containerPort']} has no name")
    for svc in ctx.m.of_kind("Service"):
        name = svc["metadata"]["name"]
        sel = svc["spec"].get("selector")
        picked = [c for c in ctx.containers if sel and all(c.labels.get(k) == v for k, v in sel.items())]
        if not ck.expect(picked, f"Service/{name}: its selector {sel} selects no airlock pod"):
            continue
        for sp in svc["spec"].get("ports") or []:
            target = sp.get("targetPort", sp["port"])
            ck.expect(isinstance(target, str),
                      f"Service/{name} port {sp['port']}: targetPort should name a container port, got {target!r}")
            for c in picked:
                ck.expect(c.port_by_ref(target) is not None,
                          f"Service/{name} port {sp['port']}: targetPort {target!r} is no port of {c.where}")


def check_gateway_services(ctx, ck):
    """Modern-era clients (stateless; code sessions and tasks in PostgreSQL)
    need no affinity, legacy-era ones (Mcp-Session-Id, the GET stream in one
    gateway's memory) do: one gateway Service of each kind, every one named
    in server.http.allowed_hosts."""
    svcs = [s for s in ctx.m.of_kind("Service")
            if s["spec"].get("selector") and s["spec"].get("clusterIP") != "None"
            and any(c.sub == GATEWAY_SUB and all(c.labels.get(k) == v for k, v in s["spec"]["selector"].items())
                    for c in ctx.containers)]
    if not ck.expect(svcs, "no Service selects the gateways"):
        return
    affinity = {s["metadata"]["name"]: s["spec"].get("sessionAffinity", "None") for s in svcs}
    ck.note(f"gateway Services: {affinity}")
    ck.expect("None" in affinity.values(),
              f"no gateway Service without session affinity for modern-era clients: {affinity}")
    sticky = [s for s in svcs if s["spec"].get("sessionAffinity") == "ClientIP"]
    ck.expect(sticky, "no gateway Service with sessionAffinity: ClientIP for legacy-era clients, whose MCP "
                      f"sessions live in one gateway's memory: {affinity}")
    idle = dig(ctx.gw_config or {}, "server", "http", "session_idle_timeout_s", default=3600)
    for s in sticky:
        t = dig(s["spec"], "sessionAffinityConfig", "clientIP", "timeoutSeconds", default=10800)
        ck.expect(t >= idle, f"Service/{s['metadata']['name']}: affinity timeoutSeconds {t} < "
                             f"server.http.session_idle_timeout_s {idle}: a legacy session would move gateways")
    hosts = [h.lower() for h in dig(ctx.gw_config or {}, "server", "http", "allowed_hosts", default=[])]
    if hosts:
        for s in svcs:
            name, ns = s["metadata"]["name"], s["metadata"].get("namespace", "default")
            for h in (name, f"{name}.{ns}.svc", f"{name}.{ns}.svc.cluster.local"):
                ck.expect(h in hosts, f"Service/{name}: {h} is not in server.http.allowed_hosts: "
                                      "requests through it would get 403")


def check_runner_dns(ctx, ck):
    if not (ctx.gateways and ctx.runners and ctx.gw_config is not None):
        ck.error("needs one gateway, one runner host and the gateway's config")
        return
    rh = ctx.runners[0]
    dns = dig(ctx.gw_config, "runner", "dns")
    if not ck.expect(isinstance(dns, str) and dns, "the gateway's config has no runner.dns"):
        return
    host, port = parse_address(dns)
    listen = parse_address(rh.flags["--listen"])[1]
    ck.expect(port == listen, f"runner.dns port {port} != runner-host --listen port {listen}")
    ns = rh.workload["metadata"].get("namespace")
    headless = [s for s in ctx.m.of_kind("Service")
                if s["spec"].get("clusterIP") == "None"
                and selector_matches({"matchLabels": s["spec"].get("selector")}, rh.labels)]
    if not ck.expect(headless, "no headless Service (clusterIP: None) selects the runner hosts"):
        return
    names = set()
    for s in headless:
        n = s["metadata"]["name"]
        names |= {n, f"{n}.{ns}", f"{n}.{ns}.svc", f"{n}.{ns}.svc.cluster.local"}
        ck.expect(any(rh.port_by_ref(p.get("targetPort", p["port"])) == listen for p in s["spec"].get("ports") or []),
                  f"Service/{n} has no port targeting the runner host's --listen port {listen}")
    ck.expect(host in names, f"runner.dns host {host!r} is not the headless Service's name (one of {sorted(names)})")
    kind = rh.workload["kind"]
    if kind == "StatefulSet":
        ck.expect(rh.workload["spec"].get("serviceName") in {s["metadata"]["name"] for s in headless},
                  "the runner hosts' StatefulSet serviceName is not their headless Service")
    server_name = dig(ctx.gw_config, "runner", "tls", "server_name")
    ck.expect(server_name, "runner.tls.server_name is empty: gateways would check pod IPs against the certificate")


def check_files(ctx, ck):
    """Every file airlock is told to read is a key of a mounted Secret or ConfigMap in the manifests."""

    def expect_file(c, path, what):
        vol, key = c.mount_for(path)
        if not ck.expect(vol is not None and key is not None, f"{c.where}: {what} {path} is on no mounted volume"):
            return None
        if "secret" in vol:
            src, kind = vol["secret"]["secretName"], "Secret"
        elif "configMap" in vol:
            src, kind = vol["configMap"]["name"], "ConfigMap"
        else:
            ck.error(f"{c.where}: {what} {path} is on volume {vol['name']}, neither a Secret nor a ConfigMap")
            return None
        doc = ctx.m.get(kind, src)
        if not ck.expect(doc is not None, f"{c.where}: {what} {path}: {kind} {src} is not in the manifests"):
            return None
        keys = set((doc.get("data") or {}).keys()) | set((doc.get("stringData") or {}).keys())
        ck.expect(key in keys, f"{c.where}: {what} {path}: {kind} {src} has no key {key!r} (it has {sorted(keys)})")
        return src

    for c in ctx.runners:
        for f in ("--tls-ca", "--tls-cert", "--tls-key"):
            if isinstance(c.flags.get(f), str):
                expect_file(c, c.flags[f], f)
    for c in ctx.gateways:
        cfg = ctx.gw_config or {}
        for keys in (("runner", "tls", "ca_file"), ("runner", "tls", "cert_file"), ("runner", "tls", "key_file"),
                     ("state", "postgres_dsn_file"), ("server", "http", "metrics_token_file"),
                     ("server", "http", "token_file")):
            path = dig(cfg, *keys)
            if path:
                expect_file(c, path, ".".join(keys))
        for f in ("--token-file",):
            if isinstance(c.flags.get(f), str):
                expect_file(c, c.flags[f], f)
    for c in ctx.containers:
        sd = c.flags.get("--state-dir")
        if isinstance(sd, str):
            vol, _ = c.mount_for(sd)
            ck.expect(vol is not None and "emptyDir" in vol, f"{c.where}: --state-dir {sd} is not on an emptyDir")
    # Every volume's Secret and ConfigMap, and every ServiceAccount, exists.
    for w in ctx.m.workloads():
        wn = f"{w['kind']}/{w['metadata']['name']}"
        pod = w["spec"]["template"]["spec"]
        for v in pod.get("volumes") or []:
            if "secret" in v:
                ck.expect(ctx.m.get("Secret", v["secret"]["secretName"]) is not None,
                          f"{wn}: volume {v['name']}: Secret {v['secret']['secretName']} is not in the manifests")
            if "configMap" in v:
                ck.expect(ctx.m.get("ConfigMap", v["configMap"]["name"]) is not None,
                          f"{wn}: volume {v['name']}: ConfigMap {v['configMap']['name']} is not in the manifests")
        for c in pod.get("containers") or []:
            for e in c.get("env") or []:
                ref = dig(e, "valueFrom", "secretKeyRef")
                if ref:
                    s = ctx.m.get("Secret", ref["name"])
                    ck.expect(s is not None and ref["key"] in {**(s.get("data") or {}), **(s.get("stringData") or {})},
                              f"{wn}: env {e['name']}: Secret {ref['name']} key {ref['key']} is not in the manifests")
        sa = ctx.m.get("ServiceAccount", pod.get("serviceAccountName", "default"))
        ck.expect(sa is not None, f"{wn}: ServiceAccount {pod.get('serviceAccountName')} is not in the manifests")
    # The runner hosts hold no Secret of the gateways (the client key, the database).
    def secrets_of(cs):
        return {v["secret"]["secretName"] for c in cs for v in c.pod.get("volumes") or [] if "secret" in v}
    shared = secrets_of(ctx.gateways) & secrets_of(ctx.runners)
    ck.expect(not shared, f"Secrets mounted by both gateways and runner hosts: {sorted(shared)}")
    for c in ctx.runners:
        read = {c.mount_for(c.flags[f])[0]["secret"]["secretName"] for f in ("--tls-ca", "--tls-cert", "--tls-key")
                if isinstance(c.flags.get(f), str) and c.mount_for(c.flags[f])[0] and "secret" in c.mount_for(c.flags[f])[0]}
        extra = secrets_of([c]) - read
        ck.expect(not extra, f"{c.where}: mounts Secrets it has no flag for: {sorted(extra)}")


def find_config_validator(binary):
    """The binary's own configuration check, as argv taking the file last; None when it has none."""
    subs = top_level_subcommands(binary)
    if "config" in subs:
        text = Help(binary, "config").text
        for word in ("check", "validate", "lint"):
            if re.search(rf"^\s+{word}\s", text, re.M):
                sub_help = run([binary, "config", word, "--help"]).stdout
                return [binary, "config", word] + (["--config"] if "--config" in sub_help else [])
    serve = Help(binary, "serve")
    for flag in ("--check", "--check-config", "--validate", "--validate-config", "--dry-run"):
        if flag in serve.options:
            return [binary, "serve", flag, "--config"]
    return None


def check_config_valid(ctx, ck):
    configs = [(c, cfg) for c, cfg in ((ctx.gateways[0] if ctx.gateways else None, ctx.gw_config),
                                       (ctx.runners[0] if ctx.runners else None, ctx.rh_config)) if c and cfg is not None]
    ck.expect(len(configs) == 2, "expected a config JSON for both the gateway and the runner host")
    validator = find_config_validator(ctx.binary)
    if validator is None:
        ck.error("the binary has no configuration check (looked for `airlock config check|validate` and "
                 "`airlock serve --check`): the ConfigMaps' JSON cannot be checked by airlock itself")
        return
    for c, cfg in configs:
        f = ctx.tmp / f"config-{c.sub}.json"
        f.write_text(json.dumps(cfg, indent=2))
        p = run(validator + [str(f)])
        ck.expect(p.returncode == 0, f"{c.where}: `{' '.join(validator[1:])} FILE` rejects the ConfigMap's config "
                                     f"(exit {p.returncode}): {(p.stdout + p.stderr).strip()[:800]}")


def check_consistency(ctx, ck):
    gw, rh = ctx.gw_config or {}, ctx.rh_config or {}
    ck.expect(gw.get("limits") == rh.get("limits"),
              f"limits differ: gateway {gw.get('limits')} vs runner host {rh.get('limits')}")
    for c in ctx.runners:
        lim = c.container.get("resources", {}).get("limits", {})
        mc = c.flags.get("--max-concurrent")
        if not ck.expect(isinstance(mc, str) and mc.isdigit(),
                         f"{c.where}: set --max-concurrent: without it the runner host counts the node's cores"):
            continue
        mc = int(mc)
        if "cpu" in lim:
            ck.expect(mc <= quantity(lim["cpu"], cpu=True),
                      f"{c.where}: --max-concurrent {mc} exceeds the CPU limit {lim['cpu']} (a run may use a core)")
        max_mb = dig(rh, "limits", "max_memory_mb", default=2048)
        sessions = dig(rh, "sessions", "max_total", default=0)
        if dig(rh, "sessions", "enabled", default=True):
            ck.expect(sessions > 0, f"{c.where}: set sessions.max_total in its config: the default "
                                    "derives from the node's memory, not the pod's")
        need = (mc + sessions) * max_mb * 2**20
        if ck.expect("memory" in lim, f"{c.where}: no memory limit"):
            ck.expect(quantity(lim["memory"]) >= need,
                      f"{c.where}: memory limit {lim['memory']} < (--max-concurrent {mc} + sessions.max_total "
                      f"{sessions}) x max_memory_mb {max_mb} MiB = {need / 2**30:.1f} GiB (docs/deploy.md#sizing)")
        grace = c.pod.get("terminationGracePeriodSeconds", 30)
        max_s = dig(rh, "limits", "max_timeout_ms", default=60000) / 1000
        ck.expect(grace >= max_s, f"{c.where}: terminationGracePeriodSeconds {grace} < limits.max_timeout_ms {max_s} s")
        pre = dig(c.container, "lifecycle", "preStop", "sleep", "seconds", default=0)
        refresh = dig(gw, "runner", "dns_refresh_s", default=10)
        ck.expect(pre >= refresh, f"{c.where}: preStop sleep {pre} s < runner.dns_refresh_s {refresh} s: gateways "
                                  "would still send new runs to a runner host that is stopping")
        mrs = c.workload["spec"].get("minReadySeconds", 0)
        refresh = dig(gw, "runner", "dns_refresh_s", default=10)
        ck.expect(mrs >= refresh, f"{c.where}: minReadySeconds {mrs} < runner.dns_refresh_s {refresh}: a rollout "
                                  "could stop the next runner host before the gateways found the new one")
    for c in ctx.gateways:
        grace = c.pod.get("terminationGracePeriodSeconds", 30)
        pre = dig(c.container, "lifecycle", "preStop", "sleep", "seconds", default=0)
        sg = dig(gw, "server", "shutdown_grace_s", default=30)
        ck.expect(grace > pre + sg, f"{c.where}: terminationGracePeriodSeconds {grace} <= preStop {pre} s + "
                                    f"server.shutdown_grace_s {sg} s: calls in flight would be killed")


def check_probes(ctx, ck):
    allowed_hosts = [h.lower() for h in dig(ctx.gw_config or {}, "server", "http", "allowed_hosts", default=[])]
    for c in ctx.containers:
        flag = PROBE_PORT_FLAG.get(c.sub)
        want_port = parse_address(c.flags[flag])[1] if isinstance(c.flags.get(flag), str) else None
        for kind, want_path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz"), ("startupProbe", None)):
            probe = c.container.get(kind)
            if probe is None:
                ck.expect(kind == "startupProbe", f"{c.where}: no {kind}")
                continue
            hg = probe.get("httpGet")
            if not ck.expect(hg, f"{c.where}: {kind} is not httpGet"):
                continue
            ck.expect(hg.get("path") in PROBE_PATHS, f"{c.where}: {kind} path {hg.get('path')!r} not in {sorted(PROBE_PATHS)}")
            if want_path:
                ck.expect(hg.get("path") == want_path, f"{c.where}: {kind} should probe {want_path}, not {hg.get('path')}")
            ck.expect(hg.get("scheme", "HTTP") == "HTTP", f"{c.where}: {kind} scheme {hg.get('scheme')} (the probe port is plain HTTP)")
            got = c.port_by_ref(hg.get("port"))
            ck.expect(got is not None and got == want_port,
                      f"{c.where}: {kind} port {hg.get('port')!r} is {got}, expected the {flag} port {want_port}")
            host = next((h["value"] for h in hg.get("httpHeaders") or [] if h["name"].lower() == "host"), None)
            if c.sub == GATEWAY_SUB and allowed_hosts:
                ok = host is not None and (host.split(":")[0].lower() in allowed_hosts or
                                           host.split(":")[0].lower() == "localhost" or host.startswith("127."))
                ck.expect(ok, f"{c.where}: {kind} sends Host {host or '<pod IP>'!r}, which server.http.allowed_hosts "
                              "refuses (403): set a Host header of localhost")


def stop_process(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=40)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def start(ctx, argv, log_name):
    log = open(ctx.tmp / log_name, "w")
    p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    ctx.procs.append(p)
    return p


def log_tail(ctx, log_name, n=30):
    try:
        return "\n      ".join((ctx.tmp / log_name).read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def local_argv(ctx, c, extra_paths):
    """The manifest's command line for this machine: addresses on loopback, paths in a temp dir."""
    ports = {}
    argv = [ctx.binary, c.sub]
    for f, v in c.flags.items():
        if f == "--config":
            continue  # the cluster's config (remote runners, PostgreSQL); the defaults serve the probes
        if f in ADDRESS_FLAGS:
            ports[f] = free_port()
            v = f"127.0.0.1:{ports[f]}"
        elif f in extra_paths:
            v = extra_paths[f]
        argv += [f] if v is True else [f, v]
    return argv, ports


def wait_probes(ctx, ck, c, proc, port, log_name):
    """GET every probe path of the container, with its headers, until 200."""
    probes = [c.container[k]["httpGet"] for k in ("readinessProbe", "livenessProbe", "startupProbe")
              if dig(c.container, k, "httpGet")]
    deadline = time.time() + STARTUP_TIMEOUT_S
    for hg in probes:
        headers = {h["name"]: h["value"] for h in hg.get("httpHeaders") or []}
        status, body = None, ""
        while time.time() < deadline and proc.poll() is None:
            status, body = http_get(port, hg["path"], headers)
            if status == 200:
                break
            time.sleep(0.5)
        ck.expect(status == 200, f"{c.where}: GET {hg['path']} (headers {headers}) on `airlock {c.sub}` answered "
                                 f"{status} {body.strip()[:200]!r}" + (f"; exited {proc.returncode}" if proc.poll() is not None else "")
                                 + f"\n      log:\n      {log_tail(ctx, log_name)}")
        if status == 200:
            ck.note(f"GET {hg['path']} -> 200")


def check_live_gateway(ctx, ck):
    if not ctx.gateways:
        ck.error("no gateway container")
        return
    c = ctx.gateways[0]
    state = ctx.tmp / "gateway-state"
    state.mkdir()
    argv, ports = local_argv(ctx, c, {"--state-dir": str(state)})
    ck.note(" ".join(argv[1:]))
    p = start(ctx, argv, "gateway.log")
    wait_probes(ctx, ck, c, p, ports["--http"], "gateway.log")
    if "--metrics" in ports and p.poll() is None:
        status, body = http_get(ports["--metrics"], "/metrics", {})
        ck.expect(status == 200 and "airlock_" in body, f"{c.where}: GET /metrics on the --metrics port answered {status}")
    stop_process(p)


def h2_connect(port, ca, server_name, cert=None, key=None):
    """TLS (ALPN h2) to a runner host and the HTTP/2 preface: (accepted, detail)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["h2"])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname=server_name) as s:
                s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
                head = b""
                while len(head) < 9:
                    chunk = s.recv(9 - len(head))
                    if not chunk:
                        return False, "connection closed by the runner host"
                    head += chunk
                return head[3] == 4, f"first frame type {head[3]} (4 is SETTINGS), ALPN {s.selected_alpn_protocol()}"
    except ssl.SSLCertVerificationError as e:
        return None, f"the runner host's certificate did not verify: {e}"
    except (ssl.SSLError, OSError) as e:
        return False, f"{type(e).__name__}: {e}"


def check_live_runner_host(ctx, ck):
    if not ctx.runners:
        ck.error("no runner-host container")
        return
    c = ctx.runners[0]
    if not ctx.helps[c.sub].exists:
        ck.error(f"`airlock {c.sub}` is not in this binary: not started, its probes and mutual TLS unchecked")
        return
    server_name = dig(ctx.gw_config or {}, "runner", "tls", "server_name") or "airlock-runner-host"
    certs = ctx.tmp / "certs"
    p = run(["sh", str(MAKE_CERTS), str(certs), server_name])
    if not ck.expect(p.returncode == 0, f"make-certs.sh failed: {p.stderr.strip()[:500]}"):
        return
    state = ctx.tmp / "runner-state"
    state.mkdir()
    argv, ports = local_argv(ctx, c, {"--state-dir": str(state), "--tls-ca": str(certs / "ca.crt"),
                                      "--tls-cert": str(certs / "runner-host.crt"),
                                      "--tls-key": str(certs / "runner-host.key")})
    ck.note(" ".join(argv[1:]))
    proc = start(ctx, argv, "runner-host.log")
    wait_probes(ctx, ck, c, proc, ports["--probe"], "runner-host.log")
    ctx.runner_live = (proc, ports, certs, server_name)


def check_runner_mtls(ctx, ck):
    live = getattr(ctx, "runner_live", None)
    if live is None:
        ck.error("the runner host did not start (see above): mutual TLS unchecked")
        return
    proc, ports, certs, server_name = live
    port = ports["--listen"]
    ca = str(certs / "ca.crt")
    ok, detail = None, ""
    deadline = time.time() + 30
    while time.time() < deadline and proc.poll() is None:
        ok, detail = h2_connect(port, ca, server_name, str(certs / "gateway.crt"), str(certs / "gateway.key"))
        if ok:
            break
        time.sleep(0.5)
    if not ck.expect(ok, f"a gateway's client certificate (make-certs.sh) was not accepted on --listen: {detail}"
                         f"\n      log:\n      {log_tail(ctx, 'runner-host.log')}"):
        stop_process(proc)
        return
    ck.note(f"gateway certificate, server name {server_name}: accepted ({detail})")
    for label, cert, key in (("no client certificate", None, None),
                             ("the runner host's own server certificate (serverAuth only) as a client certificate",
                              str(certs / "runner-host.crt"), str(certs / "runner-host.key"))):
        ok, detail = h2_connect(port, ca, server_name, cert, key)
        ck.expect(ok is False, f"{label}: {'accepted' if ok else 'inconclusive'} ({detail}); must be refused")
        if ok is False:
            ck.note(f"{label}: refused ({detail})")
    stop_process(proc)


def check_selectors(ctx, ck):
    m = ctx.m
    workloads = m.workloads()
    for w in workloads:
        wn = f"{w['kind']}/{w['metadata']['name']}"
        ck.expect(selector_matches(w["spec"].get("selector"), w["spec"]["template"]["metadata"].get("labels")),
                  f"{wn}: spec.selector does not match its pod template's labels")
        others = [o for o in workloads if o is not w and selector_matches(w["spec"].get("selector"),
                                                                          o["spec"]["template"]["metadata"].get("labels"))]
        ck.expect(not others, f"{wn}: its selector also matches {[o['metadata']['name'] for o in others]}")
    for pdb in m.of_kind("PodDisruptionBudget"):
        n = pdb["metadata"]["name"]
        hits = [w for w in workloads if selector_matches(pdb["spec"].get("selector"), w["spec"]["template"]["metadata"].get("labels"))]
        if not ck.expect(len(hits) == 1, f"PodDisruptionBudget/{n} selects {len(hits)} workloads, expected 1"):
            continue
        spec = pdb["spec"]
        ck.expect(("maxUnavailable" in spec) != ("minAvailable" in spec), f"PodDisruptionBudget/{n}: set one of maxUnavailable, minAvailable")
        replicas = hits[0]["spec"].get("replicas", 1)
        if isinstance(spec.get("minAvailable"), int):
            ck.expect(spec["minAvailable"] < replicas, f"PodDisruptionBudget/{n}: minAvailable {spec['minAvailable']} "
                                                       f">= replicas {replicas}: no drain could ever evict")
    for c in ctx.containers:
        ck.expect(any(selector_matches(p["spec"].get("selector"), c.labels) for p in m.of_kind("PodDisruptionBudget")),
                  f"{c.where}: no PodDisruptionBudget selects it")


def ports_allow(rule_ports, port, c):
    if not rule_ports:
        return True
    for p in rule_ports:
        ref = p.get("port")
        if ref is None or ref == port or (isinstance(ref, str) and c.port_by_ref(ref) == port):
            return True
        if isinstance(ref, int) and p.get("endPort") and ref <= port <= p["endPort"]:
            return True
    return False


def check_networkpolicy(ctx, ck):
    m = ctx.m
    pols = m.of_kind("NetworkPolicy")
    if not (ctx.gateways and ctx.runners):
        ck.error("needs the gateway and runner-host containers")
        return
    gw, rh = ctx.gateways[0], ctx.runners[0]
    for pol in pols:
        sel = pol["spec"].get("podSelector")
        if sel:
            ck.expect(any(selector_matches(sel, c.labels) for c in ctx.containers),
                      f"NetworkPolicy/{pol['metadata']['name']}: podSelector {sel} selects no airlock pod")

    def applying(c, direction):
        return [p for p in pols if selector_matches(p["spec"].get("podSelector") or {}, c.labels)
                and direction in (p["spec"].get("policyTypes") or ["Ingress"])]

    listen = parse_address(rh.flags["--listen"])[1]
    # Runner hosts: ingress from gateways on --listen only, no egress at all.
    ing = applying(rh, "Ingress")
    if ck.expect(ing, "no NetworkPolicy restricts the runner hosts' ingress"):
        rules = [r for p in ing for r in p["spec"].get("ingress") or []]
        allows_gw = False
        for r in rules:
            peers = r.get("from") or []
            ck.expect(peers, "a runner-host ingress rule has no `from`: it admits every source")
            for peer in peers:
                ck.expect(set(peer) == {"podSelector"},
                          f"a runner-host ingress peer {peer} is not a podSelector of this namespace's pods")
                ps = peer.get("podSelector")
                ck.expect(ps is not None and selector_matches(ps, gw.labels) and not selector_matches(ps, rh.labels),
                          f"a runner-host ingress peer {ps} does not select exactly the gateways")
            rp = r.get("ports") or []
            ck.expect(rp and all(ports_allow([p], listen, rh) for p in rp),
                      f"a runner-host ingress rule admits ports {rp or 'all'}, not only --listen {listen}")
            allows_gw |= bool(peers) and ports_allow(rp, listen, rh)
        ck.expect(allows_gw, f"no rule lets the gateways reach the runner hosts on {listen}")
    eg = applying(rh, "Egress")
    if ck.expect(eg, "no NetworkPolicy restricts the runner hosts' egress"):
        rules = [r for p in eg for r in p["spec"].get("egress") or []]
        ck.expect(not rules, f"runner hosts must have no egress; rules found: {rules}")
    # Gateways: out to runner hosts, DNS and PostgreSQL; in on --http.
    eg = applying(gw, "Egress")
    if eg:
        rules = [r for p in eg for r in p["spec"].get("egress") or []]
        ck.expect(any(any(selector_matches(t.get("podSelector"), rh.labels) for t in r.get("to") or [])
                      and ports_allow(r.get("ports"), listen, rh) for r in rules),
                  f"gateways' egress does not allow the runner hosts on {listen}")
        ck.expect(any(any(p.get("port") == 53 and p.get("protocol", "TCP") == "UDP" for p in r.get("ports") or [])
                      for r in rules), "gateways' egress does not allow DNS (UDP 53): runner.dns cannot resolve")
        dsn = dig(ctx.m.get("Secret", "airlock-db") or {}, "stringData", "dsn") or ""
        pg = int(re.search(r"\bport=(\d+)", dsn).group(1)) if re.search(r"\bport=(\d+)", dsn) else 5432
        ck.expect(any(ports_allow(r.get("ports"), pg, gw) and r.get("ports") for r in rules),
                  f"gateways' egress does not allow PostgreSQL's port {pg}")
    ing = applying(gw, "Ingress")
    http = parse_address(gw.flags["--http"])[1]
    if ing:
        ck.expect(any(ports_allow(r.get("ports"), http, gw) for p in ing for r in p["spec"].get("ingress") or []),
                  f"gateways' ingress does not allow --http {http}")


def check_security(ctx, ck):
    for w in ctx.m.workloads():
        wn = f"{w['kind']}/{w['metadata']['name']}"
        pod = w["spec"]["template"]["spec"]
        for f in ("hostNetwork", "hostPID", "hostIPC"):
            ck.expect(not pod.get(f), f"{wn}: {f} is set")
        ck.expect(pod.get("automountServiceAccountToken") is False, f"{wn}: automountServiceAccountToken is not false")
        sa = ctx.m.get("ServiceAccount", pod.get("serviceAccountName", "default"))
        ck.expect(sa is not None and sa.get("automountServiceAccountToken") is False,
                  f"{wn}: its ServiceAccount does not set automountServiceAccountToken: false")
        for c in pod.get("containers") or []:
            res = c.get("resources") or {}
            for kind in ("requests", "limits"):
                for r in ("cpu", "memory"):
                    ck.expect(r in (res.get(kind) or {}), f"{wn} container {c['name']}: no {kind}.{r}")
    for c in ctx.gateways:
        pod_sc, sc = c.pod.get("securityContext") or {}, c.container.get("securityContext") or {}
        eff = {**pod_sc, **sc}
        ck.expect(eff.get("runAsNonRoot") is True and eff.get("runAsUser", 1) != 0, f"{c.where}: not runAsNonRoot")
        ck.expect(sc.get("allowPrivilegeEscalation") is False, f"{c.where}: allowPrivilegeEscalation is not false")
        ck.expect(sc.get("readOnlyRootFilesystem") is True, f"{c.where}: readOnlyRootFilesystem is not true")
        ck.expect("ALL" in (dig(sc, "capabilities", "drop") or []), f"{c.where}: capabilities are not all dropped")
        ck.expect(not sc.get("privileged") and not dig(sc, "capabilities", "add"), f"{c.where}: has privileges")
        ck.expect(dig(eff, "seccompProfile", "type") in ("RuntimeDefault", "Localhost"),
                  f"{c.where}: no RuntimeDefault seccomp profile")
    # Every line of the runner hosts' securityContext says why (the issue asks for
    # a comment for each privilege).
    for c in ctx.runners:
        sc = c.container.get("securityContext") or {}
        ck.expect(sc.get("readOnlyRootFilesystem") is True, f"{c.where}: readOnlyRootFilesystem is not true")
        files = [f for f, d in ctx.m.docs if d is c.workload]
        text = (KDIR / files[0]).read_text().splitlines()
        start = next((i for i, l in enumerate(text) if re.match(r"^\s+securityContext:\s*(#.*)?$", l)
                      and len(l) - len(l.lstrip()) >= 10), None)
        if not ck.expect(start is not None, f"{c.where}: container securityContext not found in {files[0]}"):
            continue
        indent = len(text[start]) - len(text[start].lstrip())
        prev_comment = False
        for line in text[start + 1:]:
            if not line.strip():
                continue
            if len(line) - len(line.lstrip()) <= indent:
                break
            if line.strip().startswith("#"):
                prev_comment = True
                continue
            key = line.strip().split(":")[0]
            ck.expect(prev_comment or "#" in line or key == "type",
                      f"{files[0]}: runner-host securityContext line {line.strip()!r} has no comment")
            prev_comment = False


# ------------------------------------------------------ server.json (OCI)

SERVER_JSON = ROOT / "server.json"
BUILD_SH = ROOT / "packaging" / "oci" / "build.sh"
MCP_NAME_LABEL = "io.modelcontextprotocol.server.name"
# registry/namespace/name:tag, the registry a host name (with a dot or a port).
OCI_REFERENCE = re.compile(r"(?P<repo>[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d+)?(?:/[a-z0-9._-]+)+):(?P<tag>[\w][\w.-]{0,127})")


def build_sh_dry_run(ctx, version, ck):
    """What packaging/oci/build.sh --dry-run says for a .deb of `version`: (tag, {label: value})."""
    pkg = ctx.tmp / "fake-deb"
    (pkg / "DEBIAN").mkdir(parents=True, exist_ok=True)
    (pkg / "DEBIAN" / "control").write_text(
        f"Package: airlock\nVersion: {version}\nArchitecture: amd64\nMaintainer: test <t@localhost>\n"
        "Description: stand-in for the real package (only its version is read)\n")
    deb = ctx.tmp / f"airlock_{version}_amd64.deb"
    p = run(["dpkg-deb", "--build", "--root-owner-group", str(pkg), str(deb)])
    if not ck.expect(p.returncode == 0, f"dpkg-deb --build failed: {p.stderr.strip()[:300]}"):
        return None, {}
    p = run(["bash", str(BUILD_SH), "--dry-run", "--deb", str(deb)])
    if not ck.expect(p.returncode == 0, f"build.sh --dry-run failed: {p.stderr.strip()[:300]}"):
        return None, {}
    tag, labels = None, {}
    for line in p.stdout.splitlines():
        if line.startswith("tag="):
            tag = line[4:]
        elif line.startswith("label."):
            k, _, v = line[6:].partition("=")
            labels[k] = v
    return tag, labels


def check_arguments(ck, where, args, help_, runtime_help):
    """Named --flags of packageArguments must be airlock's, runtimeArguments the container runtime's."""
    for kind, text in (("packageArguments", None), ("runtimeArguments", runtime_help)):
        for a in args.get(kind) or []:
            if a.get("type") != "named":
                continue
            name = a.get("name", "")
            if kind == "packageArguments":
                known = help_.options.get(name)
                if not ck.expect(known is not None, f"{where}: packageArguments pass {name}, not in `airlock serve --help`"):
                    continue
                ck.expect(known["value"] == ("value" in a), f"{where}: {name} {'takes' if known['value'] else 'takes no'} value")
                if known["choices"] and "value" in a:
                    ck.expect(a["value"] in known["choices"], f"{where}: {name} {a['value']!r} not in {sorted(known['choices'])}")
            elif text is not None:
                ck.expect(re.search(r"(^|[\s,])" + re.escape(name) + r"[\s,=]", text, re.M),
                          f"{where}: runtimeArguments pass {name}, not in `podman run --help`")


def check_server_json(ctx, ck):
    s = json.loads(SERVER_JSON.read_text())
    version = run([ctx.binary, "--version"]).stdout.strip()
    ck.expect(s.get("version") == version, f"server.json version {s.get('version')!r} != airlock --version {version!r}")
    help_ = ctx.helps.get(GATEWAY_SUB) or Help(ctx.binary, GATEWAY_SUB)
    runtime_help = run(["podman", "run", "--help"]).stdout if shutil.which("podman") else None
    if runtime_help is None:
        ck.note("podman not installed: runtimeArguments' flags unchecked")
    oci = [p for p in s.get("packages") or [] if p.get("registryType") == "oci"]
    if not ck.expect(oci, "server.json has no OCI package (registryType \"oci\")"):
        return
    for i, p in enumerate(s["packages"]):
        where = f"server.json packages[{i}] ({p.get('registryType')}, {dig(p, 'transport', 'type')})"
        pos = [a for a in p.get("packageArguments") or [] if a.get("type") == "positional"]
        ck.expect(pos and pos[0].get("value") == GATEWAY_SUB and help_.exists,
                  f"{where}: the first positional argument must be `{GATEWAY_SUB}`")
        check_arguments(ck, where, p, help_, runtime_help if p.get("registryType") == "oci" else None)
        t = p.get("transport") or {}
        if t.get("type") == "streamable-http":
            url = t.get("url", "")
            ck.expect(re.fullmatch(r"http://127\.0\.0\.1:\{port\}/mcp", url), f"{where}: url {url!r} is not http://127.0.0.1:{{port}}/mcp")
            args = (p.get("runtimeArguments") or []) + (p.get("packageArguments") or [])
            ck.expect(any("port" in (a.get("variables") or {}) for a in args), f"{where}: no argument defines the variable {{port}}")
            http = next((a.get("value") for a in p.get("packageArguments") or [] if a.get("name") == "--http"), None)
            if ck.expect(http, f"{where}: no --http in packageArguments") and p.get("registryType") == "oci":
                published = next((a.get("value") for a in p.get("runtimeArguments") or [] if a.get("name") in ("-p", "--publish")), "")
                ck.expect(published == f"127.0.0.1:{{port}}:{parse_address(http)[1]}",
                          f"{where}: -p {published!r} does not publish --http {http} on 127.0.0.1:{{port}}")
        else:
            ck.expect(t.get("type") == "stdio", f"{where}: transport {t.get('type')!r}")
    ck.expect({dig(p, "transport", "type") for p in oci} == {"stdio", "streamable-http"},
              "server.json's OCI packages must offer stdio and streamable-http")
    identifiers = {p.get("identifier") for p in oci}
    if not ck.expect(len(identifiers) == 1, f"server.json's OCI packages name different images: {sorted(map(str, identifiers))}"):
        return
    identifier = identifiers.pop()
    m = OCI_REFERENCE.fullmatch(identifier or "")
    if not ck.expect(m, f"OCI identifier {identifier!r} is not REGISTRY/NAME:TAG"):
        return
    ck.expect(m.group("tag") == version, f"OCI identifier {identifier}: tag is not the version {version}")
    for p in oci:
        ck.expect("version" not in p and "registryBaseUrl" not in p,
                  f"OCI package {identifier}: the registry refuses version/registryBaseUrl (the tag is in the identifier)")
    ck.note(f"OCI identifier {identifier}")

    # packaging/oci/build.sh tags that image and labels it with server.json's name.
    tag, labels = build_sh_dry_run(ctx, version, ck)
    if tag is not None:
        ck.expect(tag == identifier, f"build.sh tags {tag!r}, server.json names {identifier!r}")
        ck.expect(labels.get(MCP_NAME_LABEL) == s.get("name"),
                  f"build.sh's label {MCP_NAME_LABEL}={labels.get(MCP_NAME_LABEL)!r}, server.json name {s.get('name')!r}")
        ck.expect(labels.get("org.opencontainers.image.version") == version, "build.sh's version label is not the .deb's")
        ck.note(f"build.sh: {tag}, {MCP_NAME_LABEL}={labels.get(MCP_NAME_LABEL)}")

    # The Kubernetes manifests run that image.
    kust = ctx.m.of_kind("Kustomization")
    images = {i["name"]: i for k in kust for i in k.get("images") or []}
    for c in ctx.containers:
        image = c.container.get("image", "")
        if image in images:
            i = images[image]
            image = f"{i.get('newName', image)}:{i.get('newTag', 'latest')}"
        ck.expect(image == identifier, f"{c.where}: runs image {image!r}, server.json names {identifier!r}")


CHECKS = [
    ("parse", check_parse),
    ("kustomization", check_kustomization),
    ("flags", check_flags),
    ("ports", check_ports),
    ("gateway-services", check_gateway_services),
    ("runner-dns", check_runner_dns),
    ("mounted-files", check_files),
    ("config-valid", check_config_valid),
    ("config-consistency", check_consistency),
    ("probes", check_probes),
    ("selectors", check_selectors),
    ("networkpolicy", check_networkpolicy),
    ("security", check_security),
    ("live-gateway-probes", check_live_gateway),
    ("live-runner-host-probes", check_live_runner_host),
    ("runner-host-mtls", check_runner_mtls),
    ("server-json-oci", check_server_json),
]


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    binary = str(pathlib.Path(sys.argv[1]).resolve())
    if not os.access(binary, os.X_OK):
        print(f"FAIL: {binary} is not an executable", file=sys.stderr)
        return 1
    ctx = Context(binary)
    passed, failed = [], []
    try:
        for name, fn in CHECKS:
            ck = Check(name)
            fatal = False
            try:
                fn(ctx, ck)
            except CheckFailed as e:
                ck.error(str(e))
                fatal = True
            except Exception:  # a bug or an unexpected manifest shape: report, go on
                ck.error("the check crashed:\n      " + traceback.format_exc().strip().replace("\n", "\n      "))
            if ck.errors:
                failed.append(name)
                print(f"FAIL {name}")
                for e in ck.errors:
                    print(f"  - {e}")
            else:
                passed.append(name)
                print(f"PASS {name}")
            for n in ck.notes:
                print(f"    {n}")
            sys.stdout.flush()
            if fatal:
                break
    finally:
        ctx.cleanup()
    if failed:
        print(f"failed checks: {', '.join(failed)}")
    print(f"manifests: {len(passed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
