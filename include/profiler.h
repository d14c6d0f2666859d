/*
 * profiler.h: libprofiler, the profiler's in-process sampling and counting
 * for C, C++ and Fortran. PAPI_profil, PAPI_sprofil, PAPI's
 * start/read/accum/stop and PAPI_overflow, libcpc's bindings and libpfm's
 * event encoding, rebuilt on Linux perf_event_open.
 *
 *     cargo build --release
 *     cc prog.c -Iinclude -Ltarget/release -lprofiler
 *
 * Two parts: sessions (prof_profil, prof_sprofil) pour sampled program
 * counters into bucket histograms, below; sets of counters
 * (prof_counters_*) count events and call overflow handlers, further down.
 *
 * A session counts one event, every `threshold` occurrences, on every
 * thread of the calling process, and pours the program counter of each
 * sample into the caller's bucket buffers, as PAPI_profil does:
 *
 *     unsigned short buckets[4096];
 *     prof_session *s;
 *     int rc = prof_profil(&s, buckets, sizeof buckets, (uintptr_t)&hot, 65536,
 *                          "cpu-clock", 100000, PROF_BUCKET_16);
 *     if (rc != 0) { fprintf(stderr, "%s\n", prof_strerror(rc)); return 1; }
 *     prof_start(s);
 *     hot();
 *     prof_stop(s);                 buckets[i] counts the samples at
 *     prof_free(s);                 hot + ceil(i * 131072 / 65536)
 *
 * Buckets: bucket i of a region counts the samples whose program counter
 * pc has ((pc - offset) * scale) >> 17 == i (computed without overflow).
 * Its first address is offset + ceil(i * 131072 / scale). A region has
 * bufsiz / (bucket bytes) buckets; the bucket width does not change which
 * addresses a bucket covers.
 *
 * Where it differs from PAPI:
 *  - No EventSet and no PAPI_library_init: one event per session, named
 *    as `profiler record -e` names it ("cpu-clock", "cycles:u", "r01c2",
 *    "cpu/event=0x3c,umask=0x0/"); the threshold is its sample period
 *    (nanoseconds for cpu-clock and task-clock). Without a :u, :k or :h
 *    modifier only user space is counted.
 *  - Every thread of the process is counted, those created after
 *    prof_start included; PAPI counts the thread of the EventSet. Samples
 *    of child processes are not counted.
 *  - No signal handler is installed and no signal is used. The kernel's
 *    ring buffers are drained by a thread of the library ("profil-drain",
 *    which blocks every signal), into a histogram of its own; the caller's
 *    buffers are written only inside prof_read and prof_stop, never
 *    asynchronously.
 *  - Buckets saturate at their maximum (65535 for 16 bits) instead of
 *    wrapping to 0, and prof_stats.saturated counts the increments lost.
 *  - Several regions follow glibc's sprofil rule: a program counter belongs
 *    to the region with the highest offset at or below it (the first given
 *    among equal offsets); past the end of that region's buckets, or below
 *    every region, it is outside. Samples outside go to the overflow bin (a region
 *    with offset 0 and scale 2) when there is one, and are counted in
 *    prof_stats.outside either way. PAPI drops them, and its bin only ever
 *    works as the first region.
 *  - PROF_WEIGHTED adds the sample's period (the events it stands for), not
 *    PAPI's 1 to 255: use PROF_BUCKET_64 with it. PROF_RANDOM is supported
 *    (PAPI's perf_event component refuses it). PROF_FORCE_SW samples
 *    cpu-clock instead of an event the kernel cannot sample, at 4000
 *    samples per CPU-second (or the kernel's lower limit), rather than
 *    polling the counter every 10 ms as PAPI does.
 *  - Error codes have PAPI's values where PAPI has the code; PROF_ESTATE
 *    stands for both PAPI_EISRUN and PAPI_ENOTRUN.
 *
 * Thread safety: sessions are independent. Calls on one session from
 * several threads take turns, but prof_free must not overlap any other
 * call on the same session. One drain thread of the library's serves
 * every session of the process (counted by none), so a session costs its
 * counters, one per CPU for each thread running at prof_start, and nothing
 * more. The buffers are written only inside prof_read
 * and prof_stop: read them after the call returns, in its thread or one
 * that synchronizes with it. A child made by fork() must not call any
 * function on its parent's sessions; it may leave them as they are.
 *
 * Async-signal-safe: prof_read, prof_get_stats, prof_counters_read,
 * prof_counters_read_ext, prof_counters_reset and prof_strerror may be
 * called from a signal handler (an overflow handler included): nothing
 * they do allocates memory or takes a lock a handler could be
 * interrupting. (prof_read waits, in a futex, while the library's drain
 * thread writes the buffers; it returns PROF_ESTATE at once if the handler
 * interrupted another call on the same session in its own thread.) No
 * other function may be called from a signal handler.
 *
 * Errors: every function but prof_free, prof_counters_free,
 * prof_set_error_handler and prof_strerror returns 0 or a negative PROF_E*
 * code. None aborts the program or lets a panic out (an internal error
 * returns PROF_EBUG); only prof_overflow installs a signal handler.
 * prof_strerror(code), called in the same thread, gives the one-line
 * message the profiler's command line would print for the call that
 * returned it: which argument or event, and what to do instead. The error
 * handler of prof_set_error_handler is told of each error too.
 */
