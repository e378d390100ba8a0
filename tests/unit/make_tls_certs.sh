#!/usr/bin/env bash
# Throwaway certificates for the TLS tests, made with the openssl CLI:
#   ca.pem          the servers' CA; server.pem/.key: for localhost and 127.0.0.1
#   client-ca.pem   the clients' CA; client.pem/.key: signed by it
#   other-ca.pem    an unrelated CA; stranger.pem/.key: a client certificate it signed,
#                   other-server.pem/.key: a server certificate it signed
#   usage: make_tls_certs.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() {  # NAME
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -days 2 -subj "/CN=rgpu test $1" -out "$1.pem"
}
signed() {  # NAME CA SUBJECT-ALT-NAMES
  key "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=rgpu test $1" -out "$1.csr"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 \
    -extfile <(printf 'subjectAltName=%s\n' "$3") -out "$1.pem" 2>/dev/null
}
ca ca
ca client-ca
ca other-ca
signed server ca "DNS:localhost,IP:127.0.0.1"
signed client client-ca "DNS:client"
signed stranger other-ca "DNS:stranger"
signed other-server other-ca "DNS:localhost,IP:127.0.0.1"
