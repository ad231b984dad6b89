# The crawl_redis site for the Redis crawl benchmarks (bench_redis.sh, bench_redis_shards.sh):
# HOSTS virtual hosts of PAGES pages (tests/tools/crawl_redis.py --write) served by nginx
# on HOSTS ports of 127.0.0.1 from $W/site, no Crawl-delay. Sourced after tests/nginx.sh
# with W, HOSTS, PAGES set; sets SEEDS (each host's first page), or exits 1 saying why.
ports=""
servers=""
for h in $(seq 0 $((HOSTS - 1))); do
    p=$(free_port)
    ports="$ports${ports:+,}$p"
    servers="$servers server { listen 127.0.0.1:$p; root $W/site/h$h; }"
done
python3 tests/tools/crawl_redis.py --dir "$W/site" --write --ports "$ports" --pages "$PAGES" --hosts "$HOSTS"
nginx_start "$W/nginx" "${ports%%,*}" "
    access_log off;
    keepalive_requests 100000;
    types { text/html html; text/plain txt; }
    $servers" || { echo "$0: nginx did not start: $(cat "$W/nginx/nginx.out")" >&2; exit 1; }
SEEDS=$(echo "$ports" | tr ',' '\n' | sed 's|.*|http://127.0.0.1:&/p/0.html|')
