# http.sh — shared by the stream-mode tests (sourced, not run): a private
# nginx on 127.0.0.1 with its own config, port, logs and temp paths under a
# test directory, the misbehaving server, and the cache checker. Every wait
# is bounded; callers stop servers from their EXIT trap.

NGINX=$(command -v nginx || echo /usr/sbin/nginx)

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# nginx_start DIR [DIRECTIVES]: serves DIR/www on 127.0.0.1:$NGX_PORT, access
# log DIR/access.log ("URI STATUS RANGE BYTES AUTH"); extra http directives
# (e.g. "limit_rate 200m;") go into the server block.
nginx_start() {
  NGX_DIR=$1
  [ -x "$NGINX" ] || { echo "nginx is not installed (make test installs nginx-light)"; return 1; }
  for try in 1 2 3 4 5; do
    NGX_PORT=$(free_port)
    # as root, workers would switch to nobody, who may not be allowed into
    # the clone (a checkout under a 0700 home or a mktemp -d folder)
    user_line=; [ "$(id -u)" = 0 ] && user_line="user root;"
    cat > "$NGX_DIR/nginx.conf" <<CONF
$user_line
worker_processes 1;
daemon on;
pid $NGX_DIR/nginx.pid;
error_log $NGX_DIR/error.log;
events { worker_connections 256; }
http {
  log_format ranges '\$uri \$status "\$http_range" \$body_bytes_sent "\$http_authorization"';
  access_log $NGX_DIR/access.log ranges;
  client_body_temp_path $NGX_DIR/t_body; proxy_temp_path $NGX_DIR/t_proxy;
  fastcgi_temp_path $NGX_DIR/t_fcgi; uwsgi_temp_path $NGX_DIR/t_uwsgi; scgi_temp_path $NGX_DIR/t_scgi;
  default_type application/octet-stream;
  keepalive_requests 100000;
  server { listen 127.0.0.1:$NGX_PORT; root $NGX_DIR/www; ${2:-} }
}
CONF
    if "$NGINX" -p "$NGX_DIR" -c "$NGX_DIR/nginx.conf" -e "$NGX_DIR/error.log" 2>>"$NGX_DIR/start.log"; then
      for i in $(seq 50); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $NGX_PORT), 1)" 2>/dev/null && return 0
        sleep 0.1
      done
      nginx_stop
    fi
  done
  echo "nginx did not start:"; cat "$NGX_DIR/start.log" "$NGX_DIR/error.log" 2>/dev/null
  return 1
}

nginx_stop() {
  [ -n "${NGX_DIR:-}" ] && [ -f "$NGX_DIR/nginx.pid" ] || return 0
  pid=$(cat "$NGX_DIR/nginx.pid")
  kill "$pid" 2>/dev/null
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$NGX_DIR/nginx.pid"
}

# faulty_start DIR ROOT: the misbehaving server on 127.0.0.1:$FS_PORT, log DIR/faulty.log.
faulty_start() {
  FS_DIR=$1
  rm -f "$FS_DIR/faulty.port"
  python3 "$(dirname "$0")/lib/faulty_server.py" --root "$2" --port-file "$FS_DIR/faulty.port" \
    --log "$FS_DIR/faulty.log" --lifetime 600 &
  FS_PID=$!
  for i in $(seq 100); do [ -f "$FS_DIR/faulty.port" ] && break; sleep 0.1; done
  [ -f "$FS_DIR/faulty.port" ] || { echo "faulty server did not start"; return 1; }
  FS_PORT=$(cat "$FS_DIR/faulty.port")
}

# fault MODE COUNT: arms the next COUNT range requests of the faulty server.
fault() {
  python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$FS_PORT/__fault?mode=$1&count=$2', timeout=5).read()"
}

faulty_stop() {
  [ -n "${FS_PID:-}" ] || return 0
  kill "$FS_PID" 2>/dev/null
  wait "$FS_PID" 2>/dev/null
  FS_PID=
}

# check_cache MODEL FIXTURE [--all]: every cached expert file is whole and
# holds the fixture's bytes; no temporary files under the final names.
check_cache() {
  python3 "$(dirname "$0")/lib/check_cache.py" "$@"
}
