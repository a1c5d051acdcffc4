#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest's /init (busybox sh): mount the pseudo file systems, load the
# benchmark module, then run the job in /job/job.conf, or give a shell when
# there is none.  Messages go to /dev/kmsg so that they land on the console
# with the kernel's timestamps; the host's runner reads them there.
#
# For each point of the job: set the module's parameters, clear
# /proc/lock_stat, run the module under perf stat (and perf lock record when
# asked), save the module's results and /proc/lock_stat while the module is
# still loaded (lock_stat forgets a module's classes on unload), checksum
# the files and stream them to the host as a tar archive on the virtio port
# "lockbench.results", so that a point already measured survives a later
# hang or panic.  A fault asked for with "option inject" fires after the
# first point, so that the harness's tests can check that a point finished
# before a fault is kept.
#
# Job format (guest/JOB.md): "lockbench-job v1", then "option KEY VALUE" and
# "point ID KEY=VALUE..." lines, all validated by the host.

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

log() {
	echo "lockbench: $*" >/dev/kmsg
}

fail() {
	log "FAIL $*"
	echo "LOCKBENCH-JOB-END status=fail" >/dev/kmsg
	sync
	poweroff -f
}

# /dev first: the root fs has no device node (guest/inside/rootfs-files.txt);
# init's stdio is the built-in initramfs's /dev/console.
mount -t devtmpfs devtmpfs /dev
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t tmpfs tmpfs /tmp
# What the tests check of every boot: the lock statistics are there, no
# network device is (the registry of patch 0001 is checked at the end:
# reading kallsyms takes a second under TCG, not to be spent before the
# workload).
log "LOCKBENCH-INIT cpus=$(grep -c ^processor /proc/cpuinfo) kernel=$(uname -r)\
 lock_stat='$(head -n 1 /proc/lock_stat 2>&1)'\
 netdevs=$(find /sys/class/net -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"

if [ ! -f /job/job.conf ]; then
	insmod /mbox_bench.ko || log "insmod mbox_bench.ko failed"
	# ./run.sh boot --help prints this text too (guest/run_guest.py reads
	# it from here: the host's code names no module loading).
	cat <<-'EOF'
	lockbench: no job: interactive shell; 'poweroff -f' to leave
	The benchmark module /mbox_bench.ko is loaded (bench-module/README.md).  A run:
	  cd /sys/module/mbox_bench/parameters; echo 90 >read_pct; echo 2000 >duration_ms
	  echo 0 >/proc/lock_stat; echo 1 >/sys/kernel/debug/mbox_bench/run
	  cat /sys/kernel/debug/mbox_bench/results; grep mboxes_lock /proc/lock_stat
	Or: rmmod mbox_bench; insmod /mbox_bench.ko read_pct=90 duration_ms=2000
	/proc/lock_stat has no mboxes_lock row until a run has taken the lock;
	a *-plain kernel has no /proc/lock_stat at all.
	EOF
	setsid cttyhack sh
	poweroff -f
fi

# A kernel built without CONFIG_LOCK_STAT (a "plain" variant) has no
# /proc/lock_stat: the module's own timings are then the only measurement.
lockstat=1
if [ ! -e /proc/lock_stat ]; then
	lockstat=0
	log "no /proc/lock_stat (kernel built without CONFIG_LOCK_STAT): not clearing or dumping it"
fi

read -r magic version </job/job.conf
[ "$magic $version" = "lockbench-job v1" ] || fail "unknown job format: $magic $version"

perf_stat=1
perf_lock=0
trace=0
inject=none
selftest=0
port=
for p in /sys/class/virtio-ports/*; do
	[ "$(cat "$p/name" 2>/dev/null)" = lockbench.results ] && port=/dev/${p##*/}
done
[ -n "$port" ] || fail "no virtio port lockbench.results"

while read -r kind key val; do
	[ "$kind" = option ] || continue
	case $key in
	perf_stat) perf_stat=$val ;;
	perf_lock) perf_lock=$val ;;
	trace) trace=$val ;;
	inject) inject=$val ;;
	selftest) selftest=$val ;;
	esac
done </job/job.conf
case $inject in
none | panic | hang | lockdep | warn | garble | truncate | refuse) ;;
*) fail "unknown inject $inject" ;;
esac

params=/sys/module/mbox_bench/parameters
bench=/sys/kernel/debug/mbox_bench
# The module's own parameter checks: at load and at the start of a run.
if [ "$selftest" = 1 ]; then
	for bad in read_pct=101 think_ns=1000001; do
		if insmod /mbox_bench.ko "$bad" 2>/dev/null; then
			log "SELFTEST insmod $bad accepted"
			rmmod mbox_bench
		else
			log "SELFTEST insmod $bad rejected"
		fi
	done