#ifndef PROFILER_H
#define PROFILER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags: PAPI's values and meanings. At most one PROF_BUCKET_ flag. */
#define PROF_POSIX      0x00   /* no flag: 16-bit buckets, every sample counts 1 */
#define PROF_RANDOM     0x01   /* drop a quarter of the samples at random (PAPI's generator) */
#define PROF_WEIGHTED   0x02   /* add the sample's period instead of 1 */
#define PROF_COMPRESS   0x04   /* drop a sample with probability bucket/65536 */
#define PROF_BUCKET_16  0x08   /* the default when no BUCKET_ flag is given */
#define PROF_BUCKET_32  0x10
#define PROF_BUCKET_64  0x20
#define PROF_FORCE_SW   0x40   /* sample cpu-clock if the event cannot be sampled */

/* Return codes: PAPI's values. */
#define PROF_OK          0
#define PROF_EINVAL     -1     /* an invalid argument: NULL, bufsiz, scale, threshold, flags, event syntax, count, scope, index, pid, cpu */
#define PROF_ESYS       -3     /* another system error (files, memory, threads) */
#define PROF_EBUG       -6     /* an internal error of the library; please report it */
#define PROF_ENOEVNT    -7     /* no such event (the message names the nearest one) */
#define PROF_ESTATE    -10     /* start while running, stop while stopped, overflow while running */
#define PROF_EPERM     -15     /* refused by the kernel (perf_event_paranoid, capabilities) */
#define PROF_ENOSUPP   -18     /* the event cannot be sampled here (no PMU, e.g. in a VM) */

typedef struct prof_session prof_session;            /* opaque */

typedef struct prof_region {                          /* glibc's struct prof */
    void     *buf;      /* caller's buckets, 16/32/64-bit by the flags */
    size_t    bufsiz;   /* bytes */
    uintptr_t offset;   /* lowest text address of the region (the running address) */
    unsigned  scale;    /* PAPI/glibc scale: 65536 = one bucket per 2 bytes, 131072 per byte, 2 = whole space in one bucket */
} prof_region;

typedef struct prof_stats {
    uint64_t samples;    /* taken */
    uint64_t outside;    /* fell in no region */
    uint64_t saturated;  /* increments lost to a full bucket */
    uint64_t lost;       /* lost by the kernel */
} prof_stats;

typedef struct prof_encoding {                        /* libpfm's pfm_get_os_event_encoding, for perf_event_open */
    uint32_t type;
    uint64_t config, config1, config2;
    int exclude_user, exclude_kernel, exclude_hv, precise_ip;
} prof_encoding;

