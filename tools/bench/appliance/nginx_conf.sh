# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 ffn-shard authors
#
# Sourced by the benchmarks that measure nginx beside the appliance
# (bench-appliance.sh, bench-af-xdp.sh): one place for how nginx is set
# up to be at its best on one core.
#
#   nginx_conf DIR HTTP_EXTRA SERVER_BODY > DIR/nginx.conf
#
# DIR holds its pid, logs and temporary files; HTTP_EXTRA goes into the
# http block, SERVER_BODY into its one server block (listen, root, ...).
nginx_conf() {
	local dir=$1
	mkdir -p "$dir/ngx"
	cat <<CONF
user root;
worker_processes 1;
worker_cpu_affinity 01;
daemon off;
pid $dir/ngx/nginx.pid;
error_log $dir/ngx/error.log;
events { worker_connections 4096; }
http {
	access_log off;
	# The file from the page cache by sendfile, its descriptor kept open:
	# 4 system calls per request (epoll_wait, recvfrom, writev of the
	# head, sendfile), not 7 (openat, fstat, close; strace -c). No Nagle
	# delay; no tcp_nopush (2 more setsockopt per request).
	sendfile on;
	tcp_nodelay on;
	open_file_cache max=16 inactive=600s;
	open_file_cache_valid 600s;
	keepalive_requests 1000000;
	keepalive_timeout 600s;
	client_body_temp_path $dir/ngx;
	proxy_temp_path $dir/ngx;
	fastcgi_temp_path $dir/ngx;
	uwsgi_temp_path $dir/ngx;
	scgi_temp_path $dir/ngx;
$2
	server {
$3
	}
}
CONF
}