fi
insmod /mbox_bench.ko || fail "insmod mbox_bench.ko failed"
if [ "$selftest" = 1 ]; then
	for bad in mailboxes=5000 think_ns=1000001; do
		key=${bad%%=*}
		good=$(cat "$params/$key")
		echo "${bad#*=}" >"$params/$key"
		if echo 1 2>/dev/null >$bench/run; then
			log "SELFTEST run $bad accepted"
		else
			log "SELFTEST run $bad rejected"
		fi
		echo "$good" >"$params/$key"
	done
fi

# Faults on request, for the harness's own tests, fired after the first
# point: a kernel fault through the module or sysrq; "garble" changes
# results.txt of every later point after it was checksummed, "truncate"
# streams only the first half of every later point's archive, "refuse"
# has the module refuse the next point's run (an out-of-range mailboxes
# written behind the host's checks), once.
inject_fault() {
	case $inject in
	panic)
		log "injecting a panic"
		echo c >/proc/sysrq-trigger
		;;
	hang | lockdep | warn)
		log "injecting $inject"
		echo "$inject" >$bench/inject
		;;
	esac
}
damage=none

# "option trace 1": the kernel's own record of what ran in each point's
# window (docs/icount.md, "Seeing what ran in the window"): interrupts,
# softirqs, timers, work items and task switches, traced from just before
# the run to just after it, the guest clock's timestamps (under icount,
# instructions), in the point's trace.txt.
T=/sys/kernel/tracing
if [ "$trace" = 1 ]; then
	echo 0 >$T/tracing_on || fail "option trace 1: no $T (tracefs)"
	echo 4096 >$T/buffer_size_kb
	for e in irq/irq_handler_entry irq/softirq_entry timer/hrtimer_expire_entry \
		timer/timer_expire_entry workqueue/workqueue_execute_start \
		workqueue/workqueue_execute_end sched/sched_switch printk/console; do
		echo 1 >"$T/events/$e/enable" || fail "option trace 1: no trace event $e"
	done
fi