/*
 * prof_profil: make a session that counts `event` every `threshold` events
 * into one region: bufsiz bytes of buckets at buf over the text from
 * offset, at scale. Nothing is counted before prof_start.
 *
 *   buf        16-, 32- or 64-bit buckets, as the flags say. Counts already
 *              there are added to. It must stay valid until prof_free.
 *   offset     the running address of the region's first byte, e.g.
 *              (uintptr_t)&function, or __executable_start for the text.
 *   scale      131072 (a bucket per byte) or 2 to 65536 (65536: a bucket
 *              per 2 bytes, 32768: per 4 bytes). offset 0 with scale 2 is
 *              glibc's overflow bin: every sample goes into buf's first
 *              bucket.
 *   event      as `profiler record -e` takes it (see above).
 *   threshold  events per sample: PAPI's threshold, perf's -c.
 *   flags      PROF_BUCKET_16 (the default), _32 or _64, and any of
 *              PROF_RANDOM, PROF_WEIGHTED, PROF_COMPRESS, PROF_FORCE_SW.
 *
 * The kernel is asked about the event here, so that a refusal comes before
 * the work to profile. Returns 0 and sets *out, or sets *out to NULL and
 * returns
 *   PROF_EINVAL   out, buf or event NULL; bufsiz smaller than one bucket;
 *                 scale 0, 1, or not 131072 or 2 to 65536; threshold < 1;
 *                 unknown flag bits or two bucket widths; bad event syntax
 *   PROF_ENOEVNT  an unknown event
 *   PROF_EPERM    the kernel refuses to sample (the message says what to change)
 *   PROF_ENOSUPP  the event cannot be sampled here, without PROF_FORCE_SW
 *   PROF_ESYS     another system error
 * With PROF_FORCE_SW and an event the kernel cannot sample, it returns 0
 * and prof_strerror(0) says why cpu-clock is sampled instead.
 */
int  prof_profil(prof_session **out, void *buf, size_t bufsiz, uintptr_t offset, unsigned scale,
                 const char *event, long long threshold, int flags);    /* event as -e takes it; threshold = sample period */

/*
 * prof_sprofil: as prof_profil, over `count` regions, each with its own
 * buffer, offset and scale (the array itself may be freed after the call;
 * the buffers may not, until prof_free). A region with offset 0 and scale
 * 2 is the overflow bin: it counts, in its first bucket, the samples
 * outside every other region. At most one bin. Errors as prof_profil's,
 * and PROF_EINVAL for a count below 1, a NULL array, or two bins; the
 * message names the region at fault (regions[i]).
 */
int  prof_sprofil(prof_session **out, prof_region *regions, int count,
                  const char *event, long long threshold, int flags);  /* glibc's overflow-bin rule: a region with offset 0, scale 2 */

/*
 * prof_start: start counting on every thread of the process, those created
 * later too, adding to what the buffers hold now. A stopped session may be
 * started again. PROF_ESTATE if it is running; PROF_EPERM, PROF_ENOSUPP or
 * PROF_ESYS if the kernel refuses the counters; PROF_EINVAL for NULL.
 */
int  prof_start(prof_session *s);    /* every thread of the process, those created later too */

/*
 * prof_read: write every sample taken until now into the buffers; counting
 * goes on. On a stopped session it does nothing (the buffers are up to
 * date). Async-signal-safe. PROF_ESYS if draining the session failed (it
 * counts no more: prof_stop returns the error); PROF_ESTATE if called from
 * a signal handler that interrupted a call on this session in its thread.
 */
int  prof_read(prof_session *s);     /* bring the caller's buffers up to date while running */

/*
 * prof_stop: stop counting, then write every sample taken into the
 * buffers. PROF_ESTATE if the session is not running.
 */
int  prof_stop(prof_session *s);     /* stop, then bring the buffers up to date */

/*
 * prof_get_stats: the session's counts, over all its runs, as of the last
 * prof_read or prof_stop (the moment the buffers show). samples - outside
 * is what fell in the regions, less what PROF_RANDOM and PROF_COMPRESS
 * dropped. Async-signal-safe. PROF_EINVAL for NULL; PROF_ESTATE as
 * prof_read.
 */
int  prof_get_stats(prof_session *s, prof_stats *out);

/*
 * prof_save: bring the buffers up to date (as prof_read) and write them as
 * a gmon.out, which `gprof -p -b PROGRAM FILE` reads: one histogram record
 * a region (not the overflow bin), the counts held at 65535, addresses as
 * the module states them. `name` NULL means "gmon.out". In a rank of an MPI
 * job (mpirun of Open MPI, MPICH, MVAPICH, PMIx, Slurm's srun) the rank is
 * added, zero-padded to the job's size: "gmon.out.03" for rank 3 of 16, so
 * that every rank writes its own file. The file is written whole beside
 * the name and renamed over it; PROF_EINVAL when the name holds anything
 * but a regular file, or when the scale gives buckets a fraction of a byte
 * (any scale of 65536 divided by a power of two does not); PROF_ESYS when
 * it cannot be written.
 */
int  prof_save(prof_session *s, const char *name);

