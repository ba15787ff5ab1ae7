# The doc test's functions, sourced on the first line of every block's
# script. DOCTEST_STATE is the file's state folder.
set -Eeuo pipefail
if [ -f "$DOCTEST_STATE/env" ]; then source "$DOCTEST_STATE/env"; fi
if [ -f "$DOCTEST_STATE/cwd" ]; then cd "$(cat "$DOCTEST_STATE/cwd")"; fi
__doctest_fail() {
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" > "$DOCTEST_STATE/fail"
}
__doctest_save() {
	export -p | grep -v -E '^declare -[a-zA-Z]*r' > "$DOCTEST_STATE/env.next" || true
	pwd > "$DOCTEST_STATE/cwd.next"
}
trap '__doctest_fail $? $LINENO "$BASH_COMMAND"' ERR
trap '__doctest_save' EXIT
# __doctest_wait PID ADDR LINE waits until the server started in the
# background as PID answers on http://ADDR/healthz, or fails when it exits
# first or does not answer within DOCTEST_SERVER_WAIT seconds.
__doctest_wait() {
	local pid=$1 addr=$2 line=$3 i=0 tries
	echo "$pid $addr $line" >> "$DOCTEST_STATE/servers"
	tries=$(( ${DOCTEST_SERVER_WAIT:-60} * 10 ))
	while :; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "doctest: the server started at line $line exited before it answered on $addr" >&2
			return 97
		fi
		if curl -s -o /dev/null --max-time 2 "http://$addr/healthz"; then
			return 0
		fi
		i=$((i + 1))
		if [ "$i" -ge "$tries" ]; then
			echo "doctest: the server started at line $line did not answer on http://$addr/healthz within ${DOCTEST_SERVER_WAIT:-60} s" >&2
			return 98
		fi
		sleep 0.1
	done
}
