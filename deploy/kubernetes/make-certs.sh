#!/bin/sh
# Makes the certificates of airlock's gateway <-> runner-host mutual TLS
# (docs/deploy.md#mutual-tls):
#
#   ca.crt, ca.key                  a CA for airlock alone; keep ca.key OUT of the cluster
#   runner-host.crt, runner-host.key  the runner hosts' server certificate (serverAuth only),
#                                   named SERVER_NAME (the gateways' runner.tls.server_name)
#   gateway.crt, gateway.key        the gateways' client certificate (clientAuth only)
#
# Usage: make-certs.sh OUTDIR [SERVER_NAME [NAMESPACE]]
#   SERVER_NAME defaults to airlock-runner-host, NAMESPACE to airlock.
#   An OUTDIR that already holds ca.crt and ca.key keeps that CA and gets new
#   leaf certificates (renewal).
#   DAYS (environment) sets the leaf certificates' validity, 365 by default.
#
# tests/deploy/manifests_test.py makes its throwaway certificates with this
# script, so what the docs tell operators to run is what the test runs.
set -eu

out=${1:?usage: make-certs.sh OUTDIR [SERVER_NAME [NAMESPACE]]}
name=${2:-airlock-runner-host}
ns=${3:-airlock}
days=${DAYS:-365}

mkdir -p "$out"
cd "$out"
umask 077

key() {  # ECDSA P-256: small, fast handshakes, supported by gRPC's TLS stacks
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
}

# The CA: signs both sides, and each side trusts only certificates it signed.
# Kept when OUTDIR already holds one: running the script again renews the
# leaf certificates under the same CA (a rotation both sides accept at once).
if [ -s ca.key ] && [ -s ca.crt ]; then
  echo "keeping the CA in $out"
else
  key ca.key
  openssl req -x509 -new -key ca.key -days 3650 -subj "/CN=airlock runner CA" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out ca.crt
fi

# A leaf: sign NAME with the CA, extensions from EXTFILE.
leaf() {
  key "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
  printf '%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
    -days "$days" -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

# The runner hosts' server certificate. Gateways connect to each runner host by
# the pod IP that the headless Service resolves to and check the certificate
# against runner.tls.server_name, so that name must be among the DNS SANs.
# serverAuth only: the key cannot serve as a gateway's client certificate.
leaf runner-host "$name" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:$name,DNS:$name.$ns.svc,DNS:$name.$ns.svc.cluster.local,DNS:*.$name.$ns.svc.cluster.local"

# The gateways' client certificate: what a runner host asks of every caller.
# clientAuth only: the key cannot pose as a runner host.
leaf gateway airlock-gateway "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"

rm -f ca.srl
echo "made in $out: ca.crt ca.key runner-host.crt runner-host.key gateway.crt gateway.key (server name $name)"