/*
 * prof_free: stop the session if it runs, without writing the buffers,
 * and free it. NULL is fine.
 */
void prof_free(prof_session *s);     /* stops if running; NULL is fine */

/*
 * prof_strerror: what `code` means. If it is the code of the calling
 * thread's last call into the library, the message of that call: the
 * one-line message the CLI would print (the event's nearest known name,
 * the perf_event_paranoid level needed, the scale at fault), or for 0 any
 * notice of that call. Otherwise the code's general meaning. Never NULL;
 * valid until the thread's next call into the library other than
 * prof_strerror.
 */
const char *prof_strerror(int code); /* the one-line message the CLI would print; never NULL */

/*
 * prof_event_encode: `event`, as prof_profil takes it, encoded for
 * perf_event_open (attr.type, attr.config, config1, config2, the exclude_*
 * bits and precise_ip), as `profiler list --json` shows it, from this
 * machine's sysfs PMU descriptions. Without modifiers exclude_kernel and
 * exclude_hv are 1. PROF_ENOEVNT, PROF_EINVAL as prof_profil; the kernel is
 * not asked whether it can count the event.
 */
int  prof_event_encode(const char *event, prof_encoding *out);

/*
 * Counting: sets of counters (PAPI's start/read/accum/stop, libcpc's
 * cpc_bind_curlwp, cpc_bind_pctx and cpc_bind_cpu).
 *
 * A set counts one or more events together, from prof_counters_start on,
 * as 64-bit counts readable at any moment, running or stopped:
 *
 *     const char *events[] = {"task-clock", "page-faults"};
 *     long long values[2];
 *     prof_counters *c;
 *     int rc = prof_counters_create(&c, events, 2, PROF_SCOPE_THREAD);
 *     if (rc != 0) { fprintf(stderr, "%s\n", prof_strerror(rc)); return 1; }
 *     prof_counters_start(c);
 *     work();
 *     prof_counters_read(c, values);   values[0]: ns of CPU, values[1]: faults
 *     prof_counters_stop(c, NULL);
 *     prof_counters_free(c);
 *
 * Events are named as profiler stat -e names them; without :u, :k or :h,
 * an event counts the kernel's side too where the kernel allows it (root,
 * CAP_PERFMON, perf_event_paranoid 1 or lower: context switches happen
 * there), else user space only. The events of a set are opened as one
 * group, scheduled and read together with one system call, where the
 * kernel allows (events of different PMUs make groups of their own); the
 * values come in the order given. A count the kernel multiplexed is scaled
 * by time_enabled / time_running (prof_counters_read_ext gives both).
 *
 * Where it differs from PAPI and libcpc:
 *  - No EventSet, no cpc_set_t, no PAPI_library_init: a set is made whole
 *    from event names, and the kernel is asked about them at once.
 *  - prof_counters_start does not zero the counts: a set stopped and
 *    started again goes on from where it stopped (PAPI_start zeroes them;
 *    call prof_counters_reset first for that). The counts run from the
 *    set's creation or its last reset.
 *  - prof_counters_accum reads and zeroes at the same instant: no event
 *    between the two is lost.
 *  - PROF_SCOPE_INHERIT and PROF_SCOPE_PROCESS follow perf's inherit: a
 *    thread created after the set is made joins the counts once it has
 *    exited (as with PAPI_INHERIT); libcpc reads inherited LWPs apart.
 *  - Overflow handlers need PROF_SCOPE_THREAD (the kernel signals an
 *    inherited counter's overflow to the thread that opened it, not to
 *    the one that overflowed), and a set made by prof_counters_attach or
 *    _cpu has none, as PAPI refuses overflow on attached EventSets.
 *  - An overflow handler is called from a signal of the library's (below),
 *    not SIGEMT (libcpc) or SIGRTMIN+2 (PAPI); counting goes on through
 *    the handler, where libcpc stops it until cpc_set_restart and PAPI
 *    disables the counter for the moment. A threshold is the period the
 *    kernel counts down, not a preset to compute.
 *  - PROF_OVERFLOW_FORCE_SW checks the count every millisecond of the
 *    thread's CPU time (a task-clock event), not every 10 ms of
 *    ITIMER_PROF as PAPI does, and calls once per threshold crossed.
 *  - prof_set_error_handler is cpc_seterrhndlr, with the function's name,
 *    a PROF_E* code and the one-line message rather than a subcode.
 *
 * Calls on a set may be made from any thread; prof_counters_free must not
 * overlap any other call on the set, its overflow handler's included.
 */
