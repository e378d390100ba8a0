#!/usr/bin/env bash
# Fails unless the library exports exactly the expected functions under the
# symbol version VERSION, each with that version, and has soname SONAME.
#   check_exports.sh LIB EXPECTED_LIST VERSION SONAME
set -euo pipefail
lib=$1 expected=$2 version=$3 want_soname=$4
all=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sort)
versioned=$(echo "$all" | grep "@@${version}\$" | sed "s/@@${version}\$//" | sort || true)
missing=$(comm -23 <(sort "$expected") <(echo "$versioned"))
extra=$(comm -13 <(sort "$expected") <(echo "$versioned"))
unversioned=$(echo "$all" | grep -v '@' || true)
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
status=0
[ -z "$missing" ] || { echo "missing exports (or not versioned $version):"; echo "$missing"; status=1; }
[ -z "$unversioned" ] || { echo "exports without a version:"; echo "$unversioned"; status=1; }
[ -z "$extra" ] || { echo "unexpected exports of version $version:"; echo "$extra"; status=1; }
[ "$soname" = "$want_soname" ] || { echo "soname is '$soname'"; status=1; }
[ $status -eq 0 ] && echo "$(wc -l <"$expected") exports, all versioned $version"
exit $status
