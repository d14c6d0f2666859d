/* libcpc's first example, for libprofiler: what one iteration of a loop
 * costs, counted on the calling thread and read at any moment.
 *
 *   cc -O2 examples/counting.c -Iinclude -Ltarget/release -lprofiler -o counting */
#include <stdio.h>
#include <sys/mman.h>
#include <profiler.h>

#define ITERATIONS 100
#define PAGE 4096

int main(void)
{
    const char *events[] = {"task-clock", "page-faults", "context-switches"};
    long long before[3], after[3];
    prof_counters *c;
    int rc = prof_counters_create(&c, events, 3, PROF_SCOPE_THREAD);
    if (rc != PROF_OK) {
        fprintf(stderr, "%s\n", prof_strerror(rc));
        return 1;
    }
    prof_counters_start(c);
    for (int i = 0; i < ITERATIONS; i++) {
        prof_counters_read(c, before);
        /* Fresh pages: 64 faults. */
        volatile char *block = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (int page = 0; page < 64; page++)
            block[page * PAGE] = 1;
        munmap((void *)block, 64 * PAGE);
        prof_counters_read(c, after);
        if (i == ITERATIONS - 1)
            for (int e = 0; e < 3; e++)
                printf("%-16s %10lld per iteration\n", events[e], after[e] - before[e]);
    }
    prof_counters_stop(c, after);
    printf("%-16s %10lld in all\n", events[1], after[1]);
    prof_counters_free(c);
    return 0;
}
