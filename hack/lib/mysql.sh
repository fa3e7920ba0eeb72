# shellcheck shell=bash
# Sourced by the scripts that need a real MySQL (make test-mysql): installs
# Debian's MariaDB when missing and runs one in a scratch directory, on a
# unix socket only, as the mysql user.
#
#   my_setup      starts it; sets MY_DIR and MY_ENDPOINT (kine's --endpoint
#                 for the database "kine")
#   my_teardown   stops it and removes MY_DIR unless MY_KEEP=1
#
# Callers trap EXIT to my_teardown.

my_setup() {
  if ! command -v mariadbd >/dev/null || ! command -v mariadb-install-db >/dev/null; then
    echo "mysql: installing mariadb-server (Debian)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null
  fi
  MY_DIR=$(mktemp -d /tmp/apiloom-my.XXXXXX)
  chmod 0755 "$MY_DIR"
  local as=() user=$(id -un)
  if [[ $(id -u) == 0 ]]; then
    id mysql >/dev/null 2>&1 || useradd --system --home "$MY_DIR" mysql
    chown mysql "$MY_DIR"
    as=(runuser -u mysql --) user=mysql
  fi
  "${as[@]}" mariadb-install-db --user="$user" --datadir="$MY_DIR/data" \
    --auth-root-authentication-method=normal >"$MY_DIR/install.log" 2>&1
  # No TCP listener: the socket in MY_DIR only.
  "${as[@]}" mariadbd --datadir="$MY_DIR/data" --socket="$MY_DIR/sock" --pid-file="$MY_DIR/pid" \
    --skip-networking --max-connections=300 >"$MY_DIR/mariadb.log" 2>&1 &
  for _ in $(seq 300); do
    [[ -S $MY_DIR/sock ]] && mariadb -S "$MY_DIR/sock" -u root -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.1
  done
  mariadb -S "$MY_DIR/sock" -u root -e "CREATE DATABASE kine"
  MY_ENDPOINT="mysql://root@unix($MY_DIR/sock)/kine"
  export MY_DIR MY_ENDPOINT
}

my_teardown() {
  [[ -n ${MY_DIR:-} ]] || return 0
  if [[ -s $MY_DIR/pid ]]; then
    local pid; pid=$(cat "$MY_DIR/pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  if [[ ${MY_KEEP:-0} == 1 ]]; then echo "mysql: kept $MY_DIR"; else rm -rf "$MY_DIR"; fi
}
