/* PAPI's ctests/overflow.c, rewritten for libprofiler: count two events
 * over some work, then again with an overflow handler on the first, and
 * check that the handler ran once per threshold.
 *
 *   cc -O2 examples/overflow.c -Iinclude -Ltarget/release -lprofiler -o overflow */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <profiler.h>

#define THRESHOLD 1000000 /* task-clock: one overflow per ms of CPU time */
#define NUM_FLOPS 400000000L
#define OUT_FMT "%-12s : %16lld%16lld\n"

static atomic_int total; /* overflows so far */
static void *first_address[3];
static uint64_t first_vector[3];

/* A signal handler: it may only store, not print. */
static void handler(prof_counters *c, void *address, uint64_t overflow_vector, void *context)
{
    (void)c, (void)context;
    int n = atomic_fetch_add(&total, 1);
    if (n < 3)
        first_address[n] = address, first_vector[n] = overflow_vector;
}

__attribute__((noinline)) static double do_flops(long n)
{
    double c = 0.11, a = 0.5, b = 6.2;
    for (long i = 0; i < n; i++) {
        c += a * b;
        __asm__ volatile("" : "+x"(c));
    }
    return c;
}

static int fail(int rc, const char *call)
{
    fprintf(stderr, "%s: %s\n", call, prof_strerror(rc));
    return 1;
}

int main(void)
{
    /* User space only, as PAPI counts by default: the handler's addresses
     * are the program's own. */
    const char *events[] = {"task-clock:u", "page-faults:u"};
    long long values[2][2];
    prof_counters *set;
    int rc = prof_counters_create(&set, events, 2, PROF_SCOPE_THREAD);
    if (rc != PROF_OK)
        return fail(rc, "prof_counters_create");
    prof_counters_start(set);
    double result = do_flops(NUM_FLOPS);
    prof_counters_stop(set, values[0]);

    prof_counters_reset(set);
    if ((rc = prof_overflow(set, 0, THRESHOLD, 0, handler)) != PROF_OK)
        return fail(rc, "prof_overflow");
    prof_counters_start(set);
    result += do_flops(NUM_FLOPS);
    prof_counters_stop(set, values[1]);
    prof_overflow(set, 0, 0, 0, NULL);
    prof_counters_free(set);

    for (int i = 0; i < total && i < 3; i++)
        printf("handler(%d) Overflow at %p! bit=%#" PRIx64 "\n", i, first_address[i],
               first_vector[i]);
    printf("Test case: overflow dispatch of the 1st event in a set of 2 (%g).\n", result);
    printf("Threshold for overflow is: %d\n", THRESHOLD);
    printf("Test type    : %16d%16d\n", 1, 2);
    printf(OUT_FMT, events[0], values[0][0], values[1][0]);
    printf(OUT_FMT, events[1], values[0][1], values[1][1]);
    printf("Overflows    : %16s%16d\n", "", total);
    long long expected = values[1][0] / THRESHOLD;
    if (total < expected * 3 / 4 || total > expected * 5 / 4) {
        printf("FAILED: %d overflows where %lld were expected\n", total, expected);
        return 1;
    }
    printf("PASSED\n");
    return 0;
}