# The job's lines, "point ID key=value ...", with values checked by the host.
grep '^point ' /job/job.conf >/tmp/points
# perf's first run looks /proc/sys up, one read of proc_subdir_lock that
# the dcache then keeps: done here, outside the first point's lock_stat.
[ "$perf_stat$perf_lock" = 00 ] || [ -d /proc/sys ]
npoint=0
while read -r kind id rest; do
	dir=/tmp/out/points/$id
	mkdir -p "$dir"
	npoint=$((npoint + 1))
	# workload=, writer_hz=, writer= and locks_per_op= are this point's
	# own (not carried over); the other keys are the module's parameters,
	# also for a lockload point, which takes its duration_ms, seed and
	# timing from there.
	workload=module
	writer_hz=0
	writer=
	locks_per_op=1
	for kv in $rest; do
		case ${kv%%=*} in
		workload) workload=${kv#*=} ;;
		writer_hz) writer_hz=${kv#*=} ;;
		writer) writer=${kv#*=} ;;
		locks_per_op) locks_per_op=${kv#*=} ;;
		*) echo "${kv#*=}" >"$params/${kv%%=*}" || fail "point $id: bad parameter $kv" ;;
		esac
	done
	# The run: the module's, or lockload's (guest/inside/lockload/lockload.c),
	# whose stdout is the point's results.txt, with the fs_writer module
	# driving the other side of the workload's lock at writer_hz in the
	# mode writer= names: the host writes it from the workload's target
	# (kernel-patches/targets/, guest/job.py), so no case is named here.
	runcmd="echo 1 >$bench/run"
	if [ "$workload" != module ]; then
		wopt=
		if [ "$writer_hz" != 0 ]; then
			[ -n "$writer" ] || fail "point $id: writer_hz=$writer_hz without writer="
			rmmod fs_writer 2>/dev/null
			insmod /fs_writer.ko rate_hz="$writer_hz" lock="$writer" || fail "point $id: insmod fs_writer.ko lock=$writer failed"
			wopt="--writer /sys/kernel/debug/fs_writer"
		fi
		# Every exec reads binfmt_lock: the execs between lock_stat's
		# clearing and its reading other than the workload's and
		# lockload's own, for lockload's count of it: the sh -c below,
		# the cat of /proc/lock_stat, and perf when it wraps the run.
		outside=$((2 + perf_stat + perf_lock))
		# A generic case (read:/proc/iomem, syscall:20: a token the
		# host checked, guest/job.py) is its words and its K.
		case $workload in
		*:*) lcase="$(echo "$workload" | tr : ' ') --locks-per-op $locks_per_op" ;;
		*) lcase=$workload ;;
		esac
		runcmd="/lockload $lcase --duration-ms $(cat $params/duration_ms) \
--timing $(cat $params/timing) --seed $(cat $params/seed) --run-id $npoint \
--outside-execs $outside $wopt >$dir/results.txt"
	fi
	if [ "$damage" = refuse ]; then
		log "injecting a refused run: mailboxes=5000"
		echo 5000 >"$params/mailboxes"
		damage=refused
	fi
	log "point $id start $rest"
	# Settle: idle for 100 ms before the point, so that the work its set-up
	# and the previous point left behind (RCU callbacks, exited tasks, and
	# before the first point the module loader freeing mbox_bench.ko's
	# init section a grace period after insmod: about 800k instructions)
	# is done before lock_stat is cleared and the run starts, not inside
	# its window in some boots and before it in others.  Under icount an
	# idle guest's clock jumps to its next timer: it costs the host nothing
	# (docs/icount.md, "What makes the clock exact").
	sleep 0.1
	[ "$lockstat" = 0 ] || echo 0 >/proc/lock_stat
	on='' off=''
	if [ "$trace" = 1 ]; then
		echo >$T/trace
		on="echo 1 >$T/tracing_on; " off="echo 0 >$T/tracing_on; "
	fi
	# run-begin/run-end right around the module's run (inside perf, so
	# that perf's start and end stay outside): the host samples its vCPU
	# threads when it reads them on the console (host-steal.txt).  The
	# run's own exit status is kept.
	set -- sh -c "${on}echo 'lockbench: point $id run-begin' >/dev/kmsg; $runcmd; \
rc=\$?; ${off}echo 'lockbench: point $id run-end' >/dev/kmsg; exit \$rc"
	if [ "$perf_stat" = 1 ]; then
		set -- perf stat -a -x, -o "$dir/perf-stat.csv" \
			-e task-clock,context-switches,cpu-migrations,cycles,instructions -- "$@"
	fi
	if [ "$perf_lock" = 1 ]; then
		set -- perf lock record -a -q -o "$dir/perf.data" -- "$@"
	fi
	if ! "$@" >"$dir/run.log" 2>&1; then
		log "point $id run failed: $(tail -n 3 "$dir/run.log" | tr '\n' ' ')"
	fi
	# The module empties its results as a run starts: none now means that
	# this point's run was refused or could not start (a run that ended
	# with status FAILURE has results, and they go).  Such a point is not
	# sent, so that the host reports it as not brought back.
	if [ "$workload" = module ] && ! cat $bench/results >"$dir/results.txt"; then
		: >"$dir/results.txt"
	fi
	if [ ! -s "$dir/results.txt" ]; then
		log "point $id has no results: not sent"
		rm -rf "$dir"
		continue
	fi
	[ "$lockstat" = 0 ] || cat /proc/lock_stat >"$dir/lock_stat.txt"
	[ "$trace" = 0 ] || cat $T/trace >"$dir/trace.txt"
	[ "$writer_hz" = 0 ] || rmmod fs_writer
	if [ "$perf_lock" = 1 ]; then
		perf lock report -i "$dir/perf.data" >"$dir/perf-lock.txt" 2>&1
	fi
	(cd "$dir" && sha256sum -- * >/tmp/SHA256SUMS && mv /tmp/SHA256SUMS .)
	[ "$damage" = garble ] && echo "garbled by inject" >>"$dir/results.txt"
	if [ "$damage" = truncate ]; then
		(cd /tmp/out && tar -cf /tmp/point.tar "points/$id")
		head -c $(($(wc -c </tmp/point.tar) / 2)) /tmp/point.tar >"$port"
		rm -f /tmp/point.tar
	else
		(cd /tmp/out && tar -cf - "points/$id") >"$port"
	fi
	log "point $id done $(grep '^end ' "$dir/results.txt")"
	rm -rf "$dir"
	if [ "$damage" = none ] && [ "$inject" != none ]; then
		damage=$inject
		inject_fault
	fi
done </tmp/points

rmmod mbox_bench
log "LOCKBENCH-CHECK omap_mbox_register=$(grep -c ' omap_mbox_register$' /proc/kallsyms)"
log "LOCKBENCH-JOB-END status=ok"
sync
poweroff -f