typedef struct prof_counters prof_counters;   /* opaque: events counted together, read as one group */

/* Scopes of prof_counters_create. */
#define PROF_SCOPE_THREAD   0   /* the calling thread only (cpc_bind_curlwp; a PAPI EventSet) */
#define PROF_SCOPE_INHERIT  1   /* and the threads it creates after start (CPC_BIND_LWP_INHERIT, PAPI_INHERIT) */
#define PROF_SCOPE_PROCESS  2   /* every thread of the process, running at start or created later */

typedef struct prof_count {
    long long value;          /* raw scaled by time_enabled / time_running when the kernel multiplexed */
    long long raw;
    uint64_t  time_enabled;   /* ns */
    uint64_t  time_running;   /* ns */
} prof_count;

/*
 * prof_counters_create: a set of `count` events (1 to 32) named in
 * `events`, stopped, counting as `scope` says:
 *   PROF_SCOPE_THREAD   the calling thread; the set's calls may be made
 *                       from any thread.
 *   PROF_SCOPE_INHERIT  the calling thread and the threads (and processes)
 *                       it creates after the set is made; their counts
 *                       join the set's once they have exited.
 *   PROF_SCOPE_PROCESS  every thread of the process: those running when
 *                       the set is made, counted live in every read, and
 *                       those created later, which join once they have
 *                       exited. The library's own thread is left out.
 * The kernel is asked now. Returns 0 and sets *out, or sets *out to NULL
 * (when out is not NULL) and returns
 *   PROF_EINVAL   out or events NULL, an events[i] NULL, count < 1 or above
 *                 32, an unknown scope, bad event syntax
 *   PROF_ENOEVNT  an unknown event (the message names the nearest one)
 *   PROF_EPERM    the kernel refuses to count it (the message says why and
 *                 what to change)
 *   PROF_ENOSUPP  the event cannot be counted here (no PMU, e.g. in a VM)
 *   PROF_ESYS     another system error (too many open files...)
 */
int  prof_counters_create(prof_counters **out, const char *const events[], int count, int scope);

/*
 * prof_counters_attach: every thread of process `pid` (cpc_bind_pctx):
 * those running now, live, and those they create later once exited.
 * Errors as prof_counters_create; PROF_EINVAL for a pid below 1 or no such
 * process; PROF_EPERM when the kernel refuses (another user's process
 * needs CAP_PERFMON or the right to trace it).
 */
int  prof_counters_attach(prof_counters **out, const char *const events[], int count, int pid);  /* every thread of another process (cpc_bind_pctx) */

/*
 * prof_counters_cpu: every task running on CPU `cpu` (cpc_bind_cpu).
 * Errors as prof_counters_create; PROF_EINVAL for a CPU that is not
 * online; PROF_EPERM below CAP_PERFMON or perf_event_paranoid 0.
 */
int  prof_counters_cpu(prof_counters **out, const char *const events[], int count, int cpu);     /* everything on one CPU (cpc_bind_cpu) */

/*
 * prof_counters_start: start counting, from the counts the set holds;
 * the overflow handler given with prof_overflow starts being called.
 * PROF_ESTATE if it is running; PROF_EINVAL for NULL.
 */
int  prof_counters_start(prof_counters *c);

/*
 * prof_counters_read: each event's count since the set was made or last
 * reset, scaled for multiplexing, in the order given; running or stopped.
 * `values` holds one element per event. Async-signal-safe. PROF_EINVAL for
 * NULL; PROF_ESYS if the kernel fails the read.
 */
int  prof_counters_read(prof_counters *c, long long values[]);      /* counts since start or the last reset; running or stopped */

/*
 * prof_counters_read_ext: as prof_counters_read, each count with its raw
 * value and the nanoseconds it was enabled and running since the last
 * reset. Async-signal-safe.
 */
int  prof_counters_read_ext(prof_counters *c, prof_count values[]);

/*
 * prof_counters_accum: values[i] += each event's count, and the counts
 * are set to 0, at one instant (PAPI_accum). PROF_EINVAL for NULL.
 */
int  prof_counters_accum(prof_counters *c, long long values[]);     /* values[i] += counts, then reset (PAPI_accum) */

