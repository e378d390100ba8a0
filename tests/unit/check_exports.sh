#!/usr/bin/env bash
# Fails unless the library exports exactly the expected functions, each with
# the symbol version libcudart.so.13.
set -euo pipefail
lib=$1 expected=$2
actual=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sort)
missing=$(comm -23 <(sort "$expected") <(echo "$actual" | sed 's/@@*libcudart.so.13$//' | sort))
unversioned=$(echo "$actual" | grep -v '@@libcudart.so.13$' || true)
extra=$(comm -13 <(sort "$expected") <(echo "$actual" | sed 's/@@*libcudart.so.13$//' | sort))
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
status=0
[ -z "$missing" ] || { echo "missing exports:"; echo "$missing"; status=1; }
[ -z "$unversioned" ] || { echo "exports without version libcudart.so.13:"; echo "$unversioned"; status=1; }
[ -z "$extra" ] || { echo "unexpected exports:"; echo "$extra"; status=1; }
[ "$soname" = libcudart.so.13 ] || { echo "soname is '$soname'"; status=1; }
[ $status -eq 0 ] && echo "$(wc -l <"$expected") exports, all versioned libcudart.so.13"
exit $status
