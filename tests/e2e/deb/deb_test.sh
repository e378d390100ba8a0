#!/usr/bin/env bash
# rgpu's Debian packages on this machine (root, Debian 12, no systemd: CI):
# cpack builds them from this build, dpkg installs them, the daemon starts
# as the installed unit's User= and ExecStart= say (with the host-test
# backend on a test port added), the installed client runs end-to-end
# programs against it over tcp and shm, then `dpkg --purge` must leave
# nothing: no file, no user or group, no /var/lib/rgpu. The machine is
# restored (packages purged) even when a check fails; a machine that has
# rgpu's packages, user or state already is refused, never touched.
#   usage: deb_test.sh BUILD_DIR PORT SHARED_PROGRAM STATIC_PROGRAM
set -euo pipefail
build=$1 port=$2 shared_program=$3 static_program=$4
packages=(rgpu-client rgpu-server)
unit=/usr/lib/systemd/system/rgpu-server.service
fail() { echo "$*"; echo "RESULT FAIL"; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (dpkg -i): CI runs as root"
for p in "${packages[@]}"; do
  ! dpkg -s "$p" >/dev/null 2>&1 || fail "$p is installed already: this test leaves such a machine alone"
done
! getent passwd rgpu >/dev/null && ! getent group rgpu >/dev/null && [ ! -e /var/lib/rgpu ] && [ ! -e /etc/rgpu ] ||
  fail "the user rgpu, its group, /var/lib/rgpu or /etc/rgpu exists already: this test leaves such a machine alone"

dir=$(mktemp -d)
chmod 755 "$dir"
daemon=
restore() {
  set +e  # every step, whatever failed before
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  dpkg --purge "${packages[@]}" >"$dir/purge.log" 2>&1 || cat "$dir/purge.log"
  rm -rf "$dir"
}
trap restore EXIT
start=$SECONDS

(cd "$build" && cpack -G DEB -B "$dir/debs" >"$dir/cpack.log" 2>&1) || { cat "$dir/cpack.log"; fail "cpack failed"; }
dpkg -i "$dir"/debs/rgpu-client_*.deb "$dir"/debs/rgpu-server_*.deb >"$dir/install.log" 2>&1 ||
  { cat "$dir/install.log"; fail "dpkg -i failed"; }
echo "ok   built and installed in $((SECONDS - start)) s"

# What postinst made: a system user and its state, the server's alone.
uid=$(id -u rgpu) || fail "no user rgpu"
[ "$uid" -lt 1000 ] || fail "rgpu is no system user (uid $uid)"
check_mode() { [ "$(stat -c '%U %a' "$1")" = "rgpu $2" ] || fail "$1 is $(stat -c '%U %a' "$1"), expected rgpu $2"; }
check_mode /var/lib/rgpu 700
check_mode /var/lib/rgpu/modules 700
check_mode /var/lib/rgpu/token 600
grep -qE '^[0-9a-f]{64}$' /var/lib/rgpu/token || fail "the token is not 32 random bytes in hex"
grep -qx /etc/rgpu/server.conf /var/lib/dpkg/info/rgpu-server.conffiles || fail "server.conf is no conffile"
echo "ok   user rgpu (uid $uid), /var/lib/rgpu 700, token 600, module cache 700"
# Nothing where NVIDIA's packages or the loader's default search put files, no ld.so.conf entry.
if dpkg -L "${packages[@]}" | grep -E '^(/usr)?/lib/x86_64-linux-gnu/|^/usr/local/|^/etc/ld\.so'; then
  fail "a packaged file is where NVIDIA's libraries or the loader's configuration live"
fi
! ldconfig -p | grep -q /usr/lib/rgpu || fail "the loader's cache lists rgpu's libraries"
version=$(dpkg-query -W -f '${Version}' rgpu-client)
[ "$(/usr/bin/rgpu --version | cut -d' ' -f2)" = "$version" ] || fail "rgpu --version is not $version"
[ "$(/usr/sbin/rgpu-server --version | cut -d' ' -f2)" = "$version" ] || fail "rgpu-server --version is not $version"
echo "ok   no file in the loader's or NVIDIA's folders; version $version on both sides"

# The daemon as systemd starts it: the unit's user and command, plus the test backend and port.
user=$(sed -n 's/^User=//p' "$unit")
read -r -a command <<<"$(sed -n 's/^ExecStart=//p' "$unit")"
[ "$user" = rgpu ] && [ "${#command[@]}" -gt 0 ] || fail "no User=rgpu or ExecStart= in $unit"
runuser -u "$user" -- "${command[@]}" --backend host-test --listen 127.0.0.1 --port "$port" --log-level warn \
  2>"$dir/server.log" &
daemon=$!
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
kill -0 "$daemon" 2>/dev/null || { cat "$dir/server.log"; fail "the daemon did not start"; }

cp "$shared_program" "$dir/shared_runtime_program"
cp "$static_program" "$dir/static_runtime_program"
clean() { env -i PATH=/usr/bin:/bin RGPU_TOKEN_FILE=/var/lib/rgpu/token "$@"; }
for program in shared_runtime_program static_runtime_program; do
  for transport in tcp shm; do
    out=$(clean RGPU_TRANSPORT=$transport rgpu run --server 127.0.0.1:"$port" -- "$dir/$program" 2>&1) ||
      { echo "$out"; cat "$dir/server.log"; fail "$program over $transport failed"; }
    grep -q "RESULT PASS" <<<"$out" || { echo "$out"; fail "$program over $transport did not pass"; }
    echo "ok   $program over $transport"
  done
done
report=$(clean rgpu doctor --server 127.0.0.1:"$port" -- "$dir/shared_runtime_program" 2>/dev/null) ||
  { echo "$report"; fail "rgpu doctor found problems"; }
grep -q "ok   /usr/lib/rgpu/lib/libcudart.so.13: rgpu's runtime and driver" <<<"$report" ||
  { echo "$report"; fail "the program's runtime is not the package's"; }
[ -n "$(find /var/lib/rgpu/modules -type f -user rgpu)" ] || fail "the daemon cached no module in /var/lib/rgpu/modules"
echo "ok   rgpu doctor: the package's libraries; modules cached in /var/lib/rgpu/modules"

kill "$daemon"
wait "$daemon" 2>/dev/null || true
daemon=
dpkg --purge "${packages[@]}" >"$dir/purge.log" 2>&1 || { cat "$dir/purge.log"; fail "dpkg --purge failed"; }
for p in "${packages[@]}"; do
  ! dpkg -s "$p" >/dev/null 2>&1 || fail "$p is still installed"
done
! getent passwd rgpu >/dev/null || fail "the user rgpu is left"
! getent group rgpu >/dev/null || fail "the group rgpu is left"
for path in /var/lib/rgpu /etc/rgpu /usr/lib/rgpu /usr/bin/rgpu /usr/sbin/rgpu-server "$unit" \
            /usr/share/doc/rgpu-server; do
  [ ! -e "$path" ] && [ ! -L "$path" ] || fail "$path is left after purge"
done
left=$(find /tmp /dev/shm -maxdepth 1 -uid "$uid" 2>/dev/null || true)
[ -z "$left" ] || fail "the daemon left files of uid $uid: $left"
echo "ok   purged: no package, user, group, state or file left"
echo "deb test took $((SECONDS - start)) s"
echo "RESULT PASS"