/*
 * prof_counters_reset: every count to 0, running or stopped.
 * Async-signal-safe. PROF_EINVAL for NULL.
 */
int  prof_counters_reset(prof_counters *c);

/*
 * prof_counters_stop: stop counting, then read the counts into `values`
 * unless it is NULL. No overflow handler of the set runs once it returns.
 * PROF_ESTATE if the set is not running.
 */
int  prof_counters_stop(prof_counters *c, long long values[]);      /* values may be NULL */

/*
 * prof_counters_free: stop the set if it runs, close its counters and
 * free it. NULL is fine.
 */
void prof_counters_free(prof_counters *c);                          /* stops if running; NULL is fine */

/*
 * Overflow handlers (PAPI_overflow).
 *
 * The handler runs in the thread whose counter overflowed, from a signal
 * handler, so it may only do what a signal handler may: write to memory,
 * call prof_counters_read, _read_ext, _reset and the other async-signal-
 * safe functions. Its arguments:
 *   c                the set
 *   address          the program counter of the overflow: the kernel's
 *                    sample where it has one, else where the signal
 *                    interrupted the thread (PROF_OVERFLOW_FORCE_SW). An
 *                    event counting the kernel's side may overflow there
 *                    and give a kernel address; count with :u for user
 *                    space only.
 *   overflow_vector  bit i set for event i; several events may overflow
 *                    into one call
 *   context          the signal handler's ucontext_t *
 * Counting goes on across overflows and through the handler.
 *
 * The signal: the kernel sends it to the counted thread at each overflow
 * (each event's descriptor is set up with fcntl F_SETOWN_EX, F_OWNER_TID
 * and F_SETSIG, perf_event_open(2)'s way). It is SIGRTMIN+4 unless the
 * environment variable PROFILER_SIGNAL names another when the first
 * overflow is set up (PROFILER_SIGNAL=SIGRTMIN+6, or a number from
 * SIGRTMIN to SIGRTMAX). The library installs its handler then, with
 * SA_SIGINFO | SA_RESTART, and keeps the program's handler for that
 * signal: a signal that is not the library's goes on to it (one left at
 * SIG_DFL or SIG_IGN is dropped). A program that installs a handler for
 * the signal afterwards must chain to the library's, as it would to any
 * other. A thread that blocks the signal gets its calls when it unblocks
 * it.
 */
typedef void (*prof_overflow_handler)(prof_counters *c, void *address, uint64_t overflow_vector, void *context);

#define PROF_OVERFLOW_FORCE_SW  0x40   /* emulate: check the count every ms of the thread's CPU time */

/*
 * prof_overflow: call `handler` every `threshold` occurrences of event
 * `index` (its position in the set) while the set runs; 0 turns that
 * event's overflow off (handler may then be NULL). One handler per set:
 * the last given. flags is 0, or PROF_OVERFLOW_FORCE_SW to emulate the
 * overflow for an event the kernel counts but cannot sample (or on
 * request): the count is checked at least every millisecond of the
 * thread's CPU time and the handler called once per threshold crossed,
 * with the program counter the check interrupted. Call it while the set
 * is stopped. Returns
 *   PROF_EINVAL   c NULL, index outside the set, threshold < 0, unknown
 *                 flags, handler NULL with a threshold, a set not of
 *                 PROF_SCOPE_THREAD, PROFILER_SIGNAL not a real-time signal
 *   PROF_ESTATE   the set is running
 *   PROF_ENOSUPP  the kernel cannot sample the event (give
 *                 PROF_OVERFLOW_FORCE_SW)
 *   PROF_ESYS     another system error (mapping the event's ring buffer)
 */
int  prof_overflow(prof_counters *c, int index, long long threshold, int flags, prof_overflow_handler handler);

/*
 * prof_set_error_handler: `handler` is called with every error a function
 * of the library returns (cpc_seterrhndlr): the function's name, the
 * PROF_E* code and the one-line message prof_strerror would give, in the
 * failing thread, before the function returns. Not called from the
 * library's overflow handlers; a program that calls the async-signal-safe
 * functions from a signal handler of its own gets its error handler called
 * there too. NULL: none (the default).
 */
typedef void (*prof_error_handler)(const char *function, int code, const char *message);
void prof_set_error_handler(prof_error_handler handler);            /* cpc_seterrhndlr; NULL: none (the default) */

#ifdef __cplusplus
}
#endif

#endif /* PROFILER_H */
