/*
 * profiler.h: libprofiler, the profiler's in-process sampling for C, C++
 * and Fortran. PAPI_profil, PAPI_sprofil and libpfm's event encoding,
 * rebuilt on Linux perf_event_open.
 *
 *     cargo build --release
 *     cc prog.c -Iinclude -Ltarget/release -lprofiler
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
 * call on the same session. The buffers are written only inside prof_read
 * and prof_stop: read them after the call returns, in its thread or one
 * that synchronizes with it. A child made by fork() must not call any
 * function on its parent's sessions; it may leave them as they are.
 *
 * Errors: every function but prof_free and prof_strerror returns 0 or a
 * negative PROF_E* code. None aborts the program, installs a signal
 * handler, or lets a panic out (an internal error returns PROF_EBUG).
 * prof_strerror(code), called in the same thread, gives the one-line
 * message the profiler's command line would print for the call that
 * returned it: which argument or event, and what to do instead.
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
#define PROF_EINVAL     -1     /* an invalid argument: NULL, bufsiz, scale, threshold, flags, event syntax */
#define PROF_ESYS       -3     /* another system error (files, memory, threads) */
#define PROF_EBUG       -6     /* an internal error of the library; please report it */
#define PROF_ENOEVNT    -7     /* no such event (the message names the nearest one) */
#define PROF_ESTATE    -10     /* start while running, or stop while stopped */
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
 * date). PROF_ESYS if the session's thread failed (it is stopped then).
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
 * dropped. PROF_EINVAL for NULL.
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

#ifdef __cplusplus
}
#endif

#endif /* PROFILER_H */
